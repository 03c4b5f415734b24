#include <gtest/gtest.h>

#include "attune/recipe/recipe.h"
#include "attune/util/error.h"
#include "recipe_test_util.h"

namespace attune::recipe {
namespace {

using testing::changed_lines;

const char* kScript = R"(#!/bin/bash
export CUDA_DEVICE_MAX_CONNECTIONS=1
GPUS_PER_NODE=8
NUM_NODES=1
TP=2
GBS=256

DISTRIBUTED_ARGS=(
    --nproc_per_node $GPUS_PER_NODE
    --nnodes $NUM_NODES
)
MODEL_ARGS=(
    --num-layers 32
    --hidden-size 4096
    --num-attention-heads 32
    --num-query-groups 8
    --seq-length 4096
)
TRAINING_ARGS=(
    --micro-batch-size 1
    --global-batch-size $GBS
    --bf16
)
PARALLEL_ARGS=(
    --tensor-model-parallel-size $TP
    --sequence-parallel
)
torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py ${MODEL_ARGS[@]} ${TRAINING_ARGS[@]} ${PARALLEL_ARGS[@]}
)";

Recipe load(const std::string& text, RecipeOptions opts = {}) { return Recipe::from_text("train.sh", text, opts); }

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(MegatronRecipe, PlanFromScript) {
  Recipe r = load(kScript);
  EXPECT_EQ(r.framework(), Framework::Megatron);
  EXPECT_EQ(r.dialect(), "script");
  Plan p = r.plan();
  EXPECT_EQ(p.world, 8);
  EXPECT_EQ(p.world_source, "file");
  EXPECT_EQ(p.tp, 2);
  EXPECT_EQ(p.dp, 4);
  EXPECT_EQ(p.gbs, 256);
  EXPECT_EQ(p.grad_accum, 64);  // 256 / (1 * 4)
  EXPECT_EQ(p.seq_len, 4096);
  EXPECT_EQ(p.tokens_per_step, 256 * 4096);
  EXPECT_EQ(p.precision, "bf16");
  EXPECT_EQ(p.recompute, "none");
  EXPECT_TRUE(r.violations().empty());
}

TEST(MegatronRecipe, SetTpEditsOnlyTheVariableLine) {
  Recipe r = load(kScript);
  std::string before = r.document().text();
  EditResult e = r.set("tp", "4");
  EXPECT_EQ(changed_lines(before, r.document().text()), std::vector<std::string>{"TP=4"});
  EXPECT_TRUE(e.follow_ups.empty());
  EXPECT_EQ(e.after.dp, 2);
  EXPECT_EQ(e.after.grad_accum, 128);
  EXPECT_EQ(e.after.gbs, 256);
}

TEST(MegatronRecipe, RawFlagKeyIsTheSameLever) {
  Recipe r = load(kScript);
  EditResult e = r.set("--micro-batch-size", "2");
  EXPECT_EQ(e.lever, "mbs");
  EXPECT_EQ(e.after.grad_accum, 32);
}

TEST(MegatronRecipe, ImpliedGlobalBatchIsPinnedWhenDpChanges) {
  std::string text = replaced(kScript, "    --global-batch-size $GBS\n", "");
  Recipe r = load(text);
  EXPECT_EQ(r.plan().gbs, 4);  // mbs 1 * dp 4
  EditResult e = r.set("tp", "4");
  ASSERT_EQ(e.follow_ups.size(), 1u);
  EXPECT_EQ(e.follow_ups[0].key, "--global-batch-size");
  EXPECT_EQ(e.follow_ups[0].new_value->text, "4");
  EXPECT_EQ(e.after.dp, 2);
  EXPECT_EQ(e.after.gbs, 4);
  EXPECT_EQ(e.after.grad_accum, 2);
  // The other way the pinned batch cannot be kept: 4 samples over 8 replicas.
  Recipe again = load(text);
  EXPECT_THROW(again.set("tp", "1"), InputError);
}

TEST(MegatronRecipe, BrokenHeadsRuleIsRefusedAndLeavesTheRecipe) {
  Recipe r = load(kScript);
  std::string before = r.document().text();
  try {
    r.set("tp", "3");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("heads"), std::string::npos) << e.what();
  }
  EXPECT_EQ(r.document().text(), before);
}

