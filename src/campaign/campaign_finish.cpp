#include "attune/campaign/campaign_finish.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "attune/recipe/recipe_diff.h"
#include "attune/recipe/recipe_files.h"
#include "attune/report/write_reports.h"
#include "attune/util/error.h"
#include "attune/util/unified_diff.h"

namespace attune::campaign {

namespace fs = std::filesystem;

namespace {

void set_figures(const CampaignParts& parts, const std::vector<Trial>& trials, TuneResult& r) {
  const Trial& base = trials.front();
  const Trial& best = trials.at(static_cast<std::size_t>(parts.incumbent_n()));
  r.baseline_tokens_per_s_per_gpu = base.obs.tokens_per_s_per_gpu.value_or(0);
  r.best_tokens_per_s_per_gpu = best.obs.tokens_per_s_per_gpu.value_or(0);
  r.gain = r.baseline_tokens_per_s_per_gpu > 0 ? r.best_tokens_per_s_per_gpu / r.baseline_tokens_per_s_per_gpu - 1 : 0;
  r.best_trial = best.n;
  r.gpu_hours = parts.budget->spent();
  r.trials = static_cast<int>(trials.size()) - 1;
  r.tuned = best.approved->recipe();
  // The edits as the recipe spells them, each with its lever when it has one.
  for (const recipe::KeyDifference& k : recipe::diff_recipes(base.approved->recipe(), *r.tuned).keys)
    r.best_edits.push_back({k.key, k.lever, k.old_value ? k.old_value->str() : "", k.new_value ? k.new_value->str() : ""});
  for (int t = best.n; t != 0; t = trials[static_cast<std::size_t>(t)].parent) {
    const auto& d = trials[static_cast<std::size_t>(t)].described;
    r.best_changes.insert(r.best_changes.begin(), d.begin(), d.end());
  }
}

// best/: the tuned file under the original's name, and its diff; for a
// recipe loaded through a wrapper, a wrapper that loads it as it ran (the
// hardware, and the launch's environment where an edit went).
void write_best(const CampaignParts& parts, TuneResult& r) {
  const fs::path best_dir = fs::path(r.dir) / "best";
  fs::create_directories(best_dir);
  const recipe::Recipe& original = parts.target->recipe;
  if (!original.wrapper_path().empty()) r.best_wrapper = recipe::write_recipe_files(*r.tuned, best_dir.string(), parts.q.durable).wrapper;
  const std::string name = fs::path(original.config_path()).filename().string();
  r.best_recipe = (best_dir / name).string();
  r.best_diff = (best_dir / (name + ".diff")).string();
  parts.write_file(r.best_recipe, r.tuned->document().text());
  parts.write_file(r.best_diff,
                   unified_diff(original.document().text(), r.tuned->document().text(), "a/" + name, "b/" + name));
}

// Each measured one-lever move, against the trial it was proposed from. Not
// from an interrupted campaign: its resume appends them once, whole.
void write_lessons(CampaignParts& parts, const std::vector<Trial>& trials, const TuneResult& r) {
  if (!parts.q.use_lessons || !trials.front().obs.workload || r.interrupted) return;
  std::vector<policy::Observation> observations;
  for (const Trial& t : trials) observations.push_back(t.obs);
  const std::vector<policy::Lesson> lessons =
      policy::lessons_from(observations, recipe::to_string(parts.target->recipe.framework()), r.dir);
  if (!parts.journal->find(ledger::EventKind::Lessons, -1))
    policy::append_lessons(parts.q.lessons_file.empty() ? policy::default_lessons_path() : parts.q.lessons_file, lessons);
  parts.journal->record(ledger::LessonsWritten{lessons.size()});
}

// report.md and report.html from what the campaign wrote. A report that
// cannot be written is said, and does not undo a finished campaign.
void write_campaign_reports(TuneResult& r, const std::function<void(const std::string&)>& note) {
  try {
    const report::ReportFiles files = report::write_reports(r.dir);
    r.report = files.html;
    for (const auto& p : files.problems) note("report: " + p);
  } catch (const InputError& e) {
    note(std::string("the report could not be written: ") + e.what());
  }
}

}  // namespace

void finish_campaign(CampaignParts& parts, const std::vector<Trial>& trials, double attune_seconds, TuneResult& result,
                     const std::function<void(const std::string&)>& note) {
  set_figures(parts, trials, result);
  write_best(parts, result);
  result.attune_seconds_per_trial = attune_seconds / std::max(1, result.trials);
  write_lessons(parts, trials, result);
  result.policy_usage = parts.policy->usage();
  const nlohmann::json summary = to_json(result);
  parts.write_file((fs::path(result.dir) / "summary.json").string(), summary.dump(2) + "\n");
  parts.journal->record(ledger::CampaignFinished{summary});
  write_campaign_reports(result, note);
  note(fmt::format("finished: {}; {:+.1f}% in {:.1f} GPU-hours", result.stop_reason, 100 * result.gain, result.gpu_hours));
}

}  // namespace attune::campaign
