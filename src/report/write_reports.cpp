#include "attune/report/write_reports.h"

#include <filesystem>

#include "attune/report/campaign_data.h"
#include "attune/report/report_html.h"
#include "attune/report/report_markdown.h"
#include "attune/util/file.h"

namespace attune::report {

ReportFiles write_reports(const std::string& campaign_dir) {
  const CampaignData d = read_campaign(campaign_dir);
  const std::filesystem::path dir(campaign_dir);
  ReportFiles out{(dir / "report.md").string(), (dir / "report.html").string(), d.problems};
  write_file_atomic(out.markdown, render_markdown(d));
  write_file_atomic(out.html, render_html(d));
  return out;
}

}  // namespace attune::report
