// The report's SVG, HTML and Markdown: one point per measured trial, a missing
// value drawn as missing (never as 0), every text escaped, nothing external.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "../fixtures/scratch_dir.h"
#include "attune/report/campaign_data.h"
#include "attune/report/markup.h"
#include "attune/report/report_charts.h"
#include "attune/report/report_html.h"
#include "attune/report/report_markdown.h"
#include "attune/report/svg_chart.h"
#include "attune/report/write_reports.h"
#include "attune/util/file.h"
#include "campaign_fixture.h"

namespace attune::report {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

CampaignData fixture(const test::ScratchDir& scratch) {
  test::write_campaign_fixture(scratch.path());
  return read_campaign(scratch.path().string());
}

TEST(ReportSvgTest, OnePointPerMeasuredTrial) {
  test::ScratchDir scratch("report_svg");
  const CampaignData d = fixture(scratch);
  const std::string svg = render_svg(throughput_chart(d));
  // Trials 0 and 2 measured, trial 1 failed (missing), trial 3 refused (never ran: no point).
  EXPECT_EQ(count(svg, "<circle class=\"point"), 2u);
  EXPECT_EQ(count(svg, "<g class=\"missing\">"), 1u);
  EXPECT_EQ(count(svg, "class=\"interval\""), 2u);
  EXPECT_NE(svg.find("id=\"chart-throughput\""), std::string::npos);
}

TEST(ReportSvgTest, AMissingValueIsDrawnAsMissingNotAsZero) {
  ChartSpec c;
  c.id = "t";
  c.integer_x = true;
  c.points = {{0, 100.0, {}, {}, "a", "baseline"}, {1, std::nullopt, {}, {}, "b", "failed"}, {2, 0.0, {}, {}, "zero", "rejected"}};
  const std::string svg = render_svg(c);
  EXPECT_EQ(count(svg, "<circle class=\"point"), 2u);
  EXPECT_EQ(count(svg, "<g class=\"missing\">"), 1u);
  // The zero is drawn on the axis (y = the plot's bottom, 300 - 58); the missing one below it, as a cross.
  EXPECT_NE(svg.find("cy=\"242.0\""), std::string::npos) << svg;
  const std::smatch m = [&] {
    std::smatch r;
    std::regex_search(svg, r, std::regex(R"(<g class="missing"><path d="M[0-9.]+ ([0-9.]+))"));
    return r;
  }();
  ASSERT_FALSE(m.empty());
  EXPECT_GT(std::stod(m[1].str()), 242.0);
  EXPECT_NE(svg.find("no value"), std::string::npos);
}

TEST(ReportSvgTest, MemoryChartDrawsTheGpuMemoryAndMissingPeaks) {
  test::ScratchDir scratch("report_svg");
  const CampaignData d = fixture(scratch);
  const std::string svg = render_svg(memory_chart(d));
  EXPECT_EQ(count(svg, "<circle class=\"point"), 1u);   // the baseline's 41 GiB
  EXPECT_EQ(count(svg, "<g class=\"missing\">"), 2u);   // the OOM and the log without memory figures
  EXPECT_EQ(count(svg, "class=\"limit\""), 1u);
  EXPECT_NE(svg.find("GPU memory 79.1 GiB"), std::string::npos);
}

TEST(ReportSvgTest, BestSoFarIsAStepLine) {
  test::ScratchDir scratch("report_svg");
  const CampaignData d = fixture(scratch);
  const ChartSpec c = best_so_far_chart(d);
  EXPECT_EQ(c.points.size(), d.best_so_far.size());
  EXPECT_NE(render_svg(c).find("<polyline class=\"line\""), std::string::npos);
}

TEST(ReportEscapeTest, HtmlAndMarkdownEscaping) {
  EXPECT_EQ(escape_html("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(escape_html(std::string("a\x01" "b")), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(escape_markdown("a | b\n*c* <d>"), "a \\| b \\*c\\* &lt;d&gt;");
  EXPECT_EQ(markdown_fence("x ``` y"), "````");
}

TEST(ReportHtmlTest, LogTextIsEscapedAndNothingIsFetched) {
  test::ScratchDir scratch("report_html");
  const CampaignData d = fixture(scratch);
  const std::string html = render_html(d);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("halve TP: &lt;b&gt;all-reduce&lt;/b&gt; &amp; &quot;gathers&quot; exposed"), std::string::npos);
  for (const char* external : {"src=", "href=", "@import", "url(", "<link"}) EXPECT_EQ(html.find(external), std::string::npos) << external;
  for (const ChartBox& b : chart_boxes()) EXPECT_EQ(count(html, " id=\"" + b.id + "\""), 1u) << b.id;
  EXPECT_EQ(count(html, "<svg "), chart_boxes().size());
  EXPECT_NE(html.find("<span class=\"add\">+tensor_parallel_size: 1</span>"), std::string::npos);
  EXPECT_NE(html.find("fp8 changes numerics | needs --allow fp8"), std::string::npos);
}

TEST(ReportMarkdownTest, TableDiffAndReasoning) {
  test::ScratchDir scratch("report_md");
  const CampaignData d = fixture(scratch);
  const std::string md = render_markdown(d);
  EXPECT_NE(md.find("| 0 | baseline |  |  | baseline | 1005 ("), std::string::npos) << md;
  EXPECT_NE(md.find("oom: torch.OutOfMemoryError: &lt;script&gt;"), std::string::npos);
  EXPECT_NE(md.find("fp8 changes numerics \\| needs --allow fp8"), std::string::npos);
  EXPECT_NE(md.find("```diff\n--- a/train.yaml\n"), std::string::npos);
  EXPECT_NE(md.find("## The LLM's reasoning"), std::string::npos);
  EXPECT_NE(md.find("- propose(expected\\_effect = +20%, lever\\_or\\_key = tp, value = 1): halve TP"), std::string::npos);
}

TEST(ReportHtmlTest, DamagedInputIsShownOnThePage) {
  test::ScratchDir scratch("report_html");
  std::string journal = test::write_campaign_fixture(scratch.path());
  test::write_text(scratch.path() / "journal.jsonl", journal.substr(0, journal.size() - 10));
  const ReportFiles f = write_reports(scratch.path().string());
  ASSERT_EQ(f.problems.size(), 1u);
  const std::string html = read_file(f.html);
  EXPECT_NE(html.find("id=\"problems\""), std::string::npos);
  EXPECT_NE(html.find("journal.jsonl:17: truncated line"), std::string::npos);
  EXPECT_NE(read_file(f.markdown).find("## Damaged or missing input"), std::string::npos);
}

}  // namespace
}  // namespace attune::report
