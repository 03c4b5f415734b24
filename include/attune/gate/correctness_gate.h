// CorrectnessGate: decides whether a candidate recipe may run, by comparing its
// file contents with the original's — never a description of the change. It
// refuses every change to a setting that alters the training objective (rules
// in gate/*.yaml), numerics changes the user has not opted into, benchmark-only
// settings, and keys no catalog marks throughput-only (fail closed); and it
// recomputes the derived invariants (global batch, tokens per step, training
// length, schedule horizon, data identity) and refuses if any moved.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "attune/gate/approved_recipe.h"
#include "attune/gate/gate_rule.h"
#include "attune/gate/verdict.h"
#include "attune/recipe/recipe.h"

namespace attune::gate {

struct GateOptions {
  std::vector<std::string> allow;       // numerics opt-ins by name (fp8, bf16_grad_reduce, ...)
  std::vector<std::string> allow_keys;  // keys the user accepts although no rule or catalog knows them
  bool unknown_keys_parity = false;     // unknown keys may run; the trial needs a loss-parity check
  std::vector<std::string> rule_files;  // site rules added to the built-in ones
};

// Thrown by approve() when the gate refuses; carries the verdict.
class GateRefusal : public std::runtime_error {
 public:
  explicit GateRefusal(Verdict v);
  const Verdict& verdict() const { return verdict_; }

 private:
  Verdict verdict_;
};

class CorrectnessGate {
 public:
  // Throws InputError for an unknown --allow name or a bad site rule file.
  explicit CorrectnessGate(GateOptions options = {});

  Verdict check(const recipe::Recipe& original, const recipe::Recipe& candidate) const;
  // The candidate judged once: the verdict, and the ApprovedRecipe when it allows it.
  struct Judgement {
    Verdict verdict;
    std::optional<ApprovedRecipe> approved;
  };
  Judgement judge(const recipe::Recipe& original, const recipe::Recipe& candidate) const;
  // The candidate as an ApprovedRecipe, or GateRefusal.
  ApprovedRecipe approve(const recipe::Recipe& original, const recipe::Recipe& candidate) const;

  const GateRuleSet& rules() const { return rules_; }
  const GateOptions& options() const { return options_; }

 private:
  GateOptions options_;
  GateRuleSet rules_;
};

}  // namespace attune::gate
