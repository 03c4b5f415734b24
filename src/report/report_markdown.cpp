#include "attune/report/report_markdown.h"

#include <fmt/format.h>

#include "attune/report/markup.h"
#include "attune/report/report_table.h"

namespace attune::report {

namespace {

std::string row(const std::vector<std::string>& cells) {
  std::string s = "|";
  for (const std::string& c : cells) s += " " + escape_markdown(c) + " |";
  return s + "\n";
}

std::string table_md(const CampaignData& d) {
  const TrialTable t = trial_table(d);
  std::string s = "## Trials\n\n" + row(t.header) + "|";
  for (std::size_t i = 0; i < t.header.size(); ++i) s += "---|";
  s += "\n";
  for (const auto& r : t.rows) s += row(r);
  return s + "\n";
}

std::string diff_md(const CampaignData& d) {
  std::string s = "## Final diff\n\n";
  if (d.best_diffs.empty()) return s + "No best/*.diff in the campaign directory.\n\n";
  for (const BestFile& f : d.best_diffs) {
    s += "`best/" + escape_markdown(f.name) + "`\n\n";
    if (f.text.empty()) {
      s += "The tuned recipe is the original (empty diff).\n\n";
      continue;
    }
    const std::string fence = markdown_fence(f.text);
    s += fence + "diff\n" + f.text + (f.text.ends_with("\n") ? "" : "\n") + fence + "\n\n";
  }
  return s;
}

std::string list_md(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& i : items) s += "- " + escape_markdown(i) + "\n";
  return s + "\n";
}

std::string reasoning_md(const CampaignData& d) {
  std::string s;
  for (const TrialRow& t : d.trials) {
    if (t.llm_reasoning.empty()) continue;
    s += fmt::format("### Trial {}: {}\n\n", t.trial, escape_markdown(t.label)) + list_md(t.llm_reasoning);
  }
  if (!d.llm_stop_reasoning.empty()) s += "### Ending the search\n\n" + list_md(d.llm_stop_reasoning);
  return s.empty() ? "" : "## The LLM's reasoning\n\n" + s;
}

}  // namespace

std::string render_markdown(const CampaignData& d) {
  std::string s = "# attune campaign report\n\nCharts: report.html (throughput per trial, best so far against GPU-hours, memory per trial).\n\n";
  if (!d.problems.empty()) s += "## Damaged or missing input\n\n" + list_md(d.problems);
  s += "## Campaign\n\n| | |\n|---|---|\n";
  for (const auto& [k, v] : campaign_facts(d)) s += row({k, v});
  s += "\n" + table_md(d) + diff_md(d) + reasoning_md(d);
  return s;
}

}  // namespace attune::report
