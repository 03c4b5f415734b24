#include "attune/sim/optimum.h"

#include <gtest/gtest.h>

namespace attune::sim {
namespace {

// A Megatron-LM launch script written for 80 GB H100s (TP4, full recompute),
// run on two H200 nodes.
const char* kScript = R"(#!/bin/bash
GPUS_PER_NODE=8
NUM_NODES=2
ARGS=(
    --num-layers 32
    --hidden-size 4096
    --ffn-hidden-size 14336
    --num-attention-heads 32
    --group-query-attention
    --num-query-groups 8
    --seq-length 8192
    --max-position-embeddings 8192
    --swiglu
    --untie-embeddings-and-output-weights
    --micro-batch-size 1
    --global-batch-size 128
    --train-iters 1000
    --lr 3e-4
    --bf16
    --tensor-model-parallel-size 4
    --sequence-parallel
    --use-distributed-optimizer
    --overlap-grad-reduce
    --make-vocab-size-divisible-by 128
    --recompute-granularity full
    --recompute-method uniform
    --recompute-num-layers 1
)
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py "${ARGS[@]}"
)";

recipe::Recipe script_recipe() {
  recipe::RecipeOptions o;
  o.framework = "megatron";
  o.model = "llama3-8b";
  o.hardware.gpu = "h200";
  o.hardware.nodes = 2;
  o.hardware.gpus_per_node = 8;
  return recipe::Recipe::from_text("pretrain_llama3_8b.sh", kScript, o);
}

TEST(Optimum, BeatsTheBaselineWithEditsTheGateApproves) {
  const recipe::Recipe r = script_recipe();
  const gate::CorrectnessGate gate;
  const Optimum o = find_optimum(r, gate);
  ASSERT_TRUE(o.baseline.ok) << o.baseline.error;
  EXPECT_GT(o.settings, 1000);
  ASSERT_FALSE(o.best.edits.empty());
  ASSERT_TRUE(o.best.recipe.has_value());
  EXPECT_GT(o.best.prediction.tokens_per_s_per_gpu, 1.05 * o.baseline.tokens_per_s_per_gpu);

  // The edited recipe is what the prediction describes, and the gate lets it run.
  EXPECT_TRUE(gate.check(r, *o.best.recipe).allowed);
  const Prediction again = predict(workload_from_recipe(*o.best.recipe));
  EXPECT_NEAR(again.tokens_per_s_per_gpu, o.best.prediction.tokens_per_s_per_gpu, 1e-6 * o.best.prediction.tokens_per_s_per_gpu);
  // What it trains did not move.
  const recipe::Plan before = r.plan(), after = o.best.recipe->plan();
  EXPECT_EQ(after.gbs, before.gbs);
  EXPECT_EQ(after.seq_len, before.seq_len);
  EXPECT_EQ(after.world, before.world);
  EXPECT_EQ(after.precision, before.precision);
  for (const auto& e : o.best.edits) {
    EXPECT_NE(e.from, e.to) << e.lever;
    EXPECT_FALSE(e.changes.empty()) << e.lever;
  }
  // Without a truth the prior is the truth: no regret, and greedy ran.
  ASSERT_TRUE(o.prior.has_value());
  EXPECT_DOUBLE_EQ(o.prior_regret, 0.0);
  ASSERT_TRUE(o.greedy.has_value());
  EXPECT_GT(o.greedy->trials, 10);
  EXPECT_LE(o.greedy->prediction.tokens_per_s_per_gpu, o.best.prediction.tokens_per_s_per_gpu * 1.001);
}

TEST(Optimum, JsonHasTheIssuesShape) {
  const gate::CorrectnessGate gate;
  const nlohmann::json j = to_json(find_optimum(script_recipe(), gate));
  ASSERT_TRUE(j.contains("optimum"));
  EXPECT_TRUE(j["optimum"]["tokens_per_s_per_gpu"].is_number());
  EXPECT_TRUE(j["optimum"]["edits"].is_array());
  EXPECT_TRUE(j["optimum"]["prediction"]["ok"].get<bool>());
  EXPECT_TRUE(j["prior_optimum"]["edits"].is_array());
  EXPECT_TRUE(j["prior_optimum"]["prior_tokens_per_s_per_gpu"].is_number());
  EXPECT_TRUE(j["prior_optimum"]["true_tokens_per_s_per_gpu"].is_number());
  EXPECT_TRUE(j["prior_regret"].is_number());
  EXPECT_TRUE(j["greedy"]["true_tokens_per_s_per_gpu"].is_number());
  EXPECT_TRUE(j["greedy"]["trials"].is_number_integer());
  EXPECT_TRUE(j["baseline"]["tokens_per_s_per_gpu"].is_number());
  EXPECT_GT(j["settings_searched"].get<long long>(), 0);
}

TEST(Optimum, Fp8IsProposedOnlyWhenAllowed) {
  const recipe::Recipe r = script_recipe();
  const Optimum plain = find_optimum(r, gate::CorrectnessGate{});
  for (const auto& e : plain.best.edits) EXPECT_NE(e.lever, "fp8");
  gate::GateOptions allow;
  allow.allow = {"fp8"};
  const Optimum fp8 = find_optimum(r, gate::CorrectnessGate{allow});
  bool proposed = false;
  for (const auto& e : fp8.best.edits) proposed |= e.lever == "fp8";
  EXPECT_TRUE(proposed);
  EXPECT_GT(fp8.best.prediction.tokens_per_s_per_gpu, plain.best.prediction.tokens_per_s_per_gpu);
}

TEST(Optimum, HiddenTruthChangesTheCeiling) {
  const recipe::Recipe r = script_recipe();
  Perturbation slow;
  slow.gemm = 0.7;
  const gate::CorrectnessGate gate;
  EXPECT_LT(find_optimum(r, gate, slow).best.prediction.tokens_per_s_per_gpu,
            find_optimum(r, gate).best.prediction.tokens_per_s_per_gpu);
}

// A truth that makes the prior's favourite lever fail: the prior's optimum
// scores nothing under it (regret 1), the true optimum avoids the lever.
TEST(Optimum, PriorRegretWhenTheTruthBreaksThePriorsPick) {
  const recipe::Recipe r = script_recipe();
  const gate::CorrectnessGate gate;
  const Optimum nominal = find_optimum(r, gate);
  ASSERT_FALSE(nominal.best.edits.empty());
  // Fail whatever TP the prior picked.
  Perturbation truth;
  const long long tp = nominal.best.workload.plan.tp;
  truth.failures.push_back({{Condition{Property::Tp, {{tp, tp}}}}, FailureKind::ImportError, 1, "ImportError: broken", "", 0});
  const Optimum o = find_optimum(r, gate, truth);
  ASSERT_TRUE(o.prior.has_value());
  EXPECT_EQ(o.prior->workload.plan.tp, tp);
  EXPECT_FALSE(o.prior_under_truth.ok);
  EXPECT_EQ(o.prior_under_truth.failure, "import_error");
  EXPECT_DOUBLE_EQ(o.prior_regret, 1.0);
  EXPECT_NE(o.best.workload.plan.tp, tp);
  EXPECT_TRUE(o.best.prediction.ok);
  EXPECT_EQ(to_json(o)["prior_optimum"]["true_failure"], "import_error");
}

// Greedy takes one lever per move: a landscape where two levers must move
// together (TP down only pays once recompute is off) leaves it short.
TEST(Optimum, GreedyTrialsCountEveryNeighbourItMeasured) {
  const recipe::Recipe r = script_recipe();
  const Optimum o = find_optimum(r, gate::CorrectnessGate{});
  ASSERT_TRUE(o.greedy.has_value());
  const SearchSpace space = gated_space(r, o.baseline_workload, gate::CorrectnessGate{});
  EXPECT_GE(o.greedy->trials, static_cast<int>(one_lever_moves(o.baseline_workload, o.baseline_workload, space).size()));
  EXPECT_GE(o.greedy->prediction.tokens_per_s_per_gpu, o.baseline.tokens_per_s_per_gpu);
}

}  // namespace
}  // namespace attune::sim
