// `attune report DIR` and `attune export DIR`: the campaign report
// (report.md and a self-contained report.html) and the JSON record of the
// tuned recipe for a leaderboard (report/ does the work). This file parses
// the flags and prints.
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "attune/cli/commands.h"
#include "attune/report/export_record.h"
#include "attune/report/write_reports.h"
#include "attune/util/file.h"

namespace attune::cli {

namespace {

struct ReportArgs {
  std::string dir;
  bool json = false;
};

struct ExportArgs {
  std::string dir, out;
};

void run_report_command(const ReportArgs& a) {
  const report::ReportFiles f = report::write_reports(a.dir);
  if (a.json) {
    print_json({{"markdown", f.markdown}, {"html", f.html}, {"problems", f.problems}});
    return;
  }
  for (const std::string& p : f.problems) fmt::print(stderr, "attune report: warning: {}\n", p);
  fmt::print("report      {}\nhtml        {}\n", f.markdown, f.html);
}

void run_export_command(const ExportArgs& a) {
  const nlohmann::json record = report::export_record(a.dir);
  if (a.out.empty()) {
    print_json(record);
    return;
  }
  write_file_atomic(a.out, report::export_text(record));
  fmt::print("exported    {}\n", a.out);
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand("report", "Write a campaign's report: DIR/report.md and a self-contained DIR/report.html");
  cmd->add_option("DIR", args->dir, "Campaign directory (what attune tune wrote)")->required();
  cmd->add_flag("--json", args->json, "Print the paths written and any damaged input as JSON");
  cmd->callback([args] { run_report_command(*args); });
}

void add_export_command(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand("export", "Print the JSON record of a campaign's tuned and verified recipe (docs/export-schema.json)");
  cmd->add_option("DIR", args->dir, "Campaign directory of a finished campaign")->required();
  cmd->add_option("--out", args->out, "Write the record to this file instead of printing it");
  cmd->callback([args] { run_export_command(*args); });
}

}  // namespace attune::cli
