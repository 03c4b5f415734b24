// The campaign report as Markdown (report.md): the facts, damaged input, the
// trial table, the final diff and the LLM's reasoning; the charts are in
// report.html.
#pragma once

#include <string>

#include "attune/report/campaign_data.h"

namespace attune::report {

std::string render_markdown(const CampaignData& d);

}  // namespace attune::report
