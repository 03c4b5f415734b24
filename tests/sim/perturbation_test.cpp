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
noise_cv: 0.03
stragglers: {probability: 0.02, slowdown: 1.5}
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
  EXPECT_DOUBLE_EQ(p.noise_cv, 0.03);
  EXPECT_DOUBLE_EQ(p.straggler_probability, 0.02);
  EXPECT_DOUBLE_EQ(p.straggler_slowdown, 1.5);
}

TEST(Perturbation, OneGemmFactorForEveryGpuAndAnEmptyFileIsNominal) {
  EXPECT_DOUBLE_EQ(parse_perturbation("p.yaml", "gemm: 0.8\n").gemm_for("b200"), 0.8);
  const Perturbation nominal = parse_perturbation("p.yaml", "# nothing\n");
  EXPECT_DOUBLE_EQ(nominal.gemm_for("h100"), 1.0);
  EXPECT_DOUBLE_EQ(nominal.network, 1.0);
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
  expect_error("stragglers: {probability: 1.5}\n", "stragglers.probability", 1);
  expect_error("noise_cv: 0.9\n", "noise_cv", 1);
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
  w.knobs.tp_comm_overlap = true;
  const Prediction with = predict(w);
  Perturbation none;
  none.tp_comm_overlap = 0;  // the overlap buys nothing on this cluster
  Workload without = w;
  without.knobs.tp_comm_overlap = false;
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
