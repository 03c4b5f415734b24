#include "attune/diagnose/steady_state.h"

#include <algorithm>
#include <cmath>

namespace attune::diagnose {

std::optional<double> weighted_median(std::vector<std::pair<double, double>> vw) {
  if (vw.empty()) return std::nullopt;
  std::sort(vw.begin(), vw.end());
  double total = 0;
  for (const auto& [v, w] : vw) total += w;
  double acc = 0;
  for (const auto& [v, w] : vw) {
    acc += w;
    if (acc >= total / 2) return v;
  }
  return vw.back().first;
}

namespace {

// A sample is disturbed when a disturbance was logged inside its interval,
// i.e. after the previous sample's line and up to its own. `lines` is sorted;
// `next` walks it once over the whole run.
bool disturbed(const std::vector<long>& lines, size_t& next, long prev_line, long line) {
  while (next < lines.size() && lines[next] <= prev_line) ++next;
  return next < lines.size() && lines[next] <= line;
}

// The first logged interval carries compile, NCCL init and allocator growth;
// beyond it, skip max(10 steps, 10% of the run) as logs.md §9 suggests.
long warmup_steps(const std::vector<StepSample>& s) {
  long first = s.front().step - s.front().steps_in_interval;
  long span = s.back().step - first;
  return std::max<long>(10, span / 10) + first;
}

// Rising step time: the last quarter's median well above the first quarter's
// and most consecutive changes upward.
bool drifting(const std::vector<double>& t) {
  if (t.size() < 8) return false;
  size_t q = t.size() / 4;
  std::vector<double> head(t.begin(), t.begin() + q), tail(t.end() - q, t.end());
  std::sort(head.begin(), head.end());
  std::sort(tail.begin(), tail.end());
  double a = head[head.size() / 2], b = tail[tail.size() / 2];
  int up = 0;
  for (size_t i = 1; i < t.size(); ++i) up += t[i] > t[i - 1] ? 1 : 0;
  return b > a * 1.10 && up * 3 >= static_cast<int>(t.size() - 1) * 2;
}

}  // namespace

SteadyState steady_state(const std::vector<StepSample>& samples, const std::vector<Disturbance>& disturbances) {
  SteadyState out;
  out.samples_total = static_cast<int>(samples.size());
  out.used.assign(samples.size(), false);
  if (samples.empty()) return out;
  long warm = warmup_steps(samples);
  std::vector<long> disturbance_lines;
  for (const auto& d : disturbances) disturbance_lines.push_back(d.line);
  std::sort(disturbance_lines.begin(), disturbance_lines.end());
  size_t next_disturbance = 0;
  std::vector<std::pair<double, double>> used;
  std::vector<double> times;
  long prev_line = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    const StepSample& s = samples[i];
    bool drop = i == 0 || s.step <= warm || !s.step_time_s || s.loss_is_nan ||
                s.skipped_iterations.value_or(0) > 0 || s.nan_iterations.value_or(0) > 0 ||
                disturbed(disturbance_lines, next_disturbance, prev_line, s.line);
    prev_line = s.line;
    if (drop) {
      out.dropped_lines.push_back(s.line);
      continue;
    }
    used.emplace_back(*s.step_time_s, static_cast<double>(std::max(1L, s.steps_in_interval)));
    times.push_back(*s.step_time_s);
    out.steps_used += std::max(1L, s.steps_in_interval);
    out.used[i] = true;
  }
  // A short run has nothing after its warm-up: fall back to every sample but the first.
  if (used.empty() && samples.size() > 1) {
    out.dropped_lines.clear();
    out.steps_used = 0;
    for (size_t i = 1; i < samples.size(); ++i) {
      if (!samples[i].step_time_s) continue;
      used.emplace_back(*samples[i].step_time_s, static_cast<double>(std::max(1L, samples[i].steps_in_interval)));
      times.push_back(*samples[i].step_time_s);
      out.steps_used += std::max(1L, samples[i].steps_in_interval);
      out.used[i] = true;
    }
  }
  out.samples_used = static_cast<int>(used.size());
  if (used.empty()) return out;
  out.step_time_s = weighted_median(used);
  double mean = 0;
  for (double t : times) mean += t;
  mean /= times.size();
  out.mean_step_time_s = mean;
  if (times.size() >= 2) {
    double var = 0;
    for (double t : times) var += (t - mean) * (t - mean);
    double sd = std::sqrt(var / (times.size() - 1));
    out.cv = mean > 0 ? sd / mean : 0;
    double half = 1.96 * sd / std::sqrt(static_cast<double>(times.size()));
    out.ci95_low_s = mean - half;
    out.ci95_high_s = mean + half;
  }
  out.drift = drifting(times);
  return out;
}

}  // namespace attune::diagnose
