// Optimum: the best a recipe can reach on its own hardware without changing
// what it trains — the ceiling benchmarks score tuners against — and the two
// references a tuner must beat. LayoutSearch finds, exactly, the best setting
// of every lever the recipe's framework exposes and the simulator reads; the
// fastest that the recipe can express and the correctness gate approves wins,
// with the lever edits that reach it and its prediction re-derived from the
// edited recipe. Under a scenario's hidden truth it also reports
//  - the prior's optimum: what the nominal model (all a policy may use) says
//    is best, evaluated under the truth — its regret is what measuring buys;
//  - one-lever greedy: steepest ascent from the baseline under the truth,
//    one lever per move, every neighbour a trial, until no move gains 1%.
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
  std::string lever;                 // the dimension ("tp", "recompute", "cuda_graphs", ...)
  std::string from;                  // in the simulator's words
  std::string to;
  std::vector<std::string> changes;  // what the edit did to the file, follow-ups included
};

// One setting the search reached: its workload, prediction and edits.
struct Reached {
  Workload workload;
  Prediction prediction;             // of the edited recipe, under the perturbation searched with
  std::vector<LeverEdit> edits;      // empty: the recipe itself
  std::optional<recipe::Recipe> recipe;  // the edited recipe the gate approved (none without edits)
};

struct OptimumOptions {
  std::size_t candidates = 32;       // ranked candidates turned into recipes before giving up
  bool prior = true;                 // also search the nominal model and score its answer under the truth
  bool greedy = true;                // also run one-lever greedy under the truth
};

struct GreedyResult {
  Workload workload;
  Prediction prediction;             // under the truth
  int trials = 0;                    // settings it measured (failed ones too)
  int moves = 0;                     // moves it kept
  double shortfall = 0;              // 1 - its throughput / the optimum's
};

struct Optimum {
  Workload baseline_workload;
  SearchSpace space;                 // what the recipe can spell and the gate allows
  Prediction baseline;               // under the perturbation
  Reached best;                      // the optimum under the perturbation
  std::optional<Reached> prior;      // the nominal model's optimum (its prediction: nominal)
  Prediction prior_under_truth;      // that setting under the perturbation
  double prior_regret = 0;           // 1 - its true throughput / the true optimum (1 when it fails)
  std::optional<GreedyResult> greedy;
  long long settings = 0;            // settings in the space (all covered: evaluated or bounded out)
  long long evaluated = 0;
  long long cores = 0;
  int candidates_tried = 0;          // ranked candidates turned into recipes before one passed
  std::vector<std::string> notes;    // candidates skipped, and why
};

// Throws InputError when the recipe names no model or GPU.
Optimum find_optimum(const recipe::Recipe& r, const gate::CorrectnessGate& gate, const Perturbation& truth = {},
                     const OptimumOptions& options = {});

// The search space of a recipe: every value it can spell that the gate does
// not refuse on its own (FP8 only when the gate's options allow it).
SearchSpace gated_space(const recipe::Recipe& r, const Workload& base, const gate::CorrectnessGate& gate);

// {"optimum": {tokens_per_s_per_gpu, edits, plan, prediction}, "prior_optimum": {edits,
// prior_tokens_per_s_per_gpu, true_tokens_per_s_per_gpu, true_failure}, "prior_regret", "greedy":
// {true_tokens_per_s_per_gpu, trials, moves}, "baseline", "speedup", "settings_searched", ...}
nlohmann::json to_json(const Optimum& o);

// Edits `candidate` (a recipe whose setting is `from`) to setting `to`, one
// dimension at a time, retrying an edit the recipe refuses until the others
// have made it valid (TP before DP-dependent settings). Appends what each
// dimension's edit did to `edits`; false with `why` when some edit never
// applies (the candidate is then partly edited: work on a copy).
bool edit_recipe_to(recipe::Recipe& candidate, const Workload& from, const Workload& to, std::vector<LeverEdit>& edits,
                    std::string& why);
nlohmann::json edits_json(const std::vector<LeverEdit>& edits);

}  // namespace attune::sim
