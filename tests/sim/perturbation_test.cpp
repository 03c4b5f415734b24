#include "attune/sim/perturbation.h"

#include <gtest/gtest.h>

#include "attune/recipe/model_spec.h"
#include "attune/sim/step_model.h"
#include "attune/util/error.h"

namespace attune::sim {
namespace {

TEST(Perturbation, ReadsEveryFactor) {
  const Perturbation p = parse_perturbation("p.yaml", R"(
gemm: {h100: 0.95, B200: 0.85}
attention: 0.9
nvlink: 1.1
network: 0.7
alltoall: 0.8
memory: 1.05
levers: {tp_comm_overlap: 0.5, fp8: 0, recompute: 1.2}
memory_risk: 0.05
startup: 1.5
noise: {run_cv: 0.03, step_cv: 0.01, per_node_doubling_cv: 0.004, cross_node_cv: 0.05,
        slow_node: {probability: 0.02, slowdown: 1.1}, stragglers: {probability: 0.001, slowdown: 1.5},
        node_failure_per_node_hour: 0.002}
seed: 42
)");
  EXPECT_DOUBLE_EQ(p.gemm_for("h100"), 0.95);
  EXPECT_DOUBLE_EQ(p.gemm_for("b200"), 0.85);
  EXPECT_DOUBLE_EQ(p.gemm_for("h200"), 1.0);  // not named: nominal
  EXPECT_DOUBLE_EQ(p.attention, 0.9);
  EXPECT_DOUBLE_EQ(p.nvlink, 1.1);
  EXPECT_DOUBLE_EQ(p.network, 0.7);
  EXPECT_DOUBLE_EQ(p.alltoall, 0.8);
  EXPECT_DOUBLE_EQ(p.memory, 1.05);
  EXPECT_DOUBLE_EQ(p.tp_comm_overlap, 0.5);
  EXPECT_DOUBLE_EQ(p.fp8, 0.0);
  EXPECT_DOUBLE_EQ(p.recompute, 1.2);
  EXPECT_DOUBLE_EQ(p.memory_risk, 0.05);
  EXPECT_DOUBLE_EQ(p.startup, 1.5);
  EXPECT_DOUBLE_EQ(p.noise.run_cv, 0.03);
  EXPECT_DOUBLE_EQ(p.noise.step_cv, 0.01);
  EXPECT_DOUBLE_EQ(p.noise.per_node_doubling_cv, 0.004);
  EXPECT_DOUBLE_EQ(p.noise.cross_node_cv, 0.05);
  EXPECT_DOUBLE_EQ(p.noise.slow_node_probability, 0.02);
  EXPECT_DOUBLE_EQ(p.noise.slow_node_slowdown, 1.1);
  EXPECT_DOUBLE_EQ(p.noise.straggler_probability, 0.001);
  EXPECT_DOUBLE_EQ(p.noise.straggler_slowdown, 1.5);
  EXPECT_DOUBLE_EQ(p.noise.node_failure_per_node_hour, 0.002);
  EXPECT_EQ(p.seed, 42u);
}

TEST(Perturbation, EffectsAndFailuresWithTheirConditions) {
  const Perturbation p = parse_perturbation("p.yaml", R"(
effects:
  - {lever: cuda_graphs, value: layers, term: step, factor: 1.08, when: {dispatcher: [alltoall, deepep]}, why: "re-capture"}
  - {term: data, factor: 4, why: "slow file system"}
  - {lever: tp_comm_overlap, value: true, term: tp_hide, factor: 0.3, when: {tp: ">=4", nodes: "<2"}}
failures:
  - {lever: attention, value: flash3, kind: import_error, message: "ModuleNotFoundError: No module named 'flash_attn_3'"}
  - {lever: nccl_proto, value: ll128, kind: hang, at_step: 3, when: {nodes: ">1"}}
)");
  ASSERT_EQ(p.effects.size(), 3u);
  const Effect& graphs = p.effects[0];
  EXPECT_EQ(graphs.term, Term::Step);
  EXPECT_DOUBLE_EQ(graphs.factor, 1.08);
  EXPECT_EQ(graphs.why, "re-capture");
  EXPECT_EQ(graphs.line, 3);
  ASSERT_EQ(graphs.when.size(), 2u);
  EXPECT_EQ(graphs.when[0].property, property_of(Choice::CudaGraphs));  // lever/value is the first condition
  EXPECT_TRUE(graphs.when[0].holds(cuda_graphs::kLayers));
  EXPECT_FALSE(graphs.when[0].holds(cuda_graphs::kFull));
  EXPECT_TRUE(graphs.when[1].holds(dispatcher::kDeepEp));
  EXPECT_FALSE(graphs.when[1].holds(dispatcher::kAllGather));
  EXPECT_TRUE(p.effects[1].when.empty());
  const auto& tp = p.effects[2].when[1];
  EXPECT_EQ(tp.property, Property::Tp);
  EXPECT_FALSE(tp.holds(2));
  EXPECT_TRUE(tp.holds(8));
  EXPECT_TRUE(p.effects[2].when[2].holds(1));
  EXPECT_FALSE(p.effects[2].when[2].holds(2));
  ASSERT_EQ(p.failures.size(), 2u);
  EXPECT_EQ(p.failures[0].kind, FailureKind::ImportError);
  EXPECT_EQ(p.failures[0].message, "ModuleNotFoundError: No module named 'flash_attn_3'");
  EXPECT_EQ(p.failures[1].kind, FailureKind::Hang);
  EXPECT_EQ(p.failures[1].at_step, 3);
  EXPECT_EQ(to_json(p)["effects"].size(), 3u);
}

TEST(Perturbation, OneGemmFactorForEveryGpuAndAnEmptyFileIsNominal) {
  EXPECT_DOUBLE_EQ(parse_perturbation("p.yaml", "gemm: 0.8\n").gemm_for("b200"), 0.8);
  const Perturbation nominal = parse_perturbation("p.yaml", "# nothing\n");
  EXPECT_DOUBLE_EQ(nominal.gemm_for("h100"), 1.0);
  EXPECT_DOUBLE_EQ(nominal.network, 1.0);
  EXPECT_TRUE(nominal.effects.empty());
}

void expect_error(const std::string& text, const std::string& key, int line) {
  try {
    parse_perturbation("p.yaml", text);
    FAIL() << "accepted: " << text;
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), key) << e.what();
    EXPECT_EQ(e.where().line, line) << e.what();
    EXPECT_EQ(e.where().file, "p.yaml");
  }
}

