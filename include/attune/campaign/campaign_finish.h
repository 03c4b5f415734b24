// CampaignFinish: how a campaign ends, whatever stopped it — the result's
// figures from its trials (the baseline, the incumbent the journal names,
// its edits as the recipe spells them, the spending), best/ (the tuned file
// under the original's name and its unified diff), the lessons of every
// measured move (once, never from an interrupted campaign), summary.json,
// the journal's `campaign_finished` event, and the reports.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "attune/campaign/campaign_parts.h"
#include "attune/campaign/trial.h"
#include "attune/campaign/tune_result.h"

namespace attune::campaign {

// `trials`: index = trial number, trial 0 the baseline. `attune_seconds`:
// attune's own work over the campaign (policy, gate, journal, diagnosis).
void finish_campaign(CampaignParts& parts, const std::vector<Trial>& trials, double attune_seconds, TuneResult& result,
                     const std::function<void(const std::string&)>& note);

}  // namespace attune::campaign
