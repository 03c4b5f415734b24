// Policy: who proposes the campaign's next trial. It sees the recipe as it
// stands (the incumbent), the original, every trial so far with what was
// measured, the diagnosis of the incumbent's latest run, the noise the
// acceptance rule needs beaten, and lessons of earlier campaigns — and
// returns one proposal, or says why nothing is worth trying. Policies are
// found by name through make_policy (the one registry): `rules` (the built-in
// expert, skills/rules.yaml over the corrected model), `llm` and `hybrid` (a
// model reading the skill, llm_policy.h), and the baselines `random`, `grid`,
// `planner`, and `optuna` and `xgb` (Python tuners over a bridge, bridge_policy.h). A policy keeps no state the campaign cannot rebuild from the
// history, so a resumed campaign asks the same questions.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attune/diagnose/diagnosis.h"
#include "attune/gate/correctness_gate.h"
#include "attune/llm/llm_client.h"
#include "attune/policy/admission.h"
#include "attune/llm/price_table.h"
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
  double budget_left_gpu_hours = 0;           // what the campaign may still spend
  double trial_cost_gpu_hours = 0;            // expected cost of one more screening run (0: none measured yet)
  // A trial's run logs, oldest first, and the profile split of its latest
  // diagnosis (null when none): for a policy that reads them (llm).
  std::function<std::vector<std::string>(int trial)> trial_logs;
  std::function<nlohmann::json(int trial)> trial_profile;
};

struct PolicyAnswer {
  PolicyAnswer() = default;
  PolicyAnswer(std::optional<Proposal> p, std::string stop, std::optional<Admission> a = std::nullopt)
      : proposal(std::move(p)), stop_reason(std::move(stop)), admission(std::move(a)) {}

  std::optional<Proposal> proposal;
  std::string stop_reason;                    // when there is no proposal
  // The proposal as admit() judged it against the context's incumbent and
  // history, when the policy admitted it already (the LLM's propose tool
  // answers the model with the verdict): the campaign does not admit it again.
  std::optional<Admission> admission;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  virtual PolicyAnswer propose(const PolicyContext& context) = 0;
  // What the last proposal was based on, for the journal (the rules
  // policy's model correction, the LLM's exchanges); null when there is nothing to say.
  virtual nlohmann::json explain() const { return nullptr; }
  // What the campaign should tell the user since the last call (a fallback
  // from the LLM to the rules); empty when nothing.
  virtual std::vector<std::string> take_notes() { return {}; }
  // What the policy consumed, for the summary (the LLM's tokens and cost);
  // null when nothing.
  virtual nlohmann::json usage() const { return nullptr; }
};

// How the LLM policies (`llm`, `hybrid`) reach their model and what they may spend.
struct LlmPolicySettings {
  llm::LlmSettings client;                    // --llm PROVIDER:MODEL, --llm-base-url, --llm-retries
  long max_tokens = 2'000'000;                // input + output tokens over the campaign (--llm-max-tokens)
  int rounds_per_trial = 6;                   // model turns to reach one valid proposal
  int max_faults = 3;                         // trials in a row without one before falling back to rules
  std::optional<llm::TokenPrice> price;       // --llm-price; else the built-in table
};

struct PolicySettings {
  std::optional<LlmPolicySettings> llm;       // required by `llm` and `hybrid`
};

// The policy registered under `name`; InputError (naming `flag`) for an
// unknown one, listing the known names, or for an LLM policy without --llm.
std::unique_ptr<Policy> make_policy(const std::string& name, const PolicySettings& settings = {},
                                    const std::string& flag = "--policy");
const std::vector<std::string>& policy_names();
// Whether the policy registered under `name` asks a model (needs --llm).
bool policy_asks_llm(const std::string& name);

}  // namespace attune::policy
