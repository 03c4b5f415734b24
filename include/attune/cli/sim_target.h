// What a simulating command runs: the recipe (RECIPE may be a scenario file
// or directory, which names the recipe), the truth it is simulated under —
// the nominal model (the prior, all a policy may use) unless --truth asks for
// the scenario's hidden truth or --truth-file names one — and the seed of its
// noise. Shared by `attune sim ...` and `attune run`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "attune/recipe/recipe.h"
#include "attune/sim/perturbation.h"
#include "attune/sim/scenario.h"

namespace attune::cli {

struct SimOptions {
  bool truth = false;                   // --truth: the scenario's hidden truth
  std::string truth_file;               // --truth-file FILE
  std::optional<std::uint64_t> seed;    // --seed
};

// --truth and --truth-file (and --seed when `seed`).
void add_sim_options(CLI::App& cmd, SimOptions& o, bool seed);

struct SimTarget {
  recipe::Recipe recipe;
  sim::Perturbation perturbation;       // nominal unless a truth was asked for
  std::uint64_t seed = 1;
  std::string truth_file;               // the truth applied ("" = nominal)
  std::optional<sim::Scenario> scenario;
};

SimTarget load_target(const std::string& file, const recipe::RecipeOptions& options, const SimOptions& sim_options);

// The recipe a command launches from RECIPE (a scenario's recipe for a
// scenario) and, for a scenario, its truth file: the sim cluster runs it there.
struct LaunchTarget {
  recipe::Recipe recipe;
  std::string truth_file;
};
LaunchTarget load_launch_target(const std::string& file, const recipe::RecipeOptions& options);

}  // namespace attune::cli
