#include "attune/cli/sim_target.h"

#include "attune/sim/scenario.h"

namespace attune::cli {

void add_sim_options(CLI::App& cmd, SimOptions& o) {
  cmd.add_option("--sim-perturb", o.perturb_file,
                 "Perturbation file: the scenario's hidden truth (factors on GEMM efficiency per GPU type, attention, "
                 "NVLink, network, all-to-all, lever effects, memory; noise and stragglers). Default: the scenario's, "
                 "else none")
      ->check(CLI::ExistingFile);
  cmd.add_option("--sim-seed,--seed", o.seed,
                 "Seed of the run-to-run noise and stragglers (default: the scenario's, else 1)");
}

SimTarget load_target(const std::string& file, const recipe::RecipeOptions& options, const SimOptions& sim_options) {
  std::string recipe_file = file;
  std::string perturb_file = sim_options.perturb_file;
  std::uint64_t seed = 1;
  if (sim::is_scenario_file(file)) {
    const sim::Scenario scenario = sim::read_scenario(file);
    recipe_file = scenario.recipe;
    if (perturb_file.empty()) perturb_file = scenario.perturbation;
    seed = scenario.seed;
  }
  SimTarget t{recipe::Recipe::load(recipe_file, options), {}, sim_options.seed.value_or(seed), perturb_file};
  if (!perturb_file.empty()) t.perturbation = sim::read_perturbation(perturb_file);
  return t;
}

}  // namespace attune::cli
