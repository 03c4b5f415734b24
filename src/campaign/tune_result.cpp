#include "attune/campaign/tune_result.h"

#include "attune/util/json_input.h"

namespace attune::campaign {

using json_field::optional_json;

nlohmann::json to_json(const TuneResult& r) {
  nlohmann::json edits = nlohmann::json::array();
  for (const BestEdit& e : r.best_edits) edits.push_back({{"key", e.key}, {"lever", e.lever}, {"from", e.from}, {"to", e.to}});
  nlohmann::json history = nlohmann::json::array();
  for (const TrialRecord& t : r.history) {
    history.push_back({{"trial", t.trial}, {"parent", t.parent}, {"label", t.label}, {"rule", t.rule}, {"stage", t.stage},
                       {"why", t.why}, {"outcome", t.outcome}, {"reason", t.reason},
                       {"tokens_per_s_per_gpu", optional_json(t.tokens_per_s_per_gpu)}, {"predicted_gain", optional_json(t.predicted_gain)},
                       {"gpu_hours", t.gpu_hours}, {"runs", t.runs}});
  }
  nlohmann::json best = {{"tokens_per_s_per_gpu", r.best_tokens_per_s_per_gpu}, {"trial", r.best_trial}, {"edits", edits},
                         {"changes", r.best_changes}, {"recipe", r.best_recipe}, {"diff", r.best_diff},
                         {"wrapper", r.best_wrapper}};
  return {{"dir", r.dir},
          {"policy", r.policy},
          {"cluster", r.cluster},
          {"baseline", {{"tokens_per_s_per_gpu", r.baseline_tokens_per_s_per_gpu}}},
          {"best", best},
          {"gain", r.gain},
          {"gpu_hours", r.gpu_hours},
          {"budget_gpu_hours", r.budget_gpu_hours},
          {"trials", r.trials},
          {"launches", r.launches},
          {"failed_launches", r.failed_launches},
          {"refused", r.refused},
          {"stop_reason", r.stop_reason},
          {"verification", r.verification},
          {"interrupted", r.interrupted},
          {"attune_seconds_per_trial", r.attune_seconds_per_trial},
          {"policy_usage", r.policy_usage},
          {"policy_notes", r.policy_notes},
          {"report", r.report},
          {"history", history}};
}

}  // namespace attune::campaign
