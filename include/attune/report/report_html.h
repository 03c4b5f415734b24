// The campaign report as one self-contained HTML page: inline style and
// inline SVG charts, no script, no external font, image or style sheet, so
// it opens offline. Every text from the journal and the logs is escaped.
#pragma once

#include <string>
#include <vector>

#include "attune/report/campaign_data.h"

namespace attune::report {

// Where a chart is drawn on the page, in CSS pixels from the page's top left
// corner: the page fixes these, so a screenshot can be checked chart by chart.
struct ChartBox {
  std::string id;
  int left = 0, top = 0, width = 0, height = 0;
};
const std::vector<ChartBox>& chart_boxes();

std::string render_html(const CampaignData& d);

}  // namespace attune::report
