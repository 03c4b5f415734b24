// SimTarget: what a simulated run or prediction runs — the recipe (a
// scenario names its recipe) and the truth it is simulated under: the nominal
// model (the prior, all a tuning policy may use) unless the caller asks for
// the scenario's hidden truth or names a truth file — and the seed of its
// noise. LaunchTarget: what `attune run` launches, with the scenario's truth
// file for the sim cluster to apply.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "attune/recipe/recipe.h"
#include "attune/sim/perturbation.h"
#include "attune/sim/scenario.h"

namespace attune::campaign {

// Which truth to simulate under.
struct TruthChoice {
  bool scenario_truth = false;          // the scenario's truth.yaml
  std::string truth_file;               // this file instead
  std::optional<std::uint64_t> seed;    // the noise's seed (default: the truth's, else 1)
};

struct SimTarget {
  recipe::Recipe recipe;
  sim::Perturbation perturbation;       // nominal unless a truth was asked for
  std::uint64_t seed = 1;
  std::string truth_file;               // the truth applied ("" = nominal)
  std::optional<sim::Scenario> scenario;
};

// Throws InputError (naming --truth) when a scenario's truth is asked of a
// recipe that is not a scenario, or of a scenario without one.
SimTarget load_sim_target(const std::string& file, const recipe::RecipeOptions& options, const TruthChoice& truth);

struct LaunchTarget {
  recipe::Recipe recipe;
  std::string truth_file;               // a scenario's truth.yaml ("" = none)
  std::optional<sim::Scenario> scenario;
};
LaunchTarget load_launch_target(const std::string& file, const recipe::RecipeOptions& options);

}  // namespace attune::campaign
