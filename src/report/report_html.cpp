#include "attune/report/report_html.h"

#include <fmt/format.h>

#include "attune/report/markup.h"
#include "attune/report/report_charts.h"
#include "attune/report/report_table.h"
#include "attune/util/text.h"

namespace attune::report {

namespace {

constexpr int kHeaderHeight = 88;  // the header's fixed height, so the charts' place is known
constexpr int kChartWidth = 640, kChartHeight = 300, kGap = 16;

constexpr const char* kStyle = R"(
body { margin: 0; font-family: sans-serif; color: #111; background: #ffffff; }
header { height: 88px; overflow: hidden; box-sizing: border-box; padding: 12px 16px; border-bottom: 1px solid #ddd; }
header h1 { margin: 0 0 6px 0; font-size: 20px; }
header p { margin: 0; font-size: 13px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
#charts { position: relative; }
#charts svg { position: absolute; }
main { padding: 0 16px 32px 16px; }
table { border-collapse: collapse; font-size: 12px; }
th, td { border: 1px solid #ccc; padding: 3px 6px; text-align: left; vertical-align: top; }
td.num { text-align: right; white-space: nowrap; }
pre { background: #f6f6f6; padding: 8px; overflow-x: auto; font-size: 12px; }
.add { color: #1a7f37; } .del { color: #cf222e; } .hunk { color: #6f42c1; }
.problems { background: #fff4e5; border: 1px solid #f0b429; padding: 4px 12px; }
dl { display: grid; grid-template-columns: max-content auto; gap: 2px 12px; font-size: 13px; }
dt { font-weight: bold; }
)";

std::string facts_html(const std::vector<Fact>& facts) {
  std::string s = "<dl>";
  for (const auto& [k, v] : facts) s += "<dt>" + escape_html(k) + "</dt><dd>" + escape_html(v) + "</dd>";
  return s + "</dl>";
}

std::string fact(const std::vector<Fact>& facts, const std::string& key) {
  for (const auto& [k, v] : facts) {
    if (k == key) return v;
  }
  return "";
}

std::string header_html(const std::vector<Fact>& facts) {
  return fmt::format("<header><h1>attune campaign report</h1><p>baseline {} &#8594; best {} ({}) &#183; {} GPU-hours &#183; {}</p>"
                     "<p>stopped: {}</p></header>",
                     escape_html(fact(facts, "baseline")), escape_html(fact(facts, "best")), escape_html(fact(facts, "gain")),
                     escape_html(fact(facts, "GPU-hours")), escape_html(fact(facts, "verification")),
                     escape_html(fact(facts, "stopped")));
}

std::string charts_html(const CampaignData& d) {
  std::vector<ChartSpec> charts = {throughput_chart(d), best_so_far_chart(d), memory_chart(d)};
  int bottom = 0;
  std::string svgs;
  for (std::size_t i = 0; i < charts.size(); ++i) {
    const ChartBox& box = chart_boxes()[i];
    charts[i].width = box.width;
    charts[i].height = box.height;
    std::string svg = render_svg(charts[i]);
    // The box's place on the page, relative to the charts section below the header.
    svg.insert(4, fmt::format(R"( style="left:{}px;top:{}px")", box.left, box.top - kHeaderHeight));
    svgs += svg;
    bottom = std::max(bottom, box.top + box.height - kHeaderHeight);
  }
  return fmt::format(R"(<section id="charts" style="height:{}px">{}</section>)", bottom + kGap, svgs);
}

std::string problems_html(const CampaignData& d) {
  if (d.problems.empty()) return "";
  std::string s = R"(<section class="problems" id="problems"><h2>Damaged or missing input</h2><ul>)";
  for (const std::string& p : d.problems) s += "<li>" + escape_html(p) + "</li>";
  return s + "</ul></section>";
}

std::string table_html(const CampaignData& d) {
  const TrialTable t = trial_table(d);
  std::string s = R"(<h2>Trials</h2><table id="trials"><thead><tr>)";
  for (const std::string& h : t.header) s += "<th>" + escape_html(h) + "</th>";
  s += "</tr></thead><tbody>";
  for (const auto& row : t.rows) {
    s += "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i) {
      const bool number = i == 0 || i == 5 || i == 6 || i == 7;
      s += (number ? R"(<td class="num">)" : "<td>") + escape_html(row[i]) + "</td>";
    }
    s += "</tr>";
  }
  return s + "</tbody></table>";
}

std::string diff_line_class(const std::string& line) {
  if (line.starts_with("+++") || line.starts_with("---")) return "";
  if (line.starts_with("+")) return "add";
  if (line.starts_with("-")) return "del";
  if (line.starts_with("@@")) return "hunk";
  return "";
}

std::string diff_html(const CampaignData& d) {
  std::string s = "<h2>Final diff</h2>";
  if (d.best_diffs.empty()) return s + "<p>No best/*.diff in the campaign directory.</p>";
  for (const BestFile& f : d.best_diffs) {
    s += "<h3>best/" + escape_html(f.name) + "</h3>";
    if (f.text.empty()) {
      s += "<p>The tuned recipe is the original (empty diff).</p>";
      continue;
    }
    s += R"(<pre class="diff">)";
    for (const std::string& line : split_lines(f.text)) {
      const std::string cls = diff_line_class(line);
      s += cls.empty() ? escape_html(line) : fmt::format(R"(<span class="{}">{}</span>)", cls, escape_html(line));
      s += "\n";
    }
    s += "</pre>";
  }
  return s;
}

std::string reasoning_html(const CampaignData& d) {
  std::string items;
  for (const TrialRow& t : d.trials) {
    if (t.llm_reasoning.empty()) continue;
    items += fmt::format("<h3>trial {}: {}</h3><ul>", t.trial, escape_html(t.label));
    for (const std::string& r : t.llm_reasoning) items += "<li>" + escape_html(r) + "</li>";
    items += "</ul>";
  }
  if (!d.llm_stop_reasoning.empty()) {
    items += "<h3>ending the search</h3><ul>";
    for (const std::string& r : d.llm_stop_reasoning) items += "<li>" + escape_html(r) + "</li>";
    items += "</ul>";
  }
  return items.empty() ? "" : R"(<section id="reasoning"><h2>The LLM's reasoning</h2>)" + items + "</section>";
}

}  // namespace

const std::vector<ChartBox>& chart_boxes() {
  static const std::vector<ChartBox> boxes = {
      {"chart-throughput", kGap, kHeaderHeight + kGap, kChartWidth, kChartHeight},
      {"chart-best", 2 * kGap + kChartWidth, kHeaderHeight + kGap, kChartWidth, kChartHeight},
      {"chart-memory", kGap, kHeaderHeight + 2 * kGap + kChartHeight, kChartWidth, kChartHeight},
  };
  return boxes;
}

std::string render_html(const CampaignData& d) {
  const std::vector<Fact> facts = campaign_facts(d);
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>attune report: " + escape_html(d.dir) +
                  "</title><style>" + kStyle + "</style></head><body>";
  s += header_html(facts);
  s += charts_html(d);
  s += "<main>";
  s += problems_html(d);
  s += "<h2>Campaign</h2>" + facts_html(facts);
  s += table_html(d);
  s += diff_html(d);
  s += reasoning_html(d);
  return s + "</main></body></html>\n";
}

}  // namespace attune::report
