// SteadyState: the step time a run settles at, from its per-step samples —
// warm-up and disturbed intervals (checkpoint saves, evaluation, profiler
// capture, GC, skipped or NaN iterations) left out, the median taken weighted
// by the steps each interval covers, with run-to-run noise (CV and a 95%
// interval of the mean) and a drift flag when the step time keeps rising.
#pragma once

#include <optional>
#include <vector>

#include "attune/diagnose/step_sample.h"

namespace attune::diagnose {

struct SteadyState {
  int samples_total = 0;
  int samples_used = 0;
  long steps_used = 0;                 // iterations covered by the used samples
  std::optional<double> step_time_s;   // weighted median
  std::optional<double> mean_step_time_s;
  std::optional<double> cv;            // coefficient of variation of the used step times
  std::optional<double> ci95_low_s;    // 95% interval of the mean step time
  std::optional<double> ci95_high_s;
  bool drift = false;                  // step time kept rising: no steady state
  std::vector<long> dropped_lines;     // lines of the samples left out
  std::vector<bool> used;              // per input sample: kept for the steady state
};

SteadyState steady_state(const StepSeries& samples, const std::vector<Disturbance>& disturbances);

// Weighted median of values (weights > 0); nullopt when empty.
std::optional<double> weighted_median(std::vector<std::pair<double, double>> value_weight);

}  // namespace attune::diagnose
