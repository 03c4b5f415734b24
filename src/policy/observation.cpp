#include "attune/policy/observation.h"

#include <array>
#include <utility>

#include "attune/util/json_input.h"

namespace attune::policy {

namespace {

constexpr std::array<std::pair<TrialOutcome, const char*>, 9> kNames = {{
    {TrialOutcome::Baseline, "baseline"},
    {TrialOutcome::Accepted, "accepted"},
    {TrialOutcome::Rejected, "rejected"},
    {TrialOutcome::Demoted, "demoted"},
    {TrialOutcome::Failed, "failed"},
    {TrialOutcome::Refused, "refused"},
    {TrialOutcome::Unrunnable, "unrunnable"},
    {TrialOutcome::Duplicate, "duplicate"},
    {TrialOutcome::Pending, "pending"},
}};

using json_field::optional_json;

}  // namespace

std::string to_string(TrialOutcome o) {
  for (const auto& [k, name] : kNames) {
    if (k == o) return name;
  }
  return "unknown";
}

std::optional<TrialOutcome> outcome_by_name(const std::string& name) {
  for (const auto& [k, n] : kNames) {
    if (name == n) return k;
  }
  return std::nullopt;
}

nlohmann::json to_json(const Observation& o) {
  return {{"trial", o.trial},
          {"parent", o.parent},
          {"proposal", to_json(o.proposal)},
          {"edits", o.edits},
          {"outcome", to_string(o.outcome)},
          {"reason", o.reason},
          {"failure", o.failure},
          {"tokens_per_s_per_gpu", optional_json(o.tokens_per_s_per_gpu)},
          {"tokens_ci95", o.tokens_ci95_low && o.tokens_ci95_high ? nlohmann::json{*o.tokens_ci95_low, *o.tokens_ci95_high}
                                                                   : nlohmann::json(nullptr)},
          {"step_time_s", optional_json(o.step_time_s)},
          {"peak_memory_gib", optional_json(o.peak_memory_gib)},
          {"runs", o.runs},
          {"gpu_hours", o.gpu_hours}};
}

}  // namespace attune::policy
