// Candidates: the settings a policy may propose, in the simulator's terms —
// the space of values the original recipe can spell and the gate does not
// refuse on their own, the one-lever moves from a setting, layout moves found
// by the search under a correction — and the proposal that takes the
// incumbent recipe to one of them. Shared by every policy that reads the
// model, so they all search the same space.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attune/gate/correctness_gate.h"
#include "attune/policy/observation.h"
#include "attune/policy/proposal.h"
#include "attune/recipe/recipe.h"
#include "attune/sim/layout_search.h"
#include "attune/sim/workload.h"

namespace attune::policy {

// A setting as one string: what "already tried" compares.
std::string setting_key(const sim::Workload& w);
// The dimensions in which two settings differ, in the simulator's order.
std::vector<std::string> moved_dimensions(const sim::Workload& from, const sim::Workload& to);

class CandidateSpace {
 public:
  // InputError when the recipe names no model or GPU (the model cannot read it).
  CandidateSpace(const recipe::Recipe& original, const gate::CorrectnessGate& gate);

  const sim::Workload& base() const { return base_; }
  const sim::SearchSpace& space() const { return space_; }

  std::vector<sim::Workload> one_lever_moves(const sim::Workload& from) const;
  // The proposal that takes `incumbent` (whose setting is `from`) to `to`;
  // nullopt with `why` when the recipe cannot spell it.
  std::optional<Proposal> proposal_to(const recipe::Recipe& incumbent, const sim::Workload& from, const sim::Workload& to,
                                      std::string& why) const;

 private:
  sim::Workload base_;
  sim::SearchSpace space_;
};

// The setting of a trial's recipe, when the history has it.
const sim::Workload* workload_of(const std::vector<Observation>& history, int trial);

// Settings already launched or known not to run, by setting_key.
bool tried(const std::vector<Observation>& history, const sim::Workload& w);

}  // namespace attune::policy
