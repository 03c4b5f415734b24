#include "attune/report/report_charts.h"

#include <fmt/format.h>

#include "attune/report/markup.h"

namespace attune::report {

namespace {

std::string trial_name(const TrialRow& t) { return fmt::format("trial {} ({})", t.trial, t.label); }

ChartSpec trial_chart(const char* id, const char* title, const char* y_label) {
  ChartSpec c;
  c.id = id;
  c.title = title;
  c.x_label = "trial";
  c.y_label = y_label;
  c.integer_x = true;
  return c;
}

}  // namespace

ChartSpec throughput_chart(const CampaignData& d) {
  ChartSpec c = trial_chart("chart-throughput", "Throughput per trial", "tokens/s/GPU");
  for (const TrialRow& t : d.trials) {
    if (t.runs.empty()) continue;
    ChartPoint p{static_cast<double>(t.trial), t.tokens_per_s_per_gpu, {}, {}, "", t.outcome};
    if (t.interval) {
      p.low = t.interval->low;
      p.high = t.interval->high;
    }
    p.label = t.tokens_per_s_per_gpu
                  ? fmt::format("{}: {} tokens/s/GPU, {}", trial_name(t), tokens_text(t.tokens_per_s_per_gpu), t.outcome)
                  : fmt::format("{}: no throughput ({} {})", trial_name(t), t.outcome, t.failure);
    c.points.push_back(std::move(p));
  }
  return c;
}

ChartSpec best_so_far_chart(const CampaignData& d) {
  ChartSpec c;
  c.id = "chart-best";
  c.title = "Best so far against GPU-hours";
  c.x_label = "GPU-hours spent";
  c.y_label = "tokens/s/GPU";
  c.step_line = true;
  for (const BestPoint& b : d.best_so_far) {
    c.points.push_back({b.gpu_hours, b.tokens_per_s_per_gpu, {}, {},
                        fmt::format("{:.2f} GPU-h: {:.0f} tokens/s/GPU (trial {})", b.gpu_hours, b.tokens_per_s_per_gpu, b.trial),
                        "best"});
  }
  return c;
}

ChartSpec memory_chart(const CampaignData& d) {
  ChartSpec c = trial_chart("chart-memory", "Peak memory per trial", "GiB per GPU");
  c.limit = d.gpu_memory_gib;
  if (c.limit) c.limit_label = fmt::format("GPU memory {:.1f} GiB", *c.limit);
  for (const TrialRow& t : d.trials) {
    if (t.runs.empty()) continue;
    std::string tip = t.memory_gib ? fmt::format("{}: peak {:.1f} GiB", trial_name(t), *t.memory_gib)
                                   : fmt::format("{}: no memory figure{}", trial_name(t), t.failure.empty() ? "" : " (" + t.failure + ")");
    c.points.push_back({static_cast<double>(t.trial), t.memory_gib, {}, {}, std::move(tip), t.outcome});
  }
  return c;
}

}  // namespace attune::report