TEST(Perturbation, BadInputNamesFileLineAndKey) {
  expect_error("gemm: 0.9\nnetwrok: 0.5\n", "netwrok", 2);
  expect_error("network: fast\n", "network", 1);
  expect_error("network: 0\n", "network", 1);        // a factor must be > 0
  expect_error("memory: 11\n", "memory", 1);         // and at most 10
  expect_error("gemm: {h900: 0.9}\n", "gemm.h900", 1);
  expect_error("levers: {warp_speed: 2}\n", "levers.warp_speed", 1);
  expect_error("levers: {fp8: -1}\n", "levers.fp8", 1);  // a lever that hurts is an effect
  expect_error("noise: {stragglers: {probability: 1.5}}\n", "noise.stragglers.probability", 1);
  expect_error("noise: {run_cv: 0.9}\n", "noise.run_cv", 1);
  expect_error("noise: {jitter: 0.1}\n", "noise.jitter", 1);
  expect_error("noise_cv: 0.02\n", "noise_cv", 1);   // the old key: now noise.run_cv
  expect_error("effects:\n  - {lever: cuda_graphs, value: sideways, term: step, factor: 2}\n", "effects[0].cuda_graphs", 2);
  expect_error("effects:\n  - {lever: warp, value: 1, term: step, factor: 2}\n", "effects[0].warp", 2);
  expect_error("effects:\n  - {lever: cuda_graphs, term: step, factor: 2}\n", "effects[0]", 2);
  expect_error("effects:\n  - {term: speed, factor: 2}\n", "effects[0].term", 2);
  expect_error("effects:\n  - {term: step}\n", "effects[0].factor", 2);
  expect_error("effects:\n  - {term: step, factor: 0}\n", "effects[0].factor", 2);
  expect_error("effects:\n  - {term: step, factor: 2, when: {tp: lots}}\n", "effects[0].when.tp", 2);
  expect_error("effects:\n  - {term: step, factor: 2, colour: red}\n", "effects[0].colour", 2);
  expect_error("failures:\n  - {lever: compile, value: \"on\", kind: explosion}\n", "failures[0].kind", 2);
  expect_error("failures:\n  - {lever: compile, value: \"on\"}\n", "failures[0].kind", 2);
  expect_error("effects: {term: step}\n", "effects", 1);
}

Workload llama3_8b(int nodes, int tp, const char* gpu = "h100") {
  Workload w;
  w.model = *recipe::find_model_preset("llama3-8b");
  auto& p = w.plan;
  p.gpu = gpu;
  p.nodes = nodes;
  p.gpus_per_node = 8;
  p.world = nodes * 8;
  p.tp = tp;
  p.dp = p.world / tp;
  p.mbs = 1;
  p.gbs = 256;
  p.seq_len = 8192;
  return w;
}

