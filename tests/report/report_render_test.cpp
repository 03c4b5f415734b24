// The report and the export of a real campaign (`attune tune` on the
// simulator, the directory then moved elsewhere), the page rendered by
// headless Chromium: each chart's box holds drawn data, the console shows no
// error, and the export record matches docs/export-schema.json. A second
// pair of tests shows the checks can fail: a blank box reads as blank, a
// console error is found. Label `report`; needs Debian's chromium.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "../fixtures/scratch_dir.h"
#include "attune/report/export_record.h"
#include "attune/report/report_html.h"
#include "attune/report/write_reports.h"
#include "attune/util/file.h"
#include "attune/util/subprocess.h"
#include "attune/util/text.h"
#include "json_schema_check.h"
#include "png_image.h"

namespace attune::report {
namespace {

namespace fs = std::filesystem;

constexpr int kWindowWidth = 1400, kWindowHeight = 800;

struct Rendered {
  test::PngImage image;
  std::vector<std::string> console_errors;
};

// Console messages and page errors in Chromium's log (--enable-logging=stderr).
std::vector<std::string> console_errors(const std::string& log) {
  std::vector<std::string> out;
  const std::regex console(R"(CONSOLE|Uncaught|Failed to load resource|net::ERR_)");
  for (const std::string& line : split_lines(log)) {
    if (std::regex_search(line, console)) out.push_back(line);
  }
  return out;
}

ProcessOptions within(double seconds) {
  ProcessOptions o;
  o.timeout_s = seconds;
  return o;
}

Rendered render(const fs::path& page, const fs::path& work) {
  const std::string png = (work / "shot.png").string();
  const ProcessResult r = run_process(
      {"chromium", "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
       "--user-data-dir=" + (work / "profile").string(), "--screenshot=" + png,
       "--window-size=" + std::to_string(kWindowWidth) + "," + std::to_string(kWindowHeight), "file://" + page.string()},
      within(90));
  if (r.exit_code == 127) ADD_FAILURE() << "chromium is not installed (apt-get install chromium): " << r.failure();
  EXPECT_TRUE(r.ok()) << r.failure() << "\n" << r.err;
  return {test::PngImage(read_file(png)), console_errors(r.err + r.out)};
}

// Pixels of a strong colour (the data's points and lines, not the grey axes,
// grid and text) inside a chart's box.
int data_pixels(const test::PngImage& img, const ChartBox& b) {
  int n = 0;
  for (int y = b.top; y < b.top + b.height && y < img.height(); ++y) {
    for (int x = b.left; x < b.left + b.width && x < img.width(); ++x) {
      const test::Rgb p = img.at(x, y);
      if (std::max({p.r, p.g, p.b}) - std::min({p.r, p.g, p.b}) > 80) ++n;
    }
  }
  return n;
}

fs::path tuned_campaign(const test::ScratchDir& scratch) {
  const fs::path first = scratch.path() / "first";
  const ProcessResult r = run_process({ATTUNE_BINARY, "tune", std::string(ATTUNE_SOURCE_DIR) + "/recipes/scenarios/mixtral-8x7b-megatron-tp8-no-ep",
                                       "--out", first.string(), "--seed", "3", "--no-lessons", "--max-trials", "6"},
                                      within(120));
  EXPECT_TRUE(r.ok()) << r.failure();
  // The report reads the directory only: it works where the campaign was copied to.
  const fs::path moved = scratch.path() / "copied" / "campaign";
  fs::create_directories(moved.parent_path());
  fs::copy(first, moved, fs::copy_options::recursive);
  fs::remove_all(first);
  return moved;
}

TEST(ReportRenderTest, ChromiumDrawsEveryChartWithoutConsoleErrors) {
  test::ScratchDir scratch("report_render");
  const fs::path dir = tuned_campaign(scratch);
  const ReportFiles f = write_reports(dir.string());
  EXPECT_TRUE(f.problems.empty()) << f.problems.front();
  ASSERT_TRUE(fs::exists(f.markdown));
  const Rendered page = render(f.html, scratch.path());
  EXPECT_EQ(page.image.width(), kWindowWidth);
  for (const ChartBox& b : chart_boxes()) {
    ASSERT_LE(b.left + b.width, kWindowWidth);
    ASSERT_LE(b.top + b.height, kWindowHeight);
    EXPECT_GT(data_pixels(page.image, b), 200) << b.id << " shows no data";
  }
  EXPECT_TRUE(page.console_errors.empty()) << page.console_errors.front();
}

TEST(ReportRenderTest, TheExportOfARealCampaignMatchesTheSchema) {
  test::ScratchDir scratch("report_render");
  const fs::path dir = tuned_campaign(scratch);
  const nlohmann::json r = export_record(dir.string());
  test::SchemaCheck schema(nlohmann::json::parse(read_file(std::string(ATTUNE_SOURCE_DIR) + "/docs/export-schema.json")));
  const std::vector<std::string> errors = schema.errors(r);
  EXPECT_TRUE(errors.empty()) << errors.front();
  EXPECT_EQ(r["framework"]["name"], "megatron");
  EXPECT_EQ(r["model"], "mixtral-8x7b");
  EXPECT_TRUE(r["problems"].empty()) << r["problems"].dump();
  EXPECT_GE(r["logs"].size(), 3u);  // the baseline's two runs and the best trial's
  EXPECT_GT(r["throughput"]["after"]["tokens_per_s_per_gpu"].get<double>(), r["throughput"]["before"]["tokens_per_s_per_gpu"].get<double>());
}

TEST(ReportRenderTest, TheChecksSeeABlankBoxAndAConsoleError) {
  test::ScratchDir scratch("report_render");
  const fs::path page = scratch.path() / "control.html";
  write_file_atomic(page.string(),
                    "<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body style=\"margin:0\">"
                    "<script>console.error('broken chart')</script></body></html>");
  const Rendered r = render(page, scratch.path());
  for (const ChartBox& b : chart_boxes()) EXPECT_EQ(data_pixels(r.image, b), 0) << b.id;
  ASSERT_FALSE(r.console_errors.empty());
  EXPECT_NE(r.console_errors.front().find("broken chart"), std::string::npos) << r.console_errors.front();
}

}  // namespace
}  // namespace attune::report
