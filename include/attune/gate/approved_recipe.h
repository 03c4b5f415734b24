// ApprovedRecipe: a candidate recipe the correctness gate has allowed. It is the
// only thing a cluster will launch, and only the gate can make one: the
// constructor is private and CorrectnessGate is its one friend, so no policy,
// LLM tool or other module can launch a recipe the gate has not seen.
#pragma once

#include "attune/gate/verdict.h"
#include "attune/recipe/recipe.h"

namespace attune::gate {

class CorrectnessGate;

class ApprovedRecipe {
 public:
  const recipe::Recipe& recipe() const { return recipe_; }
  const Verdict& verdict() const { return verdict_; }

 private:
  friend class CorrectnessGate;
  ApprovedRecipe(recipe::Recipe recipe, Verdict verdict)
      : recipe_(std::move(recipe)), verdict_(std::move(verdict)) {}

  recipe::Recipe recipe_;
  Verdict verdict_;
};

}  // namespace attune::gate
