// WhatIf (`attune replay DIR --what-if POLICY`): another policy run against a
// recorded campaign, to compare the two paths without spending a GPU-hour.
// The what-if campaign proposes as many trials as the record holds, from the
// same original, gate, seed and budget. A recipe the record measured (the
// same file, byte for byte) is answered from the record ("measured"); any
// other by the corrected model — the simulator's prediction under the rules
// policy's ModelCorrection fitted on every recorded measurement — and marked
// "predicted". A trial is kept when its throughput beats the incumbent's by
// more than the campaign's noise threshold for two runs each (acceptance.h,
// the record's pooled run-to-run noise): predictions have no blocks to rank.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/gate/correctness_gate.h"
#include "attune/policy/observation.h"
#include "attune/policy/policy.h"
#include "attune/recipe/recipe.h"

namespace attune::campaign {

// One trial of the record, as the what-if reads it.
struct RecordedTrial {
  std::string label;                      // "baseline", "tp 2 -> 1, recompute full -> none"
  std::optional<recipe::Recipe> recipe;   // rebuilt today; none when it cannot be
  policy::Observation obs;                // the recorded outcome and measurements
  std::vector<std::string> logs;          // its run logs found today (plain text), for an LLM's read_log
};

struct WhatIfInput {
  const recipe::Recipe& original;
  const gate::CorrectnessGate& gate;
  const std::vector<RecordedTrial>& trials;  // index = trial number, the baseline first
  int best_trial = 0;                        // the record's final best
  std::uint64_t seed = 1;
  double budget_gpu_hours = 0;
  double noise_cv = 0.005;                   // the record's pooled run-to-run CV
  double run_cost_gpu_hours = 0;             // a screening run's cost, on average
  policy::PolicySettings settings{};         // the llm and hybrid policies' model and limits (--llm ...)
};

struct WhatIfTrial {
  int trial = 0;
  std::string recorded_label, recorded_outcome;
  std::optional<double> recorded_tokens;
  std::string label, outcome, reason;        // the what-if's (outcome "" when it stopped before)
  std::string source;                        // measured | predicted | "" (nothing ran)
  std::optional<double> tokens;
};

struct WhatIfBest {
  int trial = 0;
  std::optional<double> tokens;
  std::string source;                        // measured | predicted
  std::vector<std::string> path;             // the accepted trials' labels from the original
};

struct WhatIfResult {
  std::string policy;
  std::vector<WhatIfTrial> trials;
  WhatIfBest recorded, what_if;
  std::string stop_reason;                   // why the what-if ended early ("" when it ran every trial)
  int predicted = 0, measured = 0;
  nlohmann::json correction;                 // the fitted ModelCorrection
  nlohmann::json policy_usage;               // what the policy consumed (an LLM's calls, tokens, cost); null: nothing
  std::vector<std::string> policy_notes;     // what it said on the way (an LLM falling back to the rules)
};

// InputError (naming --what-if) for an unknown policy, or an LLM policy
// without in.settings.llm. The llm and hybrid policies may read a trial's logs
// where the record measured its recipe; a predicted trial has none.
WhatIfResult run_what_if(const std::string& policy, const WhatIfInput& in);

nlohmann::json to_json(const WhatIfResult& r);

}  // namespace attune::campaign
