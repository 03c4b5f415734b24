// torchtitan's Python-config generation: a recipe kept as the training
// command line in the attune wrapper (recipe/command_document.h). Its
// settings are the named config's values under the command's overrides;
// edits change an override's bytes or add one, nothing else of the wrapper;
// the batch keys count tokens and the plan reads them as samples; the launch
// runs the command as edited; and the gate judges the overrides as it judges
// TOML keys, refusing a change anywhere else in the wrapper.
#include "attune/recipe/command_document.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "attune/gate/correctness_gate.h"
#include "attune/recipe/framework_launch.h"
#include "attune/recipe/recipe.h"
#include "attune/recipe/recipe_files.h"
#include "attune/util/error.h"
#include "attune/util/file.h"
#include "../fixtures/scratch_dir.h"

namespace attune::recipe {
namespace {

namespace fs = std::filesystem;

const char* kFlow = R"(# Llama 3 8B on torchtitan main
framework: torchtitan
hardware: {gpu: h100, nodes: 1, gpus_per_node: 8}
launch:
  command: [torchrun, --nproc_per_node, "8", -m, torchtitan.train, --module, llama3, --config, llama3_8b,
            --training.steps, "200", --compile.enable, activation-checkpoint:full]
  env: {NCCL_DEBUG: WARN}
measure: {steps: 3}
)";

const char* kBlock = R"(framework: torchtitan
hardware:
  gpu: h100
  nodes: 1
  gpus_per_node: 8
launch:
  command:
    - torchrun
    - -m
    - torchtitan.train
    - --module
    - llama3
    - --config
    - llama3_8b
    - --parallelism.tensor_parallel_degree=2
)";

std::unique_ptr<CommandDocument> doc(const char* text) { return CommandDocument::parse("titan.attune.yaml", text); }

std::string value_of(const Document& d, const std::string& key) {
  const auto e = d.find(key);
  return e ? e->value.str() : "<absent>";
}

TEST(CommandDocument, SettingsAreTheNamedConfigUnderTheOverrides) {
  const auto d = doc(kFlow);
  EXPECT_EQ(d->named_config(), "llama3/llama3_8b");
  EXPECT_EQ(value_of(*d, "model.flavor"), "8B");                  // the named config's
  EXPECT_EQ(value_of(*d, "training.max_context_length"), "8192");
  EXPECT_EQ(value_of(*d, "training.steps"), "200");               // the override wins
  EXPECT_EQ(value_of(*d, "compile.enable"), "true");              // a bare flag
  EXPECT_EQ(value_of(*d, "activation_checkpoint.mode"), "full");  // the subcommand
  // torchrun's own arguments are not the trainer's.
  EXPECT_EQ(value_of(*d, "nproc_per_node"), "<absent>");
  // An override has the bytes of its flag through its value; a named config's value has none.
  const auto steps = d->find("training.steps");
  ASSERT_TRUE(steps);
  EXPECT_EQ(std::string(kFlow).substr(steps->begin, steps->end - steps->begin), "--training.steps, \"200\"");
  EXPECT_EQ(d->find("model.flavor")->begin, d->find("model.flavor")->end);
}

