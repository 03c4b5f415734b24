// WinnerVerification: before a campaign ends, its winner is run once more
// and its loss compared with the baseline's two runs (loss_check.h). A
// winner whose loss leaves the baseline's spread is suspect and the
// incumbent goes back to the trial it replaced (the `verification` event
// says so to the ledger), and so on down the chain; one that fails when
// re-run is a failed trial, and the search may go on from its parent. A
// resumed campaign reads a verification it made before from the journal.
#pragma once

#include <string>
#include <vector>

#include "attune/campaign/campaign_parts.h"
#include "attune/campaign/trial.h"
#include "attune/campaign/trial_judge.h"
#include "attune/campaign/trial_runs.h"

namespace attune::campaign {

struct VerificationOutcome {
  std::string verification;  // passed (...) | unknown (...) | not needed (...); "" when searching on
  bool search_on = false;    // the winner failed when re-run and the budget can pay for more trials
};

VerificationOutcome verify_winner(CampaignParts& parts, TrialRuns& runs, std::vector<Trial>& trials,
                                  const TrialJudge::Redecided& on_redecided,
                                  const std::function<void(const std::string&)>& note);

}  // namespace attune::campaign
