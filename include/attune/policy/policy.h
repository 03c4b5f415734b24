// Policy: who proposes the campaign's next trial. It sees the recipe as it
// stands (the incumbent), the original, every trial so far with what was
// measured, the diagnosis of the incumbent's latest run, the noise the
// acceptance rule needs beaten, and lessons of earlier campaigns — and
// returns one proposal, or says why nothing is worth trying. Policies are
// found by name through make_policy (the one registry): `rules` (the built-in
// expert, skills/rules.yaml over the corrected model), and the baselines
// `random`, `grid` and `planner`. A policy keeps no state the campaign cannot
// rebuild from the history, so a resumed campaign asks the same questions.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attune/diagnose/diagnosis.h"
#include "attune/gate/correctness_gate.h"
#include "attune/policy/lessons.h"
#include "attune/policy/observation.h"
#include "attune/policy/proposal.h"
#include "attune/recipe/recipe.h"

namespace attune::policy {

struct PolicyContext {
  const recipe::Recipe& original;
  const recipe::Recipe& incumbent;
  int incumbent_trial = 0;
  double incumbent_tokens_per_s_per_gpu = 0;  // measured
  double min_gain = 0.01;                     // what acceptance needs beaten now (relative)
  const std::vector<Observation>& history;    // every trial so far, the baseline first
  const diagnose::Diagnosis* last_diagnosis = nullptr;  // the incumbent's latest run
  const gate::CorrectnessGate& gate;          // the search space leaves out what it refuses on its own
  const std::vector<Lesson>& lessons;
  std::uint64_t seed = 1;
  int trial = 1;                              // the number of the trial being proposed
};

struct PolicyAnswer {
  std::optional<Proposal> proposal;
  std::string stop_reason;                    // when there is no proposal
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  virtual PolicyAnswer propose(const PolicyContext& context) = 0;
  // What the last proposal was based on, for the journal (the rules
  // policy's model correction); null when there is nothing to say.
  virtual nlohmann::json explain() const { return nullptr; }
};

// The policy registered under `name`; InputError (naming `flag`) for an
// unknown one, listing the known names.
std::unique_ptr<Policy> make_policy(const std::string& name, const std::string& flag = "--policy");
const std::vector<std::string>& policy_names();

}  // namespace attune::policy
