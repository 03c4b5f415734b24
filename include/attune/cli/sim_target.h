// What a simulating command runs: the recipe (RECIPE may be a scenario file,
// which names the recipe, its perturbation and its seed), the scenario's
// hidden truth and the seed of its noise. Shared by `attune sim ...` and
// `attune run` (whose sim and mock clusters simulate).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "attune/recipe/recipe.h"
#include "attune/sim/perturbation.h"

namespace attune::cli {

struct SimOptions {
  std::string perturb_file;
  std::optional<std::uint64_t> seed;
};

// --sim-perturb and --sim-seed (alias --seed).
void add_sim_options(CLI::App& cmd, SimOptions& o);

struct SimTarget {
  recipe::Recipe recipe;
  sim::Perturbation perturbation;
  std::uint64_t seed = 1;
  std::string perturbation_file;  // "" = nominal
};

SimTarget load_target(const std::string& file, const recipe::RecipeOptions& options, const SimOptions& sim_options);

}  // namespace attune::cli
