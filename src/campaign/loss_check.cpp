#include "attune/campaign/loss_check.h"

#include <cmath>
#include <map>

#include <fmt/format.h>

namespace attune::campaign {

namespace {

constexpr double kStandardErrors = 5;
constexpr double kRelativeFloor = 0.001;

}  // namespace

LossCheck compare_loss(const LossCurve& cand, const LossCurve& base, const LossCurve& again) {
  LossCheck c;
  std::map<long, double> b(base.begin(), base.end()), a(again.begin(), again.end());
  double sum_d = 0, sum_s = 0, sum_s2 = 0, level = 0;
  for (const auto& [step, loss] : cand) {
    const auto ib = b.find(step), ia = a.find(step);
    if (ib == b.end() || ia == a.end() || !std::isfinite(loss)) continue;
    ++c.steps;
    sum_d += loss - ib->second;
    const double s = ia->second - ib->second;
    sum_s += s;
    sum_s2 += s * s;
    level += std::abs(ib->second);
  }
  if (c.steps < 3) {
    c.why = "the baseline's and the candidate's loss curves share fewer than 3 steps: cannot compare";
    return c;
  }
  c.comparable = true;
  const double n = c.steps;
  c.difference = sum_d / n;
  const double mean_s = sum_s / n;
  const double sd = std::sqrt(std::max(0.0, sum_s2 / n - mean_s * mean_s));
  c.allowed = std::max({kStandardErrors * sd / std::sqrt(n), 2 * std::abs(mean_s), kRelativeFloor * level / n});
  c.suspect = std::abs(c.difference) > c.allowed;
  c.why = fmt::format("mean loss difference {:+.5f} over {} steps; the baseline's own spread allows {:.5f}", c.difference,
                      c.steps, c.allowed);
  return c;
}

nlohmann::json to_json(const LossCheck& c) {
  return {{"comparable", c.comparable}, {"suspect", c.suspect}, {"steps", c.steps},
          {"difference", c.difference}, {"allowed", c.allowed},   {"why", c.why}};
}

LossCheck loss_check_from_json(const nlohmann::json& j) {
  LossCheck c;
  if (!j.is_object()) return c;
  c.comparable = j.value("comparable", false);
  c.suspect = j.value("suspect", false);
  c.steps = j.value("steps", 0);
  c.difference = j.value("difference", 0.0);
  c.allowed = j.value("allowed", 0.0);
  c.why = j.value("why", "");
  return c;
}

}  // namespace attune::campaign
