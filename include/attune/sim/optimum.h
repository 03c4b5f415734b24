// Optimum: the best the simulator predicts for a recipe on its own hardware
// without changing what it trains — the ceiling benchmarks compare tuners
// against. LayoutSearch ranks every legal layout and lever setting the
// recipe's framework exposes; the fastest that the recipe's adapter can
// express and the correctness gate approves wins, with the lever edits that
// reach it and its prediction re-derived from the edited recipe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/gate/correctness_gate.h"
#include "attune/recipe/recipe.h"
#include "attune/sim/layout_search.h"

namespace attune::sim {

struct LeverEdit {
  std::string lever;                 // canonical lever name
  std::string from;                  // the value before ("" = unset / framework default)
  std::string to;
  std::vector<std::string> changes;  // what the edit did to the file, follow-ups included
};

struct Optimum {
  Workload baseline_workload;
  Prediction baseline;
  Workload best_workload;
  Prediction best;                   // of the edited recipe
  std::vector<LeverEdit> edits;      // empty: the recipe is already the best found
  std::optional<recipe::Recipe> best_recipe;  // the edited recipe the gate approved (none without edits)
  long long searched = 0;            // predictions made by the search
  int candidates_tried = 0;          // ranked candidates turned into recipes before one passed
  std::vector<std::string> notes;    // candidates skipped, and why
};

// Throws InputError when the recipe names no model or GPU.
Optimum find_optimum(const recipe::Recipe& r, const gate::CorrectnessGate& gate, const Perturbation& pert = {},
                     std::size_t candidates = 32);

// {"best": {"tokens_per_s_per_gpu", "edits", "prediction"}, "baseline": {...}, "searched": n, ...}
nlohmann::json to_json(const Optimum& o);

}  // namespace attune::sim
