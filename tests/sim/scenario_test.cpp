#include "attune/sim/scenario.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../fixtures/scratch_dir.h"
#include "attune/util/error.h"
#include "attune/util/file.h"

namespace attune::sim {
namespace {

namespace fs = std::filesystem;

class ScenarioTest : public ::testing::Test {
 protected:
  // A scenario directory <name>/ under the scratch directory with the files given.
  fs::path scenario(const std::string& name, const std::string& public_text, const std::string& truth = "",
                    const std::string& harness = "") {
    const fs::path d = scratch_.path() / name;
    fs::create_directories(d);
    std::ofstream(d / "scenario.yaml") << public_text;
    if (!truth.empty()) std::ofstream(d / "truth.yaml") << truth;
    if (!harness.empty()) std::ofstream(d / "harness.yaml") << harness;
    return d;
  }
  test::ScratchDir scratch_{"attune_scenario"};
};

constexpr const char* kPublic =
    "name: s\ntitle: a title\nwritten_for: one node\nruns_on: four nodes\nrecipe: train.attune.yaml\n";

TEST_F(ScenarioTest, ReadsThePublicFileAndFindsTheHiddenOnesBesideIt) {
  const fs::path d = scenario("s", kPublic, "gemm: 0.9\n", "what_is_off: much\n");
  const Scenario s = read_scenario(d.string());
  EXPECT_EQ(s.name, "s");
  EXPECT_EQ(s.title, "a title");
  EXPECT_EQ(s.written_for, "one node");
  EXPECT_EQ(s.runs_on, "four nodes");
  EXPECT_EQ(fs::path(s.recipe), d / "train.attune.yaml");  // relative to the scenario file
  EXPECT_EQ(fs::path(s.truth), d / "truth.yaml");
  EXPECT_EQ(fs::path(s.harness), d / "harness.yaml");
  EXPECT_EQ(read_scenario((d / "scenario.yaml").string()).recipe, s.recipe);
  // Without the hidden files: the nominal model, nothing to hold it to.
  const Scenario bare = read_scenario(scenario("bare", kPublic).string());
  EXPECT_TRUE(bare.truth.empty());
  EXPECT_TRUE(bare.harness.empty());
}

TEST_F(ScenarioTest, HiddenKeysInThePublicFileAreRefusedWithFileLineAndKey) {
  const fs::path d = scenario("s", std::string(kPublic) + "perturbation: {gemm: 0.5}\n");
  try {
    read_scenario(d.string());
    FAIL() << "a hidden key in the public file was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 6);
    EXPECT_EQ(e.key(), "perturbation");
    EXPECT_NE(e.message().find("truth.yaml"), std::string::npos) << e.message();
  }
  EXPECT_THROW(read_scenario(scenario("norecipe", "name: x\nruns_on: y\n").string()), InputError);
  EXPECT_THROW(read_scenario(scenario("list", "- a\n- b\n").string()), InputError);
}

TEST_F(ScenarioTest, HarnessReadsItsKeysAndRefusesBadValues) {
  const fs::path d = scenario("s", kPublic, "", R"(what_is_off: the layout
budget_gpu_hours: 250
vendor_tuned: true
trap: an OOM at MBS 2
baseline_tokens_per_s_per_gpu: 1000
optimum_tokens_per_s_per_gpu: 1500
prior_regret: 0.08
greedy_shortfall: 0.04
greedy_trials: 30
traps: 2
trial_gpu_hours: 1.5
optimum_edits:
  - "tp: 1 -> 2"
prior_edits: []
)");
  const ScenarioHarness h = read_harness((d / "harness.yaml").string());
  EXPECT_EQ(h.what_is_off, "the layout");
  EXPECT_DOUBLE_EQ(h.budget_gpu_hours, 250);
  EXPECT_TRUE(h.vendor_tuned);
  EXPECT_EQ(h.trap, "an OOM at MBS 2");
  EXPECT_DOUBLE_EQ(*h.baseline_tokens_per_s_per_gpu, 1000);
  EXPECT_DOUBLE_EQ(*h.optimum_tokens_per_s_per_gpu, 1500);
  EXPECT_DOUBLE_EQ(*h.prior_regret, 0.08);
  EXPECT_EQ(*h.greedy_trials, 30);
  EXPECT_EQ(*h.traps, 2);
  EXPECT_DOUBLE_EQ(*h.trial_gpu_hours, 1.5);
  EXPECT_EQ(h.optimum_edits, std::vector<std::string>{"tp: 1 -> 2"});
  EXPECT_TRUE(h.prior_edits.empty());

  auto error_of = [&](const std::string& text) -> std::string {
    const std::string path = scratch_.write("harness.yaml", text);
    try {
      read_harness(path);
    } catch (const InputError& e) {
      return std::to_string(e.where().line) + " " + e.key() + ": " + e.message();
    }
    return "(accepted)";
  };
  EXPECT_EQ(error_of("what_is_off: x\nbudget_gpu_hours: 0\n").rfind("2 budget_gpu_hours", 0), 0u);
  EXPECT_EQ(error_of("vendor_tuned: maybe\n").rfind("1 vendor_tuned: expected true or false", 0), 0u);
  EXPECT_EQ(error_of("prior_regret: 1.5\n").rfind("1 prior_regret", 0), 0u);
  EXPECT_EQ(error_of("optimum_edits: tp\n").rfind("1 optimum_edits: expected a list", 0), 0u);
  const std::string unknown = error_of("what_is_off: x\nbudget: 3\n");
  EXPECT_EQ(unknown.rfind("2 budget: unknown key", 0), 0u) << unknown;
  EXPECT_NE(unknown.find("budget_gpu_hours"), std::string::npos) << unknown;  // names what is accepted
}

TEST_F(ScenarioTest, RecordingReplacesTheFiguresAndKeepsTheRest) {
  const std::string before = "# why this scenario\nwhat_is_off: >-\n  a folded\n  text\nbudget_gpu_hours: 300\n"
                             "baseline_tokens_per_s_per_gpu: 1\noptimum_edits:\n  - \"old: a -> b\"\n"
                             "vendor_tuned: false\n";
  RecordedFigures f;
  f.baseline = 1234.4;
  f.optimum = 2000;
  f.prior_regret = 0.1234;
  f.greedy_shortfall = 0.05;
  f.greedy_trials = 42;
  f.traps = 1;
  f.trial_gpu_hours = 2.5;
  f.optimum_edits = {"tp: 1 -> 2", "mbs: 1 -> 2"};
  const std::string after = with_figures(before, f);
  EXPECT_NE(after.find("# why this scenario\nwhat_is_off: >-\n  a folded\n  text\nbudget_gpu_hours: 300\n"),
            std::string::npos)
      << after;
  EXPECT_NE(after.find("vendor_tuned: false\n"), std::string::npos) << after;
  EXPECT_EQ(after.find("old: a -> b"), std::string::npos) << after;
  EXPECT_EQ(after.find("baseline_tokens_per_s_per_gpu: 1\n"), std::string::npos) << after;
  EXPECT_EQ(with_figures(after, f), after);  // recording twice changes nothing

  const std::string path = scratch_.write("harness.yaml", before);
  record_figures(path, f);
  const ScenarioHarness h = read_harness(path);
  EXPECT_EQ(h.what_is_off, "a folded text");
  EXPECT_DOUBLE_EQ(h.budget_gpu_hours, 300);
  EXPECT_DOUBLE_EQ(*h.baseline_tokens_per_s_per_gpu, 1234);
  EXPECT_DOUBLE_EQ(*h.prior_regret, 0.1234);
  EXPECT_EQ(*h.greedy_trials, 42);
  EXPECT_EQ(*h.traps, 1);
  EXPECT_DOUBLE_EQ(*h.trial_gpu_hours, 2.5);
  EXPECT_EQ(h.optimum_edits, f.optimum_edits);
  EXPECT_TRUE(h.prior_edits.empty());
}

TEST_F(ScenarioTest, ScenarioDirsListsSortedOrTheOneGiven) {
  scenario("b", kPublic);
  scenario("a", kPublic);
  fs::create_directories(scratch_.path() / "not-a-scenario");
  const auto dirs = scenario_dirs(scratch_.path().string());
  ASSERT_EQ(dirs.size(), 2u);
  EXPECT_EQ(fs::path(dirs[0]).filename(), "a");
  EXPECT_EQ(fs::path(dirs[1]).filename(), "b");
  EXPECT_EQ(scenario_dirs((scratch_.path() / "a").string()), std::vector<std::string>{(scratch_.path() / "a").string()});
  EXPECT_THROW(scenario_dirs((scratch_.path() / "missing").string()), InputError);
  EXPECT_TRUE(is_scenario((scratch_.path() / "a").string()));
  EXPECT_FALSE(is_scenario((scratch_.path() / "not-a-scenario").string()));
  EXPECT_TRUE(is_scenario(scratch_.write("other.yaml", "recipe: r.yaml\nruns_on: x\n")));
  EXPECT_FALSE(is_scenario(scratch_.write("recipe.yaml", "framework: megatron\n")));
  // AutoModel recipes name their recipe class and seed at the top: not a scenario.
  EXPECT_FALSE(is_scenario(scratch_.write("automodel.yaml", "recipe: TrainFinetuneRecipeForNextTokenPrediction\n"
                                                            "seed: 1234\nstep_scheduler:\n  global_batch_size: 32\n")));
}

}  // namespace
}  // namespace attune::sim
