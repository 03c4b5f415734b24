#include "attune/policy/observation.h"

#include <array>
#include <utility>

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

nlohmann::json opt(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

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
          {"outcome", to_string(o.outcome)},
          {"reason", o.reason},
          {"failure", o.failure},
          {"tokens_per_s_per_gpu", opt(o.tokens_per_s_per_gpu)},
          {"step_time_s", opt(o.step_time_s)},
          {"peak_memory_gib", opt(o.peak_memory_gib)},
          {"runs", o.runs},
          {"gpu_hours", o.gpu_hours}};
}

}  // namespace attune::policy
