#include "attune/diagnose/steady_state.h"

#include <algorithm>
#include <cmath>

namespace attune::diagnose {

std::optional<double> weighted_median(std::vector<std::pair<double, double>> vw) {
  if (vw.empty()) return std::nullopt;
  // Equal weights (one sample per step, the usual case): the plain lower
  // median, found in linear time.
  const double w0 = vw.front().second;
  if (std::all_of(vw.begin(), vw.end(), [w0](const auto& p) { return p.second == w0; })) {
    auto mid = vw.begin() + static_cast<std::ptrdiff_t>((vw.size() - 1) / 2);
    std::nth_element(vw.begin(), mid, vw.end());
    return mid->first;
  }
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

constexpr long kWarmupSteps = 10;

// A progress bar's rate is smoothed over its recent steps, so even the first
// one a log shows measures the steady state once the bar is past the warm-up
// (an excerpt, or a log that prints the bar rarely).
bool past_warmup_alone(const StepSample& s) {
  return s.rate_smoothed && !s.step_counted && s.step > kWarmupSteps;
}

// The first logged interval carries compile, NCCL init and allocator growth;
// beyond it, skip max(10 steps, 10% of the run): warm-up (allocator, NCCL set-up, compile) lasts that long in published logs.
long warmup_steps(const StepSeries& s) {
  // A smoothed bar rate far into the run: the run, not the log, started at 0.
  long first = past_warmup_alone(s.front()) ? 0 : s.front().step - s.front().steps_in_interval;
  long span = s.back().step - first;
  return std::max<long>(kWarmupSteps, span / 10) + first;
}

// Rising step time: the last quarter's median well above the first quarter's
// and most consecutive changes upward.
bool drifting(const std::vector<std::pair<double, double>>& t) {
  if (t.size() < 8) return false;
  size_t q = t.size() / 4;
  std::vector<double> head, tail;
  for (size_t i = 0; i < q; ++i) {
    head.push_back(t[i].first);
    tail.push_back(t[t.size() - q + i].first);
  }
  auto median = [](std::vector<double>& v) {
    auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
    std::nth_element(v.begin(), mid, v.end());
    return *mid;
  };
  double a = median(head), b = median(tail);
  long up = 0;
  for (size_t i = 1; i < t.size(); ++i) up += t[i].first > t[i - 1].first ? 1 : 0;
  return b > a * 1.10 && up * 3 >= static_cast<long>(t.size() - 1) * 2;
}

void use(const StepSample& s, std::vector<std::pair<double, double>>& used, SteadyState& out) {
  const long steps = std::max(1L, static_cast<long>(s.steps_in_interval));
  used.emplace_back(*s.step_time_s, static_cast<double>(steps));
  out.steps_used += steps;
}

}  // namespace

SteadyState steady_state(const StepSeries& samples, const std::vector<Disturbance>& disturbances) {
  SteadyState out;
  out.samples_total = static_cast<int>(samples.size());
  out.used.assign(samples.size(), false);
  if (samples.empty()) return out;
  long warm = warmup_steps(samples);
  std::vector<long> disturbance_lines;
  for (const auto& d : disturbances) disturbance_lines.push_back(d.line);
  std::sort(disturbance_lines.begin(), disturbance_lines.end());
  size_t next_disturbance = 0;
  std::vector<std::pair<double, double>> used;  // (step time, steps it covers)
  used.reserve(samples.size());
  long prev_line = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    const StepSample& s = samples[i];
    bool drop = (i == 0 && !past_warmup_alone(s)) || s.step <= warm || !s.step_time_s || s.loss_is_nan ||
                s.skipped_iterations.value_or(0) > 0 || s.nan_iterations.value_or(0) > 0 ||
                disturbed(disturbance_lines, next_disturbance, prev_line, s.line);
    prev_line = s.line;
    if (drop) {
      out.dropped_lines.push_back(s.line);
      continue;
    }
    use(s, used, out);
    out.used[i] = true;
  }
  // A short run has nothing after its warm-up: fall back to every sample but the first.
  if (used.empty() && samples.size() > 1) {
    out.dropped_lines.clear();
    out.steps_used = 0;
    for (size_t i = past_warmup_alone(samples[0]) ? 0 : 1; i < samples.size(); ++i) {
      if (!samples[i].step_time_s) continue;
      use(samples[i], used, out);
      out.used[i] = true;
    }
  }
  out.samples_used = static_cast<int>(used.size());
  if (used.empty()) return out;
  // Mean, spread and drift are over samples in log order, before the median reorders them.
  const double n = static_cast<double>(used.size());
  double mean = 0;
  for (const auto& [t, w] : used) mean += t;
  mean /= n;
  out.mean_step_time_s = mean;
  if (used.size() >= 2) {
    double var = 0;
    for (const auto& [t, w] : used) var += (t - mean) * (t - mean);
    double sd = std::sqrt(var / (n - 1));
    out.cv = mean > 0 ? sd / mean : 0;
    double half = 1.96 * sd / std::sqrt(n);
    out.ci95_low_s = mean - half;
    out.ci95_high_s = mean + half;
  }
  out.drift = drifting(used);
  out.step_time_s = weighted_median(std::move(used));
  return out;
}

}  // namespace attune::diagnose