TEST(MegatronRecipe, GlobalBatchNotDivisibleIsRefused) {
  Recipe r = load(kScript);
  EXPECT_THROW(r.set("mbs", "3"), InputError);  // 256 % (3*4) != 0
}

TEST(MegatronRecipe, UnknownLeverAndBadValue) {
  Recipe r = load(kScript);
  EXPECT_THROW(r.set("tpp", "2"), InputError);
  EXPECT_THROW(r.set("tp", "two"), InputError);
  EXPECT_THROW(r.set("tp", "0"), InputError);
  EXPECT_THROW(r.set("recompute", "sometimes"), InputError);
}

TEST(MegatronRecipe, RecomputeFullAddsMethodAndLayers) {
  Recipe r = load(kScript);
  EditResult e = r.set("recompute", "full");
  EXPECT_EQ(e.after.recompute, "full");
  ASSERT_TRUE(r.document().find("--recompute-method"));
  EXPECT_EQ(r.document().find("--recompute-method")->value.text, "uniform");
  EXPECT_EQ(r.document().find("--recompute-num-layers")->value.text, "1");
  r.set("recompute", "none");
  EXPECT_FALSE(r.document().find("--recompute-granularity"));
  EXPECT_FALSE(r.document().find("--recompute-method"));
  EXPECT_EQ(r.plan().recompute, "none");
}

TEST(MegatronRecipe, NodesFlagOverridesFileWorld) {
  RecipeOptions o;
  o.hardware.nodes = 2;
  Recipe r = load(kScript, o);
  EXPECT_EQ(r.plan().world, 16);
  EXPECT_EQ(r.plan().world_source, "flags");
  EXPECT_EQ(r.plan().dp, 8);
}

TEST(MegatronRecipe, ModelFromFlagEnforcesArchitectureRules) {
  RecipeOptions o;
  o.model = "llama3-8b";
  Recipe r = load(kScript, o);
  ASSERT_TRUE(r.model());
  EXPECT_EQ(r.model()->layers, 32);
  EXPECT_THROW(r.set("pp", "3"), InputError);  // 32 layers % 3
}

TEST(MegatronRecipe, CudaDeviceMaxConnectionsRule) {
  std::string text = replaced(kScript, "CUDA_DEVICE_MAX_CONNECTIONS=1", "CUDA_DEVICE_MAX_CONNECTIONS=8");
  RecipeOptions o;
  o.hardware.gpu = "h100";
  Recipe r = load(text, o);
  auto v = r.violations();
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v[0].rule, "cuda-device-max-connections");
  EXPECT_EQ(v[0].key, "env.CUDA_DEVICE_MAX_CONNECTIONS");
}

TEST(MegatronRecipe, YamlModelArgsDialect) {
  const char* yaml = R"(ENV_VARS:
  CUDA_DEVICE_MAX_CONNECTIONS: 1
MODEL_ARGS:
  --tensor-model-parallel-size: 2
  --pipeline-model-parallel-size: 2
  --micro-batch-size: 1
  --global-batch-size: 64
  --num-layers: 32
  --num-attention-heads: 32
  --seq-length: 4096
  --bf16: true
)";
  RecipeOptions o;
  o.hardware.nodes = 2;
  Recipe r = Recipe::from_text("model_config.yaml", yaml, o);
  EXPECT_EQ(r.dialect(), "yaml");
  Plan p = r.plan();
  EXPECT_EQ(p.dp, 4);
  EXPECT_EQ(p.grad_accum, 16);
  std::string before = r.document().text();
  r.set("pp", "1");
  EXPECT_EQ(changed_lines(before, r.document().text()),
            std::vector<std::string>{"  --pipeline-model-parallel-size: 1"});
  EXPECT_EQ(r.key_of("tp"), "MODEL_ARGS.--tensor-model-parallel-size");
}

