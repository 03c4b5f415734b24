#include "attune/campaign/sim_target.h"

#include "attune/util/error.h"

namespace attune::campaign {

SimTarget load_sim_target(const std::string& file, const recipe::RecipeOptions& options, const TruthChoice& truth) {
  std::string recipe_file = file;
  std::optional<sim::Scenario> scenario;
  if (sim::is_scenario(file)) {
    scenario = sim::read_scenario(file);
    recipe_file = scenario->recipe;
  }
  std::string truth_file = truth.truth_file;
  if (truth.scenario_truth && truth_file.empty()) {
    if (!scenario) throw InputError({file, 0, 0}, "--truth", "RECIPE is not a scenario: give the truth with --truth-file FILE");
    if (scenario->truth.empty())
      throw InputError({scenario->path, 0, 0}, "--truth", "the scenario has no truth.yaml beside it");
    truth_file = scenario->truth;
  }
  SimTarget t{recipe::Recipe::load(recipe_file, options), {}, 1, truth_file, scenario};
  if (!truth_file.empty()) {
    t.perturbation = sim::read_perturbation(truth_file);
    t.seed = t.perturbation.seed;
  }
  if (truth.seed) t.seed = *truth.seed;
  return t;
}

LaunchTarget load_launch_target(const std::string& file, const recipe::RecipeOptions& options) {
  if (!sim::is_scenario(file)) return {recipe::Recipe::load(file, options), "", std::nullopt};
  sim::Scenario s = sim::read_scenario(file);
  recipe::Recipe r = recipe::Recipe::load(s.recipe, options);
  std::string truth = s.truth;
  return {std::move(r), std::move(truth), std::move(s)};
}

}  // namespace attune::campaign
