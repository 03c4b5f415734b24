// The derived invariants the gate recomputes before and after an edit (internal).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "attune/gate/gate_rule.h"
#include "attune/recipe/recipe.h"
#include "settings.h"

namespace attune::gate {

struct Invariant {
  std::string name;  // gbs, tokens_per_step, seq_len, train_steps, ...
  std::string before;
  std::string after;
  std::string unit;  // "samples", "tokens", ""
  bool moved() const { return before != after; }
};

std::vector<Invariant> compute_invariants(const GateRuleSet& rules, const RecipeView& original,
                                          const RecipeView& candidate);

}  // namespace attune::gate