TEST(MegatronRecipe, AssumedWorldIsSmallestValid) {
  std::string text = replaced(kScript, "    --nproc_per_node $GPUS_PER_NODE\n    --nnodes $NUM_NODES\n", "");
  Recipe r = load(text);
  Plan p = r.plan();
  EXPECT_EQ(p.world_source, "assumed");
  EXPECT_EQ(p.world, 8);
  // The assumed world stays fixed through an edit: TP 8 leaves DP 1.
  EditResult e = r.set("tp", "8");
  EXPECT_EQ(e.after.world, 8);
  EXPECT_EQ(e.after.dp, 1);
}

// Llama 3's 128256 tokens padded to a multiple of make_vocab_size_divisible_by x TP:
// 128512 at TP 4 / 128, 128256 at TP 1 or 2 / 128.
std::string vocab_script(const std::string& tp, const std::string& divisor_flag) {
  std::string text = replaced(kScript, "TP=2", "TP=" + tp);
  return replaced(text, "    --seq-length 4096\n", "    --seq-length 4096\n    --vocab-size 128256\n" + divisor_flag);
}

TEST(MegatronRecipe, TpChangeScalesTheVocabDivisorToKeepThePaddedVocabulary) {
  Recipe r = load(vocab_script("4", ""));
  EditResult e = r.set("tp", "1");
  ASSERT_EQ(e.follow_ups.size(), 1u);
  const Change& c = e.follow_ups[0];
  EXPECT_EQ(c.key, "--make-vocab-size-divisible-by");
  EXPECT_FALSE(c.old_value.has_value());
  EXPECT_EQ(c.new_value->text, "512");
  EXPECT_NE(c.why.find("keeps the padded vocabulary 128512"), std::string::npos) << c.why;
  EXPECT_NE(c.why.find("make_vocab_size_divisible_by x TP"), std::string::npos) << c.why;
  EXPECT_EQ(r.find_named("make_vocab_size_divisible_by")->value.text, "512");
  EXPECT_EQ(e.after.tp, 1);
  EXPECT_EQ(e.after.gbs, 256);
}

TEST(MegatronRecipe, TpChangeEditsAnExistingVocabDivisorInPlace) {
  Recipe r = load(vocab_script("4", "    --make-vocab-size-divisible-by 128\n"));
  std::string before = r.document().text();
  EditResult e = r.set("tp", "2");
  ASSERT_EQ(e.follow_ups.size(), 1u);
  EXPECT_EQ(e.follow_ups[0].old_value->text, "128");
  EXPECT_EQ(e.follow_ups[0].new_value->text, "256");
  EXPECT_EQ(changed_lines(before, r.document().text()),
            (std::vector<std::string>{"TP=2", "    --make-vocab-size-divisible-by 256"}));
}

TEST(MegatronRecipe, VocabDivisorIsLeftWhenThePaddingIsKeptOrUnknownOrFractional) {
  // TP 2 -> 1 keeps 128256 with the default divisor: nothing to follow.
  Recipe same = load(vocab_script("2", ""));
  EXPECT_TRUE(same.set("tp", "1").follow_ups.empty());
  // No vocabulary size (no --vocab-size, no model): no follow-up.
  Recipe unknown = load(replaced(kScript, "TP=2", "TP=4"));
  EXPECT_TRUE(unknown.set("tp", "1").follow_ups.empty());
  // 100 x 1 / 8 is not a whole number: the divisor stays (the gate refuses the edit).
  Recipe fractional = load(vocab_script("1", "    --make-vocab-size-divisible-by 100\n"));
  EditResult e = fractional.set("tp", "8");
  EXPECT_TRUE(e.follow_ups.empty());
  EXPECT_EQ(fractional.find_named("make_vocab_size_divisible_by")->value.text, "100");
  // The model preset supplies the vocabulary when the script does not state it.
  RecipeOptions o;
  o.model = "llama3-8b";
  Recipe preset = load(replaced(kScript, "TP=2", "TP=4"), o);
  EditResult p = preset.set("tp", "8");
  ASSERT_EQ(p.follow_ups.size(), 1u);
  EXPECT_EQ(p.follow_ups[0].new_value->text, "64");
}

}  // namespace
}  // namespace attune::recipe
