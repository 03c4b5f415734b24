#include "attune/campaign/sim_target.h"

#include "attune/util/error.h"

namespace attune::campaign {

namespace {

// A run or a prediction of a layout the framework would reject at start up, or
// of one whose numbers only the run knows, would report figures of nothing.
const recipe::Recipe& runnable(const recipe::Recipe& r) {
  const recipe::Plan p = r.plan();
  if (!p.unknown.empty()) {
    throw InputError({r.config_path(), 0, 0}, r.key_of(p.unknown.begin()->first),
                     "known only at run time (" + p.unknown_text() +
                         "): state the number in the file to simulate or launch it");
  }
  std::string broken;
  std::string key;
  for (const auto& v : r.violations()) {
    if (!v.error) continue;
    if (key.empty()) key = v.key;
    broken += (broken.empty() ? "" : "; ") + v.key + ": " + v.message;
  }
  if (!broken.empty()) {
    throw InputError({r.config_path(), 0, 0}, key,
                     "the layout breaks the framework's validity rules (" + broken + "); `attune levers` lists them");
  }
  return r;
}

}  // namespace

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
  runnable(t.recipe);
  if (!truth_file.empty()) {
    t.perturbation = sim::read_perturbation(truth_file);
    t.seed = t.perturbation.seed;
  }
  if (truth.seed) t.seed = *truth.seed;
  return t;
}

LaunchTarget load_launch_target(const std::string& file, const recipe::RecipeOptions& options) {
  if (!sim::is_scenario(file)) {
    recipe::Recipe r = recipe::Recipe::load(file, options);
    runnable(r);
    return {std::move(r), "", std::nullopt};
  }
  sim::Scenario s = sim::read_scenario(file);
  recipe::Recipe r = recipe::Recipe::load(s.recipe, options);
  runnable(r);
  std::string truth = s.truth;
  return {std::move(r), std::move(truth), std::move(s)};
}

}  // namespace attune::campaign
