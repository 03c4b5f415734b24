// The report's text as plain cells, shared by the Markdown and the HTML
// renderers so both say the same: the campaign's facts (label, value) and the
// trial table. Cells are unescaped text; each renderer escapes them.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "attune/report/campaign_data.h"

namespace attune::report {

using Fact = std::pair<std::string, std::string>;

// policy, cluster, framework, model, hardware, baseline, best, gain, GPU-hours, stop, verification.
std::vector<Fact> campaign_facts(const CampaignData& d);

struct TrialTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

// trial | lever | value | verdict | outcome | tokens/s/GPU (95% interval) | peak GiB | GPU-h | failure (evidence)
TrialTable trial_table(const CampaignData& d);

}  // namespace attune::report
