// TrialJudge: whether a candidate beats the incumbent, and the runs that
// takes (acceptance.h's rule applied over time): a screening that may win
// is confirmed with a longer run, a close call is re-measured interleaved
// with the incumbent, and a re-measured incumbent that no longer beats the
// trial it replaced is demoted. Every verdict and demotion is journalled
// before it counts: the ledger's state says who the incumbent is.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "attune/campaign/acceptance.h"
#include "attune/campaign/campaign_parts.h"
#include "attune/campaign/trial.h"
#include "attune/campaign/trial_runs.h"

namespace attune::campaign {

class TrialJudge {
 public:
  // Called when a trial decided before is decided again (demoted).
  using Redecided = std::function<void(const Trial&, const std::string& outcome, const std::string& reason)>;

  TrialJudge(CampaignParts& parts, TrialRuns& runs, std::vector<Trial>& trials, const AcceptanceRule& rule,
             Redecided on_redecided, std::function<void(const std::string&)> note)
      : parts_(parts), runs_(runs), trials_(trials), rule_(rule), on_redecided_(std::move(on_redecided)),
        note_(std::move(note)) {}

  // Measures and judges until the candidate is accepted (it becomes the
  // incumbent), rejected or failed; rejected when the budget or an
  // interruption ends the measurements first.
  void judge(Trial& candidate);
  // One more run of the incumbent; demoted when the runs no longer say it
  // beats the trial it replaced. False when no run could be made.
  bool remeasure_incumbent();
  // The run-to-run noise pooled over every trial with two runs or more.
  double noise_cv() const;
  // The gain a new candidate must show now (two runs against the incumbent's).
  double min_gain_now() const;

 private:
  Trial& incumbent() { return trials_.at(static_cast<std::size_t>(parts_.incumbent_n())); }
  const Trial& incumbent() const { return trials_.at(static_cast<std::size_t>(parts_.incumbent_n())); }

  CampaignParts& parts_;
  TrialRuns& runs_;
  std::vector<Trial>& trials_;
  AcceptanceRule rule_;
  Redecided on_redecided_;
  std::function<void(const std::string&)> note_;
};

}  // namespace attune::campaign
