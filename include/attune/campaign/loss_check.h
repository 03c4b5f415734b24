// LossCheck: whether a tuned recipe still trains what the baseline trains,
// from the loss curves its runs print. The winner is re-run with the same
// seed and data order as the baseline; its loss over the measured steps is
// compared with the first baseline run's, step by step, and the difference
// must stay within the baseline's own run-to-run spread (its second run
// against its first): a mean difference more than five standard errors of
// that spread (and more than 0.1% of the loss) marks the trial suspect.
// Without two baseline curves over common steps the answer is "unknown".
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace attune::campaign {

using LossCurve = std::vector<std::pair<long, double>>;  // (step, loss)

struct LossCheck {
  bool comparable = false;   // two baseline curves and the candidate's share steps
  bool suspect = false;
  int steps = 0;             // common steps compared
  double difference = 0;     // mean of candidate - baseline
  double allowed = 0;        // what the spread allows
  std::string why;
};

LossCheck compare_loss(const LossCurve& candidate, const LossCurve& baseline, const LossCurve& baseline_again);

nlohmann::json to_json(const LossCheck& c);
// As to_json wrote it; a field missing or of another type reads as not comparable, not suspect.
LossCheck loss_check_from_json(const nlohmann::json& j);

}  // namespace attune::campaign
