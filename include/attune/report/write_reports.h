// write_reports: the campaign report, DIR/report.md and DIR/report.html, both
// written atomically from the directory's own files (`attune report DIR`, and
// `attune tune` when a campaign ends).
#pragma once

#include <string>
#include <vector>

namespace attune::report {

struct ReportFiles {
  std::string markdown, html;          // the paths written
  std::vector<std::string> problems;   // damaged or missing input the report names
};

// InputError when `campaign_dir` is no campaign directory or a report cannot be written.
ReportFiles write_reports(const std::string& campaign_dir);

}  // namespace attune::report
