// The correctness gate's engine on small fixtures: fail-closed unknown keys,
// opt-ins, invariants, aliases, site rules, vocab padding, approval.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "attune/gate/correctness_gate.h"
#include "attune/util/error.h"

namespace attune::gate {
namespace {

using recipe::Recipe;
using recipe::RecipeOptions;

const char* kScript = R"(#!/bin/bash
export CUDA_DEVICE_MAX_CONNECTIONS=1
NUM_NODES=2
ARGS=(
    --nproc_per_node 8
    --nnodes $NUM_NODES
)
TRAIN=(
    --num-layers 32
    --hidden-size 4096
    --num-attention-heads 32
    --num-query-groups 8
    --seq-length 4096
    --vocab-size 128256
    --micro-batch-size 1
    --global-batch-size 256
    --train-iters 1000
    --lr 3.0e-4
    --seed 1234
    --bf16
    --tensor-model-parallel-size 2
)
torchrun ${ARGS[@]} pretrain_gpt.py ${TRAIN[@]}
)";

Recipe base() { return Recipe::from_text("train.sh", kScript); }

Recipe edited(const std::string& key, const std::string& value) {
  Recipe r = base();
  r.document().set(key, recipe::Value::parse(value));
  return r;
}

bool has_rule(const Verdict& v, const std::string& rule) {
  for (const auto& r : v.reasons) {
    if (r.rule == rule) return true;
  }
  return false;
}

TEST(Gate, IdenticalRecipeIsAllowed) {
  Verdict v = CorrectnessGate().check(base(), base());
  EXPECT_TRUE(v.allowed);
  EXPECT_TRUE(v.changes.empty());
  EXPECT_FALSE(v.invariants.empty());
}

TEST(Gate, LearningRateChangeIsRefusedWithItsRule) {
  Verdict v = CorrectnessGate().check(base(), edited("--lr", "1e-3"));
  EXPECT_FALSE(v.allowed);
  EXPECT_TRUE(has_rule(v, "megatron.learning_rate"));
  ASSERT_EQ(v.changes.size(), 1u);
  EXPECT_EQ(v.changes[0].status, ChangeStatus::Refused);
}

TEST(Gate, EqualNumberWrittenDifferentlyIsNoChange) {
  Verdict v = CorrectnessGate().check(base(), edited("--lr", "0.0003"));
  EXPECT_TRUE(v.allowed);
  EXPECT_TRUE(v.changes.empty());
}

TEST(Gate, LeverEditThroughTheRecipeLayerIsAllowed) {
  Recipe cand = base();
  cand.set("tp", "1");
  Verdict v = CorrectnessGate().check(base(), cand);
  EXPECT_TRUE(v.allowed) << to_json(v).dump(2);
  ASSERT_EQ(v.changes.size(), 1u);
  EXPECT_EQ(v.changes[0].status, ChangeStatus::Lever);
  EXPECT_EQ(v.changes[0].lever, "tp");
}

TEST(Gate, RawMicroBatchChangeKeepsGbsButTokensSame) {
  // micro batch is a lever; GBS explicit: allowed.
  Verdict v = CorrectnessGate().check(base(), edited("--micro-batch-size", "2"));
  EXPECT_TRUE(v.allowed) << to_json(v).dump(2);
}

TEST(Gate, UnknownKeyFailsClosedUnlessAllowedOrParity) {
  Recipe cand = base();
  cand.document().set("--my-secret-knob", recipe::Value::parse("3"));
  Verdict refused = CorrectnessGate().check(base(), cand);
  EXPECT_FALSE(refused.allowed);
  EXPECT_TRUE(has_rule(refused, "unknown-key"));

  GateOptions allow_key;
  allow_key.allow_keys = {"--my-secret-knob"};
  EXPECT_TRUE(CorrectnessGate(allow_key).check(base(), cand).allowed);

  GateOptions parity;
  parity.unknown_keys_parity = true;
  Verdict p = CorrectnessGate(parity).check(base(), cand);
  EXPECT_TRUE(p.allowed);
  EXPECT_TRUE(p.requires_parity);
}

TEST(Gate, Fp8NeedsOptIn) {
  Recipe cand = base();
  cand.document().set("--fp8-format", recipe::Value::parse("hybrid"));
  Verdict v = CorrectnessGate().check(base(), cand);
  EXPECT_FALSE(v.allowed);
  GateOptions o;
  o.allow = {"fp8"};
  EXPECT_TRUE(CorrectnessGate(o).check(base(), cand).allowed);
}

TEST(Gate, UnknownOptInNameIsBadInput) {
  GateOptions o;
  o.allow = {"fp9"};
  EXPECT_THROW(CorrectnessGate{o}, InputError);
}

TEST(Gate, AliasSpellingIsTheSameKey) {
  std::string text = kScript;
  text.replace(text.find("--global-batch-size 256"), 23, "--global_batch_size 512");
  Recipe cand = Recipe::from_text("train.sh", text);
  Verdict v = CorrectnessGate().check(base(), cand);
  EXPECT_FALSE(v.allowed);
  EXPECT_TRUE(has_rule(v, "invariant.gbs"));
  ASSERT_EQ(v.changes.size(), 1u);
  EXPECT_EQ(v.changes[0].key, "--global-batch-size");
}

TEST(Gate, EnvironmentVariableThatChangesNumericsIsRefused) {
  Recipe cand = base();
  cand.document().set("env.NCCL_ALGO", recipe::Value::parse("Ring"));
  EXPECT_FALSE(CorrectnessGate().check(base(), cand).allowed);
  Recipe ok = base();
  ok.document().set("env.NCCL_NVLS_ENABLE", recipe::Value::parse("0"));
  EXPECT_TRUE(CorrectnessGate().check(base(), ok).allowed);
}

TEST(Gate, VocabPaddingChangeWithTp) {
  // 128256 is a multiple of 128*2 but not of 128*4.
  Recipe cand = base();
  cand.set("tp", "4");
  Verdict v = CorrectnessGate().check(base(), cand);
  EXPECT_FALSE(v.allowed);
  EXPECT_TRUE(has_rule(v, "vocab-padding"));
  GateOptions o;
  o.allow = {"vocab_padding"};
  EXPECT_TRUE(CorrectnessGate(o).check(base(), cand).allowed);
}

TEST(Gate, SiteRulesAddButCannotRedefine) {
  auto dir = std::filesystem::temp_directory_path() / "attune_gate_site";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "site.yaml") << "framework: megatron\nrules:\n  - id: site.no-gc\n    category: site\n"
                                      "    action: refuse\n    keys: [--manual-gc]\n    reason: site policy\n";
  std::ofstream(dir / "bad.yaml") << "framework: megatron\nrules:\n  - id: megatron.learning_rate\n"
                                     "    category: learning_rate\n    action: refuse\n    keys: [--x]\n    reason: r\n";
  std::ofstream(dir / "loose.yaml") << "framework: megatron\nrules:\n  - id: site.loose\n    category: x\n"
                                       "    action: invariant\n    keys: [--lr]\n    reason: r\n";
  Recipe cand = base();
  cand.document().set("--manual-gc", recipe::Value::boolean(true));
  EXPECT_TRUE(CorrectnessGate().check(base(), cand).allowed);
  GateOptions site;
  site.rule_files = {(dir / "site.yaml").string()};
  Verdict v = CorrectnessGate(site).check(base(), cand);
  EXPECT_TRUE(has_rule(v, "site.no-gc"));
  GateOptions bad;
  bad.rule_files = {(dir / "bad.yaml").string()};
  EXPECT_THROW(CorrectnessGate{bad}, InputError);
  GateOptions loose;
  loose.rule_files = {(dir / "loose.yaml").string()};
  EXPECT_THROW(CorrectnessGate{loose}, InputError);
  std::filesystem::remove_all(dir);
}

TEST(Gate, ApproveGivesApprovedRecipeOrThrows) {
  CorrectnessGate gate;
  ApprovedRecipe a = gate.approve(base(), base());
  EXPECT_TRUE(a.verdict().allowed);
  EXPECT_EQ(a.recipe().plan().gbs, 256);
  EXPECT_THROW(gate.approve(base(), edited("--seed", "1")), GateRefusal);
}

TEST(Gate, DifferentFrameworksAreBadInput) {
  Recipe toml = Recipe::from_text("t.toml", "[training]\nlocal_batch_size = 1\nseq_len = 4096\n");
  EXPECT_THROW(CorrectnessGate().check(base(), toml), InputError);
}

}  // namespace
}  // namespace attune::gate
