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
  // 128256 is a multiple of 128*2 but not of 128*4: a raw TP edit pads it to 128512.
  Recipe cand = edited("--tensor-model-parallel-size", "4");
  Verdict v = CorrectnessGate().check(base(), cand);
  EXPECT_FALSE(v.allowed);
  EXPECT_TRUE(has_rule(v, "vocab-padding"));
  GateOptions o;
  o.allow = {"vocab_padding"};
  EXPECT_TRUE(CorrectnessGate(o).check(base(), cand).allowed);
}

// Llama 3's 128256 tokens at TP 4 with the default divisor 128: padded to 128512.
Recipe tp4(const std::string& divisor = "128") {
  Recipe r = base();
  r.document().set("--tensor-model-parallel-size", recipe::Value::integer(4));
  r.document().set("--make-vocab-size-divisible-by", recipe::Value::parse(divisor));
  return r;
}

Recipe tp4_edited(const std::string& tp, const std::string& divisor) {
  Recipe r = tp4();
  r.document().set("--tensor-model-parallel-size", recipe::Value::parse(tp));
  r.document().set("--make-vocab-size-divisible-by", recipe::Value::parse(divisor));
  return r;
}

const KeyChange* change_of(const Verdict& v, const std::string& key) {
  for (const auto& c : v.changes) {
    if (c.key == key) return &c;
  }
  return nullptr;
}

std::pair<std::string, std::string> invariant_of(const Verdict& v, const std::string& name) {
  for (const auto& [n, ba] : v.invariants) {
    if (n == name) return ba;
  }
  return {};
}

TEST(Gate, TpChangeThatScalesTheVocabDivisorKeepsThePaddedVocabulary) {
  // TP 4 / 128 -> TP 1 / 512: still a multiple of 512, still 128512.
  Verdict v = CorrectnessGate().check(tp4(), tp4_edited("1", "512"));
  EXPECT_TRUE(v.allowed) << (v.reasons.empty() ? "" : v.reasons[0].message);
  const KeyChange* c = change_of(v, "--make-vocab-size-divisible-by");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, ChangeStatus::FollowUp);
  EXPECT_EQ(c->rule, "megatron.vocab_divisor");
  EXPECT_EQ(invariant_of(v, "padded_vocab"), std::make_pair(std::string("128512"), std::string("128512")));
  // TP 2 / 256 and TP 8 / 64 keep it too.
  EXPECT_TRUE(CorrectnessGate().check(tp4(), tp4_edited("2", "256")).allowed);
  EXPECT_TRUE(CorrectnessGate().check(tp4(), tp4_edited("8", "64")).allowed);
}

TEST(Gate, TpChangeWithTheDivisorUnchangedIsRefused) {
  // TP 4 / 128 -> TP 1 / 128: 128512 -> 128256.
  Recipe cand = tp4();
  cand.document().set("--tensor-model-parallel-size", recipe::Value::integer(1));
  Verdict v = CorrectnessGate().check(tp4(), cand);
  EXPECT_FALSE(v.allowed);
  ASSERT_TRUE(has_rule(v, "vocab-padding"));
  EXPECT_NE(v.reasons[0].message.find("128512 -> 128256"), std::string::npos) << v.reasons[0].message;
  GateOptions o;
  o.allow = {"vocab_padding"};
  EXPECT_TRUE(CorrectnessGate(o).check(tp4(), cand).allowed);
}

TEST(Gate, DivisorChangeThatChangesThePaddedVocabularyIsRefused) {
  GateOptions opt_in;
  opt_in.allow = {"vocab_padding"};
  // TP 4 / 128 -> TP 1 / 256: multiple of 256, 128256.
  for (const Recipe& cand : {tp4_edited("1", "256"), tp4_edited("4", "256")}) {
    for (const GateOptions& o : {GateOptions{}, opt_in}) {
      Verdict v = CorrectnessGate(o).check(tp4(), cand);
      EXPECT_FALSE(v.allowed);
      ASSERT_TRUE(has_rule(v, "vocab-padding"));
      const RefusalReason& r = v.reasons[0];
      EXPECT_EQ(r.key, "--make-vocab-size-divisible-by");
      EXPECT_NE(r.message.find("128512 -> "), std::string::npos) << r.message;
      EXPECT_NE(r.message.find("make_vocab_size_divisible_by 128 -> 256"), std::string::npos) << r.message;
    }
  }
  // TP 4 / 256 pads to 129024: both padded sizes are named.
  Verdict v = CorrectnessGate().check(tp4(), tp4_edited("4", "256"));
  EXPECT_NE(v.reasons[0].message.find("128512 -> 129024"), std::string::npos) << v.reasons[0].message;
}

