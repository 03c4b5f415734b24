#include "attune/campaign/acceptance.h"
#include "attune/util/statistics.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace attune::campaign {

std::string to_string(Decision d) {
  switch (d) {
    case Decision::Accept: return "accept";
    case Decision::Reject: return "reject";
    case Decision::Confirm: return "confirm";
    case Decision::Remeasure: return "remeasure";
  }
  return "reject";
}

std::vector<double> block_throughputs(const std::vector<double>& t, double run_tokens, int blocks) {
  std::vector<double> out;
  if (t.empty() || run_tokens <= 0) {
    if (run_tokens > 0) out.push_back(run_tokens);
    return out;
  }
  const double mid = median(t);
  const std::size_t b = std::max<std::size_t>(1, std::min<std::size_t>(static_cast<std::size_t>(blocks), t.size()));
  for (std::size_t k = 0; k < b; ++k) {
    const std::size_t lo = k * t.size() / b, hi = (k + 1) * t.size() / b;
    double sum = 0;
    for (std::size_t i = lo; i < hi; ++i) sum += t[i];
    const double mean = sum / static_cast<double>(hi - lo);
    if (mean > 0) out.push_back(run_tokens * mid / mean);
  }
  return out;
}

double mann_whitney_greater(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) return 1;
  const double n = static_cast<double>(a.size()), m = static_cast<double>(b.size());
  double u = 0;
  for (double x : a) {
    for (double y : b) u += x > y ? 1.0 : x == y ? 0.5 : 0.0;
  }
  // Tie correction of the variance.
  std::vector<double> all(a);
  all.insert(all.end(), b.begin(), b.end());
  std::sort(all.begin(), all.end());
  double ties = 0;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j < all.size() && all[j] == all[i]) ++j;
    const double t = static_cast<double>(j - i);
    ties += t * t * t - t;
    i = j;
  }
  const double total = n + m;
  const double var = n * m / 12.0 * ((total + 1) - ties / (total * (total - 1)));
  if (var <= 0) return u > n * m / 2 ? 0 : 1;
  const double z = (u - n * m / 2 - 0.5) / std::sqrt(var);
  return 0.5 * std::erfc(z / std::sqrt(2.0));
}

double run_to_run_cv(const std::vector<const Arm*>& arms, double floor) {
  double ss = 0;
  int dof = 0;
  for (const Arm* arm : arms) {
    if (!arm || arm->run_means.size() < 2) continue;
    double mean = 0;
    for (double v : arm->run_means) mean += std::log(v);
    mean /= static_cast<double>(arm->run_means.size());
    for (double v : arm->run_means) ss += (std::log(v) - mean) * (std::log(v) - mean);
    dof += static_cast<int>(arm->run_means.size()) - 1;
  }
  if (dof == 0) return floor;
  return std::max(floor, std::sqrt(ss / dof));
}

double min_gain(const AcceptanceRule& rule, double run_cv, std::size_t n, std::size_t m) {
  const double spread = std::sqrt(1.0 / std::max<std::size_t>(1, n) + 1.0 / std::max<std::size_t>(1, m));
  return std::max(rule.min_effect, rule.noise_k * run_cv * spread);
}

AcceptanceVerdict judge(const Arm& c, const Arm& i, double run_cv, int remeasures, const AcceptanceRule& rule) {
  AcceptanceVerdict v;
  const double mc = median(c.run_means), mi = median(i.run_means);
  v.gain = mi > 0 ? mc / mi - 1 : (mc > 0 ? 1 : 0);
  v.threshold = min_gain(rule, run_cv, c.run_means.size(), i.run_means.size());
  v.p_value = mann_whitney_greater(c.blocks, i.blocks);
  const bool significant = v.p_value < rule.alpha;
  const bool large = v.gain > v.threshold;
  if (c.run_means.size() < 2) {
    v.decision = v.gain > v.threshold / 2 ? Decision::Confirm : Decision::Reject;
    v.why = v.decision == Decision::Confirm
                ? fmt::format("screening gain {:+.2f}% may beat the noise threshold {:.2f}%: confirming", 100 * v.gain, 100 * v.threshold)
                : fmt::format("screening gain {:+.2f}% is below half the noise threshold {:.2f}%", 100 * v.gain, 100 * v.threshold);
    return v;
  }
  if (significant && large) {
    v.decision = Decision::Accept;
    v.why = fmt::format("{:+.2f}% > {:.2f}% and U-test p = {:.3f} < {}", 100 * v.gain, 100 * v.threshold, v.p_value, rule.alpha);
  } else if (v.gain > v.threshold / 2 && remeasures < rule.max_remeasures) {
    v.decision = Decision::Remeasure;
    v.why = fmt::format("close call: {:+.2f}% against {:.2f}%, p = {:.3f}: measuring both again", 100 * v.gain,
                        100 * v.threshold, v.p_value);
  } else {
    v.decision = Decision::Reject;
    v.why = fmt::format("{:+.2f}% is not more than the noise ({:.2f}%, p = {:.3f})", 100 * v.gain, 100 * v.threshold, v.p_value);
  }
  return v;
}

nlohmann::json to_json(const AcceptanceVerdict& v) {
  return {{"decision", to_string(v.decision)}, {"gain", v.gain}, {"threshold", v.threshold}, {"p_value", v.p_value}, {"why", v.why}};
}

}  // namespace attune::campaign