TEST(CommandDocument, AnEditChangesOnlyItsOverride) {
  auto d = doc(kFlow);
  d->set("training.steps", Value::integer(300));
  EXPECT_NE(d->text().find("--training.steps, \"300\", --compile.enable"), std::string::npos) << d->text();
  // A new override goes before the subcommand, which tyro reads last.
  d->set("parallelism.tensor_parallel_degree", Value::integer(2));
  EXPECT_NE(d->text().find("--compile.enable, --parallelism.tensor-parallel-degree, \"2\", activation-checkpoint:full]"),
            std::string::npos)
      << d->text();
  EXPECT_EQ(value_of(*d, "parallelism.tensor_parallel_degree"), "2");
  // A switch turned off is tyro's --no- form; the subcommand takes tyro's spelling.
  d->set("compile.enable", Value::boolean(false));
  d->set("activation_checkpoint.mode", Value::string("memory_budget"));
  EXPECT_NE(d->text().find("--compile.no-enable, --parallelism"), std::string::npos) << d->text();
  EXPECT_NE(d->text().find("activation-checkpoint:memory-budget]"), std::string::npos) << d->text();
  EXPECT_EQ(value_of(*d, "compile.enable"), "false");
  EXPECT_EQ(value_of(*d, "activation_checkpoint.mode"), "memory_budget");
  EXPECT_TRUE(d->remove("training.steps"));
  EXPECT_EQ(value_of(*d, "training.steps"), "1000");  // the named config's again
  // Everything outside the command list is as it was.
  const std::string text = d->text();
  EXPECT_EQ(text.substr(0, text.find("  command:")), std::string(kFlow).substr(0, std::string(kFlow).find("  command:")));
  EXPECT_NE(text.find("  env: {NCCL_DEBUG: WARN}\nmeasure: {steps: 3}\n"), std::string::npos);
  EXPECT_EQ(d->argv().back(), "activation-checkpoint:memory-budget");
}

TEST(CommandDocument, ABlockListTakesOneElementPerLine) {
  auto d = doc(kBlock);
  EXPECT_EQ(value_of(*d, "parallelism.tensor_parallel_degree"), "2");
  d->set("parallelism.tensor_parallel_degree", Value::integer(4));  // `--key=value` is one element
  d->set("training.steps", Value::integer(50));
  EXPECT_NE(d->text().find("    - --parallelism.tensor-parallel-degree\n    - \"4\"\n    - --training.steps\n    - \"50\"\n"),
            std::string::npos)
      << d->text();
  EXPECT_EQ(value_of(*d, "parallelism.tensor_parallel_degree"), "4");
}