TEST(Perturbation, FactorsMoveTheirPartOfThePrediction) {
  const Workload w = llama3_8b(4, 2);
  const Prediction base = predict(w);
  ASSERT_TRUE(base.ok);

  Perturbation slow_gemm;
  slow_gemm.gemm_by_gpu["h100"] = 0.5;
  EXPECT_GT(predict(w, slow_gemm).breakdown.compute_s, 1.8 * base.breakdown.compute_s);

  Perturbation slow_attention;
  slow_attention.attention = 0.5;
  EXPECT_GT(predict(w, slow_attention).step_time_s, base.step_time_s);

  Perturbation slow_nvlink;
  slow_nvlink.nvlink = 0.25;
  EXPECT_GT(predict(w, slow_nvlink).breakdown.tp_comm_s, 3 * base.breakdown.tp_comm_s);

  // Another GPU type's factor changes nothing here.
  Perturbation other_gpu;
  other_gpu.gemm_by_gpu["b200"] = 0.5;
  EXPECT_DOUBLE_EQ(predict(w, other_gpu).step_time_s, base.step_time_s);
}

TEST(Perturbation, MemoryFactorCanTurnAFitIntoAnOom) {
  const Workload w = llama3_8b(1, 1, "h200");
  const Prediction base = predict(w);
  ASSERT_TRUE(base.ok) << base.error;
  Perturbation tight;
  tight.memory = 1.2 * base.hbm_gib / base.memory.total_gib;
  const Prediction p = predict(w, tight);
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(p.failure, "oom");
}

TEST(Perturbation, LeverEffectScalesTheModelledGain) {
  Workload w = llama3_8b(1, 4);
  w.knobs.set(Choice::TpCommOverlap, 1);
  w.knobs.set(Choice::MaxConnections, max_connections::k1);
  const Prediction with = predict(w);
  Perturbation none;
  none.tp_comm_overlap = 0;  // the overlap buys nothing on this cluster
  Workload without = w;
  without.knobs.set(Choice::TpCommOverlap, 0);
  EXPECT_GT(with.breakdown.tp_comm_s, 0);
  EXPECT_LT(with.breakdown.tp_comm_s, predict(without).breakdown.tp_comm_s);
  EXPECT_DOUBLE_EQ(predict(w, none).breakdown.tp_comm_s, predict(without).breakdown.tp_comm_s);

  w.knobs.recompute_granularity = "full";
  Perturbation costly;
  costly.recompute = 2;
  EXPECT_NEAR(predict(w, costly).breakdown.recompute_s, 2 * predict(w).breakdown.recompute_s, 1e-9);
}

}  // namespace
}  // namespace attune::sim

namespace attune::sim {
namespace {

// Signed effects: a lever the model says helps can hurt under the truth,
// and only in combination with another.
TEST(Perturbation, EffectsCanMakeALeverHurtInCombination) {
  Workload w = llama3_8b(1, 1);
  w.knobs.set(Choice::CudaGraphs, cuda_graphs::kLayers);
  Perturbation truth = parse_perturbation("t.yaml", R"(
effects:
  - {lever: cuda_graphs, value: layers, term: step, factor: 1.2, when: {compile: "on"}}
)");
  EXPECT_NEAR(predict(w, truth).step_time_s, 1.2 * predict(w).step_time_s, 1e-9);
  w.knobs.set(Choice::Compile, 0);
  EXPECT_NEAR(predict(w, truth).step_time_s, predict(w).step_time_s, 1e-9);
}

TEST(Perturbation, FailureRulesFailTheSettingTheyName) {
  Workload w = llama3_8b(1, 2);
  const Perturbation truth = parse_perturbation("t.yaml", R"(
failures:
  - {lever: attention, value: flash, kind: import_error, message: "ModuleNotFoundError: No module named 'flash_attn'"}
  - {lever: nccl_proto, value: simple, kind: hang, at_step: 4}
)");
  const Prediction base = predict(w, truth);
  EXPECT_TRUE(base.ok) << base.failure << ": " << base.error;
  w.knobs.set(Choice::Attention, attention::kFlash);
  Prediction p = predict(w, truth);
  EXPECT_EQ(p.failure, "import_error");
  EXPECT_EQ(p.error, "ModuleNotFoundError: No module named 'flash_attn'");
  EXPECT_EQ(p.fails_at_step, 0);
  w.knobs.set(Choice::Attention, attention::kFused);
  w.knobs.set(Choice::NcclProto, nccl_proto::kSimple);
  p = predict(w, truth);
  EXPECT_EQ(p.failure, "hang");
  EXPECT_EQ(p.fails_at_step, 4);
  EXPECT_GT(p.step_time_s, 0);  // a runtime failure still has its step time
}

}  // namespace
}  // namespace attune::sim
