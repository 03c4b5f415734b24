// The report's three charts as data, built from a campaign: throughput per
// trial (with its 95% interval), best so far against GPU-hours, and peak
// memory per trial against what one GPU holds. Trials that never ran (refused
// by the gate, unrunnable, duplicates) are no points; a trial that ran but
// has no value (a failed run, a log without memory figures) is a missing point.
#pragma once

#include "attune/report/campaign_data.h"
#include "attune/report/svg_chart.h"

namespace attune::report {

ChartSpec throughput_chart(const CampaignData& d);
ChartSpec best_so_far_chart(const CampaignData& d);
ChartSpec memory_chart(const CampaignData& d);

}  // namespace attune::report