TEST(CommandDocument, AConfigAttuneDoesNotKnowIsRefusedNamingTheOnesItKnows) {
  std::string text = kFlow;
  text.replace(text.find("llama3_8b"), 9, "llama3_debugmodel_float8");
  try {
    doc(text.c_str());
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("llama3/llama3_debugmodel_float8"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("llama3/llama3_70b"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(CommandDocument::holds_command_recipe("framework: torchtitan\nconfig: x.toml\nhardware: {gpu: h100}\n"));
  EXPECT_TRUE(CommandDocument::holds_command_recipe(kFlow));
}

class CommandRecipe : public ::testing::Test {
 protected:
  Recipe load(const std::string& text) {
    const std::string path = (dir_.path() / "titan.attune.yaml").string();
    std::ofstream(path) << text;
    return Recipe::load(path);
  }
  test::ScratchDir dir_{"command-recipe"};
};

TEST_F(CommandRecipe, TheBatchKeysCountTokensAndThePlanReadsSamples) {
  Recipe r = load(kFlow);
  EXPECT_EQ(r.framework(), Framework::Torchtitan);
  EXPECT_EQ(r.dialect(), "python");
  EXPECT_EQ(r.config_path(), r.wrapper_path());
  const Plan p = r.plan();
  EXPECT_EQ(p.seq_len, 8192);
  EXPECT_EQ(p.mbs, 1);   // 8192 tokens of 8192
  EXPECT_EQ(p.gbs, 8);   // num_tokens_per_train_step -1: a micro-batch per DP rank
  ASSERT_TRUE(r.model());
  // TP 2 halves DP: the implied global batch is pinned, in tokens.
  const EditResult tp = r.set("tp", "2");
  EXPECT_EQ(value_of(r.document(), "training.num_tokens_per_train_step"), "65536");
  EXPECT_EQ(tp.after.gbs, 8);
  EXPECT_EQ(tp.after.grad_accum, 2);
  // `mbs 2` is 16384 tokens.
  const EditResult mbs = r.set("mbs", "2");
  EXPECT_EQ(value_of(r.document(), "training.num_tokens_per_microbatch_per_dp_rank"), "16384");
  EXPECT_EQ(mbs.after.gbs, 8);
  EXPECT_EQ(mbs.after.mbs, 2);
  EXPECT_EQ(mbs.after.grad_accum, 1);
}

TEST_F(CommandRecipe, AnEnvironmentLeverIsLeftToTheUser) {
  Recipe r = load(kFlow);
  const std::string before = r.document().text();
  try {
    r.set("pytorch_cuda_alloc_conf", "expandable_segments:True");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("launch.env"), std::string::npos) << e.what();
  }
  EXPECT_EQ(r.document().text(), before);
  EXPECT_EQ(r.launch().env.count("PYTORCH_CUDA_ALLOC_CONF"), 0u);
}

TEST_F(CommandRecipe, ATokenCountThatIsNoWholeNumberOfSamplesIsUnknown) {
  std::string text = kFlow;
  text.replace(text.find("--compile.enable"), 16, "--training.num-tokens-per-microbatch-per-dp-rank, \"5000\"");
  const Plan p = load(text).plan();
  ASSERT_TRUE(p.unknown.count("mbs"));
  EXPECT_NE(p.unknown.at("mbs").find("5000 tokens"), std::string::npos);
}

TEST_F(CommandRecipe, TheLaunchIsTheEditedCommandWrittenAsOneFile) {
  Recipe r = load(kFlow);
  r.set("tp", "2");
  const WrittenRecipe files = write_recipe_files(r, (dir_.path() / "run").string());
  EXPECT_EQ(files.config, files.wrapper);
  EXPECT_EQ(files.launched, files.wrapper);
  EXPECT_EQ(read_file(files.wrapper), r.document().text());
  const FrameworkLaunch fl = framework_launch(r, files);
  const std::vector<std::string> expected = {"torchrun", "--nproc_per_node", "8", "-m", "torchtitan.train", "--module",
                                             "llama3", "--config", "llama3_8b", "--training.steps", "200",
                                             "--compile.enable", "--parallelism.tensor-parallel-degree", "2",
                                             "--training.num-tokens-per-train-step", "65536",
                                             "activation-checkpoint:full"};
  EXPECT_EQ(fl.command, expected);
  // Loaded back, the written file is the same recipe.
  const Recipe back = Recipe::load(files.wrapper);
  EXPECT_EQ(back.plan().tp, 2);
  EXPECT_EQ(back.document().text(), r.document().text());
}

TEST_F(CommandRecipe, TheGateJudgesOverridesAsKeysAndRefusesEveryOtherChange) {
  const Recipe base = load(kFlow);
  Recipe tuned = base;
  tuned.set("tp", "2");
  const gate::Verdict ok = gate::CorrectnessGate().check(base, tuned);
  EXPECT_TRUE(ok.allowed) << gate::to_json(ok).dump(1);
  Recipe longer = base;
  longer.set("training.steps", "400");
  const gate::Verdict steps = gate::CorrectnessGate().check(base, longer);
  EXPECT_FALSE(steps.allowed);
  auto refused_by = [](const gate::Verdict& v, const std::string& rule) {
    for (const auto& r : v.reasons)
      if (r.rule == rule) return true;
    return false;
  };
  EXPECT_TRUE(refused_by(steps, "torchtitan.training_length"));
  // torchrun's arguments and the launch environment are not settings the gate compares.
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"--nproc_per_node, \"8\"", "--nproc_per_node, \"4\""}, {"NCCL_DEBUG: WARN", "NCCL_DEBUG: INFO"}}) {
    std::string text = kFlow;
    text.replace(text.find(from), from.size(), to);
    const gate::Verdict v = gate::CorrectnessGate().check(base, load(text));
    EXPECT_FALSE(v.allowed) << to;
    EXPECT_TRUE(refused_by(v, "unattributed_change")) << to;
  }
}

}  // namespace
}  // namespace attune::recipe
