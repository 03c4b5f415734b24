// Every changed byte is accounted for: a candidate that reaches the training
// flags through a construct the script model does not follow is refused as
// `unattributed_change` with its line, while the edits `recipe set` makes
// (through the variable that defines a value, or a flag added to the array)
// are still allowed.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "attune/gate/correctness_gate.h"

namespace attune::gate {
namespace {

const char* kScript = R"(#!/bin/bash
# Llama 3 8B pretraining
TP=${TP:-2}
MBS=1
GBS=64
ARGS=(
    --num-layers 32
    --hidden-size 4096
    --ffn-hidden-size 14336
    --num-attention-heads 32
    --seq-length 8192
    --max-position-embeddings 8192
    --micro-batch-size ${MBS}
    --global-batch-size ${GBS}
    --train-iters 1000
    --lr 3e-4
    --bf16
    --tensor-model-parallel-size ${TP}
)
torchrun --nproc_per_node 8 pretrain_gpt.py "${ARGS[@]}"
)";

recipe::Recipe script(const std::string& text) {
  recipe::RecipeOptions o;
  o.model = "llama3-8b";
  o.hardware = {"h100", 1, 8};
  o.framework = "megatron";
  return recipe::Recipe::from_text("pretrain.sh", text, o);
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// The line of the first unattributed change, 0 when there is none.
int unattributed_line(const Verdict& v) {
  for (const auto& r : v.reasons) {
    if (r.rule != "unattributed_change") continue;
    const auto colon = r.key.rfind(':');
    return std::stoi(r.key.substr(colon + 1));
  }
  return 0;
}

Verdict check(const std::string& candidate_text) {
  return CorrectnessGate().check(script(kScript), script(candidate_text));
}

TEST(GateAttribution, ConstructsTheScriptModelDoesNotFollowAreRefusedWithTheirLine) {
  const std::string launch = "torchrun --nproc_per_node 8 pretrain_gpt.py";
  struct Case {
    const char* family;
    std::string text;
    int line;
  };
  const std::vector<Case> cases = {
      {"array element assignment", replaced(kScript, "torchrun", "ARGS[16]=--fp16\ntorchrun"), 20},
      {"printf -v", replaced(kScript, "MBS=1\n", "MBS=1\nprintf -v GBS %s 128\n"), 5},
      {"read from a here-string", replaced(kScript, "MBS=1\n", "MBS=1\nread GBS <<< 128\n"), 5},
      {"let", replaced(kScript, "MBS=1\n", "MBS=1\nlet GBS=128\n"), 5},
      {"eval", replaced(kScript, "MBS=1\n", "MBS=1\neval GBS=128\n"), 5},
      {"source of another file", replaced(kScript, "MBS=1\n", "MBS=1\nsource ./overrides.sh\n"), 5},
      {"set -- with positional parameters", replaced(kScript, "torchrun", "set -- --fp16\ntorchrun"), 20},
      {"a changed entry script", replaced(kScript, "pretrain_gpt.py", "pretrain_bert.py"), 20},
      {"a changed launcher", replaced(kScript, "torchrun --nproc_per_node 8", "python -m torch.distributed.run --nproc_per_node 8"), 20},
      {"a string appended to the launch line", replaced(kScript, "\"${ARGS[@]}\"", "\"${ARGS[@]}\" $EXTRA"), 20},
      {"pattern substitution on the array", replaced(kScript, "\"${ARGS[@]}\"", "\"${ARGS[@]/--bf16/--fp16}\""), 20},
  };
  for (const Case& c : cases) {
    const Verdict v = check(c.text);
    EXPECT_FALSE(v.allowed) << c.family;
    EXPECT_EQ(unattributed_line(v), c.line) << c.family;
  }
}

// A variable whose change reaches the flags through a branch, or word-splits
// into more flags than the model reads, is refused where it is read.
TEST(GateAttribution, AChangedVariableIsFollowedOnlyWhereTheModelReadsIt) {
  const std::string branchy = replaced(kScript, "torchrun", R"(if [ "$DTYPE" = fp8 ]; then
    ARGS+=(--fp8-format hybrid)
fi
torchrun)");
  const std::string with_dtype = replaced(branchy, "MBS=1\n", "MBS=1\nDTYPE=fp8\n");
  const Verdict v = CorrectnessGate().check(script(with_dtype), script(replaced(with_dtype, "DTYPE=fp8", "DTYPE=bf16")));
  EXPECT_FALSE(v.allowed);
  EXPECT_EQ(unattributed_line(v), 21);
  const std::string lr = replaced(replaced(kScript, "MBS=1\n", "MBS=1\nLR=3e-4\n"), "--lr 3e-4", "--lr $LR");
  const Verdict split = CorrectnessGate().check(script(lr), script(replaced(lr, "LR=3e-4", "LR=\"3e-4 --fp16\"")));
  EXPECT_FALSE(split.allowed);
  EXPECT_EQ(unattributed_line(split), 17);
}

TEST(GateAttribution, EditsThroughTheDefiningVariableOrTheArrayAreAccountedFor) {
  // What `recipe set` writes: the variable that defines the value, a flag added to the array.
  for (const std::string& text :
       {replaced(kScript, "TP=${TP:-2}", "TP=${TP:-1}"), replaced(kScript, "    --bf16\n", "    --bf16\n    --overlap-grad-reduce\n"),
        replaced(kScript, "# Llama 3 8B pretraining", "# Llama 3 8B pretraining, tuned"),
        replaced(kScript, "--lr 3e-4", "--lr \"3e-4\"")}) {
    const Verdict v = check(text);
    EXPECT_EQ(unattributed_line(v), 0) << text;
    EXPECT_TRUE(v.allowed) << text;
  }
  recipe::Recipe edited = script(kScript);
  edited.set("mbs", "2");
  const Verdict v = CorrectnessGate().check(script(kScript), edited);
  EXPECT_TRUE(v.allowed) << edited.document().text();
}

TEST(GateAttribution, AChangeInASecondYamlDocumentIsRefused) {
  const recipe::Recipe original =
      recipe::Recipe::load(std::string(ATTUNE_SOURCE_DIR) + "/recipes/examples/automodel_llama3_8b_pretrain.yaml", {});
  recipe::RecipeOptions o;
  o.framework = recipe::to_string(original.framework());
  const std::string text = original.document().text();
  const int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  const recipe::Recipe candidate = recipe::Recipe::from_text("config.yaml", text + "---\nstep_scheduler:\n  max_steps: 10\n", o);
  const Verdict v = CorrectnessGate().check(original, candidate);
  EXPECT_FALSE(v.allowed);
  EXPECT_EQ(unattributed_line(v), lines + 1);
  // A comment, or keys written in another order, change nothing the loader reads.
  const recipe::Recipe commented = recipe::Recipe::from_text("config.yaml", "# tuned\n" + text, o);
  EXPECT_TRUE(CorrectnessGate().check(original, commented).allowed);
}

}  // namespace
}  // namespace attune::gate
