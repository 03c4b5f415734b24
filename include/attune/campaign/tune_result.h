// TuneResult: what a campaign did and where it ended — the summary that
// `attune tune` prints, summary.json holds and the journal's
// `campaign_finished` event carries: the baseline and the best throughput,
// the final recipe's edits as the recipe spells them, the spending, why it
// stopped, the verification, and one record per trial. to_json() is the one
// writer of that format.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/recipe/recipe.h"

namespace attune::campaign {

struct TrialRecord {
  int trial = 0;
  int parent = 0;
  std::string label;                  // "tp 2 -> 4, mbs 1 -> 2"
  std::string rule, stage, why;
  std::string outcome;                // policy::TrialOutcome names
  std::string reason;
  std::optional<double> tokens_per_s_per_gpu;
  std::optional<double> predicted_gain;
  double gpu_hours = 0;
  int runs = 0;
};

// One setting of the tuned recipe that differs from the recipe as written,
// as the recipe spells it ("" = not set); its lever's name when it has one.
struct BestEdit {
  std::string key, lever, from, to;
};

struct TuneResult {
  std::string dir;
  std::string policy, cluster;
  double baseline_tokens_per_s_per_gpu = 0;
  double best_tokens_per_s_per_gpu = 0;
  double gain = 0;
  int best_trial = 0;
  std::vector<BestEdit> best_edits;   // the final recipe's settings that differ from the original's
  std::vector<std::string> best_changes;  // the file changes, follow-ups included
  double gpu_hours = 0, budget_gpu_hours = 0;
  int trials = 0, launches = 0, failed_launches = 0, refused = 0;
  std::string stop_reason;
  std::string verification;           // passed | suspect (...) | not needed | unknown (...)
  std::string best_recipe, best_diff; // paths under best/
  std::string best_wrapper;           // best/<stem>.attune.yaml, for a recipe loaded through a wrapper ("" = none)
  std::optional<recipe::Recipe> tuned;  // the final recipe as approved (not in the JSON; none before a baseline)
  std::vector<TrialRecord> history;
  double attune_seconds_per_trial = 0;   // attune's own work (policy, gate, journal, diagnosis)
  nlohmann::json policy_usage;           // what the policy consumed (the LLM's calls, tokens, cost); null: nothing
  std::vector<std::string> policy_notes; // what the policy said during the campaign (an LLM falling back to rules)
  std::string report;                    // report.html (report.md beside it); "" when it could not be written
  bool interrupted = false;
};

// {"baseline": {"tokens_per_s_per_gpu"}, "best": {"tokens_per_s_per_gpu", "trial", "edits": [{key, lever, from,
// to}], "changes", "recipe", "diff", "wrapper"}, "gain", "gpu_hours", "trials", "failed_launches", "refused", "stop_reason", ...}
nlohmann::json to_json(const TuneResult& r);

}  // namespace attune::campaign