TEST(Gate, DivisorChangeWithoutTpChangeThatKeepsThePaddedVocabularyIsAllowed) {
  // TP 2: 128256 is a multiple of 128 x 2 and of 64 x 2.
  Verdict v = CorrectnessGate().check(base(), edited("--make-vocab-size-divisible-by", "64"));
  EXPECT_TRUE(v.allowed) << (v.reasons.empty() ? "" : v.reasons[0].message);
  EXPECT_EQ(invariant_of(v, "padded_vocab"), std::make_pair(std::string("128256"), std::string("128256")));
  // Stating the default explicitly, or dropping an explicit default, keeps it as well.
  EXPECT_TRUE(CorrectnessGate().check(base(), edited("--make-vocab-size-divisible-by", "128")).allowed);
  Recipe dropped = tp4();
  dropped.document().remove("--make-vocab-size-divisible-by");
  EXPECT_TRUE(CorrectnessGate().check(tp4(), dropped).allowed);
  // 100 x 2 = 200 pads 128256 to 128400: refused.
  EXPECT_FALSE(CorrectnessGate().check(base(), edited("--make-vocab-size-divisible-by", "100")).allowed);
}

TEST(Gate, DivisorChangeThatCannotBeCheckedIsRefused) {
  // Without a vocabulary size a divisor change is refused unless divisor x TP stays the same.
  std::string text = kScript;
  const std::string line = "    --vocab-size 128256\n";
  text.replace(text.find(line), line.size(), "");
  Recipe bare = Recipe::from_text("train.sh", text);
  Recipe cand = bare;
  cand.document().set("--make-vocab-size-divisible-by", recipe::Value::integer(256));
  Verdict v = CorrectnessGate().check(bare, cand);
  EXPECT_FALSE(v.allowed);
  EXPECT_TRUE(has_rule(v, "vocab-padding"));
  Recipe scaled = bare;
  scaled.document().set("--tensor-model-parallel-size", recipe::Value::integer(1));
  scaled.document().set("--make-vocab-size-divisible-by", recipe::Value::integer(256));
  EXPECT_TRUE(CorrectnessGate().check(bare, scaled).allowed);
}

TEST(Gate, TpLeverEditWithItsDivisorFollowUpPassesTheGate) {
  // The recipe layer scales the divisor (128 x 4 / 1 = 512) and the gate accepts the result.
  Recipe cand = tp4();
  recipe::EditResult e = cand.set("tp", "1");
  ASSERT_EQ(e.follow_ups.size(), 1u);
  EXPECT_EQ(e.follow_ups[0].new_value->text, "512");
  Verdict v = CorrectnessGate().check(tp4(), cand);
  EXPECT_TRUE(v.allowed) << (v.reasons.empty() ? "" : v.reasons[0].message);
  // Without a divisor in the file it is added.
  Recipe no_flag = base();
  no_flag.document().set("--tensor-model-parallel-size", recipe::Value::integer(4));
  Recipe edited_no_flag = no_flag;
  recipe::EditResult f = edited_no_flag.set("tp", "1");
  ASSERT_EQ(f.follow_ups.size(), 1u);
  EXPECT_EQ(f.follow_ups[0].key, "--make-vocab-size-divisible-by");
  EXPECT_TRUE(CorrectnessGate().check(no_flag, edited_no_flag).allowed);
  // TP 2 -> 4 on the base: 128 x 2 / 4 = 64.
  Recipe up = base();
  up.set("tp", "4");
  EXPECT_TRUE(CorrectnessGate().check(base(), up).allowed);
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
