#include "attune/cli/sim_target.h"

#include "attune/util/error.h"

namespace attune::cli {

void add_sim_options(CLI::App& cmd, SimOptions& o, bool seed) {
  cmd.add_flag("--truth", o.truth,
               "Simulate under the scenario's hidden truth (its truth.yaml) instead of the nominal model. For the "
               "benchmark harness and for people: a tuning policy never sees the truth");
  cmd.add_option("--truth-file", o.truth_file,
                 "Simulate under this truth file (docs/scenarios.md: factors, signed lever effects, failures, noise)")
      ->check(CLI::ExistingFile);
  if (seed)
    cmd.add_option("--seed", o.seed, "Seed of the run's noise (default: the truth's seed, else 1)");
}

SimTarget load_target(const std::string& file, const recipe::RecipeOptions& options, const SimOptions& o) {
  std::string recipe_file = file;
  std::optional<sim::Scenario> scenario;
  if (sim::is_scenario(file)) {
    scenario = sim::read_scenario(file);
    recipe_file = scenario->recipe;
  }
  std::string truth_file = o.truth_file;
  if (o.truth && truth_file.empty()) {
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
  if (o.seed) t.seed = *o.seed;
  return t;
}

LaunchTarget load_launch_target(const std::string& file, const recipe::RecipeOptions& options) {
  if (!sim::is_scenario(file)) return {recipe::Recipe::load(file, options), ""};
  const sim::Scenario s = sim::read_scenario(file);
  return {recipe::Recipe::load(s.recipe, options), s.truth};
}

}  // namespace attune::cli
