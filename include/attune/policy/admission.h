// admit: the one way a proposal becomes a candidate. The edit is applied to
// the incumbent; the result is told apart from every recipe tried so far by
// its settings (recipe::settings_identity, never a model's view of it, which
// leaves out what it does not model); the gate judges it once. The campaign
// loop, what-if, replay and the LLM's propose tool all admit through here, so
// they cannot disagree on what is a repeat or what the gate allows.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attune/gate/correctness_gate.h"
#include "attune/policy/observation.h"
#include "attune/policy/proposal.h"
#include "attune/recipe/recipe.h"

namespace attune::policy {

enum class AdmissionKind {
  Unrunnable,  // the edit does not apply to the incumbent
  NoChange,    // the edited recipe is the incumbent's
  Repeat,      // a recipe tried already (it ran, or is running) has the same settings
  Refused,     // the gate refuses it
  Admitted,
};

struct Admission {
  AdmissionKind kind = AdmissionKind::Unrunnable;
  std::string why;                               // why not, in words ("" when admitted)
  std::optional<recipe::Recipe> edited;          // the incumbent with the edit, when it applies
  std::string identity;                          // the edited recipe's settings identity
  std::vector<std::string> described;            // each change the edit made, follow-ups included
  int repeat_of = -1;                            // the trial it repeats
  std::optional<gate::Verdict> verdict;          // the gate's, when it was asked
  std::optional<gate::ApprovedRecipe> approved;  // when admitted
};

// `history`: the trials so far, each with its recipe_identity; one that ran
// (runs > 0) or is in flight (Pending) counts as tried.
Admission admit(const Proposal& proposal, const recipe::Recipe& incumbent, const recipe::Recipe& original,
                const gate::CorrectnessGate& gate, const std::vector<Observation>& history);

// The gate's reasons joined for a trial's record: "a; b".
std::string refusal_reasons(const gate::Verdict& v);

}  // namespace attune::policy
