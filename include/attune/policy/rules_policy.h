// RulesPolicy: the built-in expert (`--policy rules`, the default). Each
// round it corrects the simulator's nominal model with every run measured so
// far (ModelCorrection), gathers the candidates — every one-lever move of the
// incumbent, and the layout moves the corrected search finds, proposed as one
// combination where a layout only pays off with the micro batch or
// recompute that fits it (skills/rules.yaml `combinations`) — drops those
// already tried, those a failure showed cannot run (an OOM at a micro batch
// rules out larger ones at that layout; a hang or an NCCL error marks the
// layout with the values that caused it; an import error marks the value),
// and those the corrected model says run out of memory, and ranks the rest
// by the corrected model's predicted gain, adjusted by lessons of earlier
// campaigns. Among candidates within the rule book's tie margin of the best,
// the experts' order decides (fix, fit, communication, bubble, kernels,
// layout), and the matching rule says why. When nothing is predicted to beat
// the incumbent by the noise, it still tries moves a rule calls for that the
// model rates neutral (the model may not know this cluster), then stops.
#pragma once

#include <memory>
#include <optional>

#include "attune/policy/candidates.h"
#include "attune/policy/model_correction.h"
#include "attune/policy/policy.h"
#include "attune/policy/rule_book.h"

namespace attune::policy {

class RulesPolicy : public Policy {
 public:
  explicit RulesPolicy(const RuleBook& book = builtin_rule_book());
  std::string name() const override { return "rules"; }
  PolicyAnswer propose(const PolicyContext& context) override;
  nlohmann::json explain() const override;

  // The correction fitted on the last propose() (for the journal and tests).
  const ModelCorrection& correction() const { return correction_; }
  // The best candidates of the last propose(), by predicted gain (at most
  // kRankedCandidates): what `hybrid` shows its model.
  const std::vector<std::pair<Proposal, double>>& ranking() const { return ranking_; }
  static constexpr std::size_t kRankedCandidates = 8;

 private:
  // The corrected search's layouts, searched again only when the correction
  // has moved enough to reorder them (a group factor by 3%, memory, a new
  // failure): the search is most of a round's work.
  const std::vector<sim::Workload>& layouts(const sim::Workload& incumbent, const std::vector<Observation>& history);

  const RuleBook& book_;
  std::unique_ptr<CandidateSpace> space_;
  ModelCorrection correction_;
  std::vector<sim::Workload> layouts_;
  std::optional<ModelCorrection> searched_with_;
  long searched_failures_ = -1;
  nlohmann::json incumbent_;   // the corrected model's prediction of the incumbent
  std::vector<std::pair<Proposal, double>> ranking_;
};

// Whether a failure in the history shows that `w` cannot run either.
bool known_infeasible(const std::vector<Observation>& history, const sim::Workload& w);

}  // namespace attune::policy
