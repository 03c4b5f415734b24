#include "attune/campaign/trial.h"

#include <algorithm>
#include <cmath>

#include "attune/util/statistics.h"

namespace attune::campaign {

namespace {

// The 95% interval of the mean throughput over every block of a trial's runs.
void set_interval(const std::vector<double>& blocks, policy::Observation& o) {
  if (blocks.size() < 2) return;
  const double n = static_cast<double>(blocks.size());
  double mean = 0, var = 0;
  for (double b : blocks) mean += b / n;
  for (double b : blocks) var += (b - mean) * (b - mean) / (n - 1);
  const double half = 1.96 * std::sqrt(var / n);
  o.tokens_ci95_low = mean - half;
  o.tokens_ci95_high = mean + half;
}

}  // namespace

void absorb(Trial& t, const RunMeasure& m) {
  ++t.runs;
  ++t.obs.runs;
  t.obs.gpu_hours += m.gpu_hours;
  if (!m.ok) {
    t.obs.failure = m.failure;
    t.obs.reason = m.evidence;
    return;
  }
  t.arm.run_means.push_back(m.tokens);
  t.arm.blocks.insert(t.arm.blocks.end(), m.blocks.begin(), m.blocks.end());
  t.losses.push_back(m.loss);
  if (m.step_time_s > 0) t.step_times.push_back(m.step_time_s);
  if (m.peak_reserved_gib) t.peak_reserved_gib = std::max(t.peak_reserved_gib.value_or(0), *m.peak_reserved_gib);
  t.obs.tokens_per_s_per_gpu = median(t.arm.run_means);
  set_interval(t.arm.blocks, t.obs);
  if (!t.step_times.empty()) t.obs.step_time_s = median(t.step_times);
  t.obs.peak_memory_gib = t.peak_reserved_gib;
  if (!m.loss.empty() && !t.last_diagnosis) {
    // Recalled from the journal: what the policy reads of the incumbent's last run.
    diagnose::Diagnosis d;
    d.peak_reserved_gib = m.peak_reserved_gib;
    d.headroom_gib = m.headroom_gib;
    t.last_diagnosis = d;
  }
}

}  // namespace attune::campaign
