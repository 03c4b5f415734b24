#include "attune/report/report_table.h"

#include <fmt/format.h>

#include "attune/report/markup.h"

namespace attune::report {

namespace {

using nlohmann::json;

std::string text_at(const json& j, const json::json_pointer& at) {
  return j.contains(at) && j[at].is_string() ? j[at].get<std::string>() : "";
}

std::optional<double> number_at(const json& j, const json::json_pointer& at) {
  if (j.contains(at) && j[at].is_number()) return j[at].get<double>();
  return std::nullopt;
}

std::string or_unknown(const std::string& s) { return s.empty() ? "unknown" : s; }

std::string hardware_text(const recipe::Hardware& h) {
  if (h.gpu.empty()) return "unknown";
  if (h.nodes <= 0 || h.gpus_per_node <= 0) return h.gpu;
  return fmt::format("{} x {} {} ({} GPUs)", h.nodes, h.gpus_per_node, h.gpu, h.nodes * h.gpus_per_node);
}

std::string throughput_cell(const TrialRow& t) {
  if (!t.tokens_per_s_per_gpu) return "-";
  if (!t.interval) return tokens_text(t.tokens_per_s_per_gpu);
  return fmt::format("{:.0f} ({:.0f}-{:.0f})", *t.tokens_per_s_per_gpu, t.interval->low, t.interval->high);
}

std::string failure_cell(const TrialRow& t) {
  if (t.failure.empty()) return "";
  return t.evidence.empty() ? t.failure : t.failure + ": " + t.evidence;
}

}  // namespace

std::vector<Fact> campaign_facts(const CampaignData& d) {
  const json& s = d.summary;
  const json& in = d.inputs;
  std::vector<Fact> f;
  f.emplace_back("campaign", d.dir);
  f.emplace_back("policy", or_unknown(text_at(s, "/policy"_json_pointer).empty() ? text_at(in, "/policy"_json_pointer)
                                                                                 : text_at(s, "/policy"_json_pointer)));
  f.emplace_back("cluster", or_unknown(text_at(in, "/cluster"_json_pointer)));
  f.emplace_back("framework", or_unknown(d.framework));
  f.emplace_back("model", or_unknown(d.model));
  f.emplace_back("hardware", hardware_text(d.hardware));
  f.emplace_back("baseline", tokens_text(number_at(s, "/baseline/tokens_per_s_per_gpu"_json_pointer)) + " tokens/s/GPU");
  const auto best = number_at(s, "/best/tokens_per_s_per_gpu"_json_pointer);
  const auto best_trial = number_at(s, "/best/trial"_json_pointer);
  f.emplace_back("best", tokens_text(best) + " tokens/s/GPU" +
                             (best_trial ? fmt::format(" (trial {:.0f})", *best_trial) : std::string()));
  const auto gain = number_at(s, "/gain"_json_pointer);
  f.emplace_back("gain", gain ? fmt::format("{:+.1f}%", 100 * *gain) : "-");
  const auto budget = number_at(s, "/budget_gpu_hours"_json_pointer);
  f.emplace_back("GPU-hours", budget ? fmt::format("{:.1f} of {:.1f}", d.gpu_hours, *budget) : fmt::format("{:.1f}", d.gpu_hours));
  f.emplace_back("stopped", s.is_null() ? "not finished (no summary)" : or_unknown(text_at(s, "/stop_reason"_json_pointer)));
  f.emplace_back("verification", or_unknown(text_at(s, "/verification"_json_pointer)));
  return f;
}

TrialTable trial_table(const CampaignData& d) {
  TrialTable t;
  t.header = {"trial", "lever", "value", "verdict", "outcome", "tokens/s/GPU (95% interval)", "peak GiB", "GPU-h",
              "failure (evidence)"};
  for (const TrialRow& r : d.trials) {
    t.rows.push_back({std::to_string(r.trial), r.trial == 0 ? "baseline" : r.lever, r.value, r.verdict,
                      r.outcome.empty() ? "not judged" : r.outcome, throughput_cell(r),
                      r.memory_gib ? fmt::format("{:.1f}", *r.memory_gib) : "-", fmt::format("{:.2f}", r.gpu_hours),
                      failure_cell(r)});
  }
  return t;
}

}  // namespace attune::report
