// The gate on what it cannot read exactly: a change of a value only the run
// knows is refused whatever the key; a number computed from such a value is
// kept only when nothing it is computed from changed; and a candidate whose
// layout the framework would reject at start up is refused here, not on the
// cluster.
#include <gtest/gtest.h>

#include <string>

#include "attune/gate/correctness_gate.h"
#include "../fixtures/scratch_dir.h"

namespace attune::gate {
namespace {

std::string script(const std::string& tp, const std::string& mbs, const std::string& gbs) {
  return "#!/bin/bash\nTP=" + tp + "\nMBS=" + mbs + "\nGBS=" + gbs + R"(
ARGS=(
    --num-layers 32
    --hidden-size 4096
    --num-attention-heads 32
    --seq-length 4096
    --max-position-embeddings 4096
    --micro-batch-size ${MBS}
    --global-batch-size ${GBS}
    --train-iters 1000
    --lr 3e-4
    --bf16
    --tensor-model-parallel-size ${TP}
)
torchrun --nproc_per_node 8 pretrain_gpt.py "${ARGS[@]}"
)";
}

recipe::Recipe load(const std::string& text) {
  recipe::RecipeOptions o;
  o.model = "llama3-8b";
  o.hardware = {"h100", 1, 8};
  return recipe::Recipe::from_text("pretrain.sh", text, o);
}

bool refused_by(const Verdict& v, const std::string& rule_part) {
  for (const auto& r : v.reasons) {
    if (r.rule.find(rule_part) != std::string::npos) return true;
  }
  return false;
}

TEST(FailClosedGate, AChangeOfAValueOnlyTheRunKnowsIsRefused) {
  Verdict v = CorrectnessGate().check(load(script("$(nproc)", "1", "128")), load(script("4", "1", "128")));
  EXPECT_FALSE(v.allowed);
  EXPECT_TRUE(refused_by(v, "runtime_value"));
  // The other way round too: a literal replaced by what the environment says.
  Verdict back = CorrectnessGate().check(load(script("2", "1", "128")), load(script("$TP_FROM_ENV", "1", "128")));
  EXPECT_FALSE(back.allowed);
}

// With TP unknown, DP and so the grad accumulation an MBS edit leaves are
// unknown: whether the new layout starts cannot be checked.
TEST(FailClosedGate, ALayoutEditBesideAnUnknownIsRefused) {
  Verdict v = CorrectnessGate().check(load(script("$(nproc)", "1", "128")), load(script("$(nproc)", "2", "128")));
  EXPECT_FALSE(v.allowed);
  EXPECT_TRUE(refused_by(v, "validity.unknown-layout"));
}

TEST(FailClosedGate, ANumberComputedFromAnUnknownIsKeptOnlyWhenNothingItIsComputedFromChanged) {
  // GBS from the environment: the global batch is unknown; an MBS edit changes
  // how it splits into micro-batches (and in the framework, GA), so it is refused.
  Verdict mbs = CorrectnessGate().check(load(script("2", "1", "$GLOBAL")), load(script("2", "2", "$GLOBAL")));
  EXPECT_FALSE(mbs.allowed);
  EXPECT_TRUE(refused_by(mbs, "invariant.gbs"));
  // A throughput flag that touches no part of the batch is still allowed.
  std::string with_flag = script("2", "1", "$GLOBAL");
  with_flag.replace(with_flag.find("    --bf16\n"), 11, "    --bf16\n    --overlap-grad-reduce\n");
  Verdict other = CorrectnessGate().check(load(script("2", "1", "$GLOBAL")), load(with_flag));
  EXPECT_FALSE(refused_by(other, "invariant.")) << (other.reasons.empty() ? "" : other.reasons[0].message);
}

TEST(FailClosedGate, ACandidateThatBreaksAValidityRuleIsRefusedByTheGate) {
  // MBS 3 with GBS 128 on DP 4: grad accumulation 128/12 is not a whole number.
  Verdict v = CorrectnessGate().check(load(script("2", "1", "128")), load(script("2", "3", "128")));
  EXPECT_FALSE(v.allowed);
  EXPECT_TRUE(refused_by(v, "validity.gbs-divisible"));
  // A valid one is not.
  EXPECT_TRUE(CorrectnessGate().check(load(script("2", "1", "128")), load(script("2", "2", "128"))).allowed);
}

// `${TP:=2}` in a flag also assigns TP for every later read: an edit of it
// changes what those reads get, which no setting shows.
TEST(FailClosedGate, AnEditOfADefaultAssignmentInsideAFlagIsRefused) {
  auto with = [](const std::string& tp) {
    std::string text = script("2", "1", "128");
    text.replace(text.find("--tensor-model-parallel-size ${TP}"), 34, "--tensor-model-parallel-size ${TP:=" + tp + "}");
    return load(text);
  };
  Verdict v = CorrectnessGate().check(with("2"), with("4"));
  EXPECT_FALSE(v.allowed);
  EXPECT_TRUE(refused_by(v, "unattributed_change"));
}

// A line break inserted into the launch line leaves every value as it was,
// but the flags after it are no longer passed to the program.
TEST(FailClosedGate, ALineBreakThatSplitsTheLaunchCommandIsRefused) {
  std::string a = script("2", "1", "128");
  a.replace(a.find("\"${ARGS[@]}\""), 12, "\"${ARGS[@]}\" --log-interval 1");
  std::string b = a;
  b.replace(b.find(" --log-interval 1"), 17, "\n--log-interval 1");
  Verdict v = CorrectnessGate().check(load(a), load(b));
  EXPECT_FALSE(v.allowed);
  EXPECT_TRUE(refused_by(v, "unattributed_change"));
}

// Under a batch schedule the schedule is the global batch: a micro-batch edit
// that keeps every phase divisible keeps it; one that does not is refused.
TEST(FailClosedGate, AMicroBatchEditUnderABatchScheduleIsJudgedByEveryPhase) {
  auto with_schedule = [](const std::string& mbs) {
    std::string text = script("2", mbs, "128");
    text.replace(text.find("    --global-batch-size ${GBS}\n"), 31, "    --step-batch-size-schedule \"0:64 1B:128\"\n");
    return load(text);
  };
  EXPECT_TRUE(CorrectnessGate().check(with_schedule("1"), with_schedule("2")).allowed);
  Verdict v = CorrectnessGate().check(with_schedule("1"), with_schedule("32"));
  EXPECT_FALSE(v.allowed);
  EXPECT_TRUE(refused_by(v, "validity.batch-schedule-divisible"));
}

// The wrapper's launch is part of what runs: another command or container is
// other code, and its environment is judged as the file's would be.
TEST(FailClosedGate, TheWrappersLaunchIsComparedToo) {
  test::ScratchDir dir("attune_gate_launch");
  dir.write("train.sh", script("2", "1", "128"));
  auto wrapper = [&](const std::string& name, const std::string& launch) {
    return recipe::Recipe::load(dir.write(name, "framework: megatron\nconfig: train.sh\nmodel: llama3-8b\n"
                                                "hardware: {gpu: h100, nodes: 1, gpus_per_node: 8}\n" + launch));
  };
  recipe::Recipe a = wrapper("a.attune.yaml", "launch: {command: [bash, \"{config}\"], env: {NCCL_NVLS_ENABLE: \"0\"}}\n");
  Verdict command = CorrectnessGate().check(
      a, wrapper("b.attune.yaml", "launch: {command: [bash, other.sh], env: {NCCL_NVLS_ENABLE: \"0\"}}\n"));
  EXPECT_TRUE(refused_by(command, "launch-changed"));
  Verdict env = CorrectnessGate().check(
      a, wrapper("c.attune.yaml",
                 "launch: {command: [bash, \"{config}\"], env: {NCCL_NVLS_ENABLE: \"0\", NVTE_ALLOW_NONDETERMINISTIC_ALGO: \"1\"}}\n"));
  EXPECT_FALSE(env.allowed);
  Verdict lever = CorrectnessGate().check(
      a, wrapper("d.attune.yaml", "launch: {command: [bash, \"{config}\"], env: {NCCL_NVLS_ENABLE: \"1\"}}\n"));
  EXPECT_TRUE(lever.allowed) << (lever.reasons.empty() ? "" : lever.reasons[0].message);
}

std::string axolotl(const std::string& packing, const std::string& mbs, const std::string& ga,
                    const std::string& optimizer) {
  return "base_model: meta-llama/Llama-3.1-8B\nsequence_len: 4096\nsample_packing: " + packing +
         "\nmicro_batch_size: " + mbs + "\ngradient_accumulation_steps: " + ga + "\noptimizer: " + optimizer +
         "\nlearning_rate: 2e-5\nbf16: true\n";
}

Verdict check_axolotl(const std::string& a, const std::string& b, const GateOptions& o = {}) {
  recipe::RecipeOptions ro;
  ro.model = "llama3-8b";
  ro.hardware = {"h100", 1, 8};
  return CorrectnessGate(o).check(recipe::Recipe::from_text("a.yaml", a, ro), recipe::Recipe::from_text("b.yaml", b, ro));
}

// With sample packing, micro_batch_size x sequence_len is the bin samples are
// packed into: a swap with gradient accumulation that keeps the global batch
// still changes which samples train together.
TEST(FailClosedGate, AxolotlSamplePackingKeepsItsPackLength) {
  Verdict packed = check_axolotl(axolotl("true", "2", "4", "adamw_torch"), axolotl("true", "4", "2", "adamw_torch"));
  EXPECT_FALSE(packed.allowed);
  EXPECT_TRUE(refused_by(packed, "invariant.pack_tokens"));
  EXPECT_TRUE(check_axolotl(axolotl("false", "2", "4", "adamw_torch"), axolotl("false", "4", "2", "adamw_torch")).allowed);
}

// `2e-5` is a string to PyYAML (YAML 1.1 needs a dot and a signed exponent)
// and a number to OmegaConf and YAML 1.2: re-spelling it as 0.00002 is a
// change to some loader, so it is judged as one (and the learning rate is frozen).
TEST(FailClosedGate, AYamlValueSpelledSoLoadersDisagreeIsAChangeWhenRespelled) {
  std::string a = axolotl("false", "2", "4", "adamw_torch");
  a.replace(a.find("learning_rate: 2e-5"), 19, "learning_rate: 2e-5");
  std::string b = a;
  b.replace(b.find("learning_rate: 2e-5"), 19, "learning_rate: 0.00002");
  Verdict v = check_axolotl(a, b);
  EXPECT_FALSE(v.allowed);
  bool lr = false;
  for (const auto& c : v.changes) lr = lr || c.key == "learning_rate";
  EXPECT_TRUE(lr);
  // Spelled the same way, nothing changed.
  EXPECT_TRUE(check_axolotl(a, a).allowed);
}

// An optimizer implementation swap is allowed only among kernels of the same
// update: from an 8-bit optimizer to fused AdamW is a different optimizer.
TEST(FailClosedGate, AnOptimizerSwapIsAllowedOnlyAmongEquivalentKernels) {
  GateOptions o;
  o.allow = {"optimizer_impl"};
  EXPECT_TRUE(check_axolotl(axolotl("false", "2", "4", "adamw_torch"), axolotl("false", "2", "4", "adamw_torch_fused"), o)
                  .allowed);
  Verdict eight = check_axolotl(axolotl("false", "2", "4", "adamw_bnb_8bit"),
                                axolotl("false", "2", "4", "adamw_torch_fused"), o);
  EXPECT_FALSE(eight.allowed);
  EXPECT_TRUE(refused_by(eight, "lever_value"));
}

}  // namespace
}  // namespace attune::gate
