// Every benchmark scenario (recipes/scenarios/*/scenario.yaml): its baseline
// runs in the simulator, and the baseline and optimum it states are what the
// simulator predicts today, so the figures in the repository stay true.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "attune/gate/correctness_gate.h"
#include "attune/sim/optimum.h"
#include "attune/sim/perturbation.h"
#include "attune/sim/scenario.h"

namespace attune::sim {
namespace {

std::vector<std::string> scenario_files() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(std::string(ATTUNE_SOURCE_DIR) + "/recipes/scenarios")) {
    if (e.is_directory() && std::filesystem::exists(e.path() / "scenario.yaml"))
      out.push_back((e.path() / "scenario.yaml").string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Scenarios, AtLeastTwelveCoveringTheGpusAndModelKinds) {
  const auto files = scenario_files();
  EXPECT_GE(files.size(), 12u);
  std::set<std::string> gpus, frameworks;
  std::set<int> nodes;
  bool dense = false, moe = false;
  for (const auto& f : files) {
    const Scenario s = read_scenario(f);
    const recipe::Recipe r = recipe::Recipe::load(s.recipe);
    const Workload w = workload_from_recipe(r);
    gpus.insert(w.plan.gpu);
    frameworks.insert(w.plan.framework);
    nodes.insert(w.plan.nodes);
    (w.model.is_moe() ? moe : dense) = true;
  }
  EXPECT_TRUE(gpus.count("h100") && gpus.count("h200") && gpus.count("b200"));
  EXPECT_GE(frameworks.size(), 4u);
  EXPECT_TRUE(nodes.count(1) && nodes.count(32));
  EXPECT_TRUE(dense && moe);
}

class ScenarioFile : public ::testing::TestWithParam<std::string> {};

TEST_P(ScenarioFile, BaselineRunsAndStatedFiguresHold) {
  const Scenario s = read_scenario(GetParam());
  EXPECT_EQ(s.name, std::filesystem::path(GetParam()).parent_path().filename().string());
  EXPECT_FALSE(s.what_is_off.empty());
  const recipe::Recipe r = recipe::Recipe::load(s.recipe);
  const Perturbation pert = s.perturbation.empty() ? Perturbation{} : read_perturbation(s.perturbation);
  const gate::CorrectnessGate gate;
  const Optimum o = find_optimum(r, gate, pert);
  ASSERT_TRUE(o.baseline.ok) << s.name << ": " << o.baseline.failure << " " << o.baseline.error;
  ASSERT_TRUE(s.baseline_tokens_per_s_per_gpu.has_value()) << s.name << " states no baseline";
  ASSERT_TRUE(s.optimum_tokens_per_s_per_gpu.has_value()) << s.name << " states no optimum";
  EXPECT_NEAR(o.baseline.tokens_per_s_per_gpu, *s.baseline_tokens_per_s_per_gpu, 0.005 * *s.baseline_tokens_per_s_per_gpu)
      << s.name;
  EXPECT_NEAR(o.best.tokens_per_s_per_gpu, *s.optimum_tokens_per_s_per_gpu, 0.005 * *s.optimum_tokens_per_s_per_gpu)
      << s.name;
  EXPECT_GE(o.best.tokens_per_s_per_gpu, o.baseline.tokens_per_s_per_gpu);
}

std::vector<std::string> names() {
  try {
    return scenario_files();
  } catch (const std::exception&) {
    return {};
  }
}

INSTANTIATE_TEST_SUITE_P(All, ScenarioFile, ::testing::ValuesIn(names()), [](const auto& info) {
  std::string n = std::filesystem::path(info.param).parent_path().filename().string();
  for (char& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n;
});

}  // namespace
}  // namespace attune::sim
