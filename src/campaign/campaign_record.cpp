#include "attune/campaign/campaign_record.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>

#include "attune/campaign/sim_target.h"
#include "attune/campaign/tune_inputs.h"
#include "attune/ledger/journal_event.h"
#include "attune/util/error.h"
#include "attune/util/file.h"
#include "attune/util/input_file.h"
#include "attune/util/text.h"

namespace attune::campaign {

namespace {

namespace fs = std::filesystem;

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

// The inputs as tune reads them back when it resumes (tune_inputs.h).
CampaignInputs read_inputs(const nlohmann::json& j) {
  TuneRequest q;
  read_tune_inputs(j, q);
  CampaignInputs in;
  in.file = q.file;
  in.options = q.options;
  in.gate = q.gate;
  in.policy = q.policy;
  in.cluster = q.cluster;
  in.budget_gpu_hours = q.budget_gpu_hours.value_or(0);
  in.seed = q.seed.value_or(1);
  return in;
}

}  // namespace

std::vector<RecordedEvent> read_json_lines(const std::string& path, const std::string& name,
                                           std::vector<DamagedInput>& damaged) {
  std::vector<RecordedEvent> out;
  std::string text;
  try {
    regular_file_size(path, "journal");
    text = read_file(path);
  } catch (const std::exception& e) {
    damaged.push_back({name, std::string("cannot be read: ") + e.what()});
    return out;
  }
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (trim(line).empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      damaged.push_back({fmt::format("{}:{}", name, number), "not a JSON record (a truncated or edited line): skipped"});
      continue;
    }
    out.push_back({number, std::move(j)});
  }
  return out;
}

CampaignRecord::CampaignRecord(std::string dir) : dir_(std::move(dir)) {
  const fs::path journal = fs::path(dir_) / "journal.jsonl";
  if (!is_file(journal)) throw InputError({dir_, 0, 0}, "DIR", "no campaign here (no journal.jsonl)");
  events_ = read_json_lines(journal.string(), "journal.jsonl", damaged_);
  if (events_.empty() || ledger::kind_of(events_.front().event) != ledger::EventKind::Campaign)
    throw InputError({journal.string(), events_.empty() ? 1 : events_.front().line, 0}, "event",
                     "the journal does not start with the campaign's inputs (a `campaign` event)");
  try {
    inputs_ = read_inputs(ledger::campaign_started(events_.front().event).inputs);
  } catch (const nlohmann::json::exception& e) {
    throw InputError({journal.string(), events_.front().line, 0}, "inputs", std::string("not a campaign's inputs: ") + e.what());
  }
}

std::string CampaignRecord::trial_dir(int trial) const {
  const fs::path trials = fs::path(dir_) / "trials";
  if (!is_dir(trials)) return "";
  const std::string prefix = fmt::format("{:04d}-", trial);
  std::error_code ec;
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(trials, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && is_dir(e.path())) found.push_back(e.path().string());
  }
  std::sort(found.begin(), found.end());
  return found.empty() ? "" : found.front();
}

std::string CampaignRecord::run_dir(int trial, int run, const std::string& recorded,
                                    std::vector<DamagedInput>& damaged) const {
  const std::string td = trial_dir(trial);
  if (!td.empty()) {
    const fs::path here = fs::path(td) / fmt::format("run-{}", run);
    if (is_dir(here)) return here.string();
  }
  if (recorded.empty() || !is_dir(recorded)) return "";
  damaged.push_back({fmt::format("trials/{:04d}-*/run-{}", trial, run),
                     fmt::format("trial {} run {} is not in the campaign directory; read from the path the journal recorded, {}",
                                 trial, run, recorded)});
  return recorded;
}

std::optional<nlohmann::json> CampaignRecord::run_spec(const std::string& run_dir, std::vector<DamagedInput>& damaged) const {
  const fs::path journal = fs::path(run_dir) / "journal.jsonl";
  if (!is_file(journal)) return std::nullopt;
  for (const RecordedEvent& e : read_json_lines(journal.string(), relative(journal.string()), damaged)) {
    if (e.event.value("event", "") == "launching" && e.event.contains("spec")) return e.event.at("spec");
  }
  return std::nullopt;
}

std::string CampaignRecord::run_log(const std::string& run_dir, std::vector<DamagedInput>& damaged) const {
  std::vector<fs::path> candidates = {fs::path(run_dir) / "run.log", fs::path(run_dir) / "run.log.gz"};
  if (const auto spec = run_spec(run_dir, damaged)) {
    const std::string recorded = spec->value("log_path", "");
    if (!recorded.empty()) {
      candidates.push_back(fs::path(run_dir) / fs::path(recorded).filename());
      candidates.push_back(fs::path(recorded));
    }
  }
  for (const fs::path& p : candidates) {
    if (is_file(p)) return p.string();
  }
  return "";
}

std::optional<recipe::Recipe> CampaignRecord::launched_recipe(const std::string& run_dir,
                                                             std::vector<DamagedInput>& damaged) const {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(run_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() <= 12 || name.compare(name.size() - 12, 12, ".attune.yaml") != 0) continue;
    try {
      return recipe::Recipe::load(e.path().string(), inputs_.options);
    } catch (const InputError& err) {
      damaged.push_back({relative(e.path().string()), std::string("the launched recipe does not load: ") + err.what()});
    }
  }
  return std::nullopt;
}

OriginalRecipe CampaignRecord::original(std::vector<DamagedInput>& damaged) const {
  if (fs::exists(inputs_.file)) {
    try {
      return {load_launch_target(inputs_.file, inputs_.options).recipe, inputs_.file};
    } catch (const InputError& e) {
      damaged.push_back({"journal.jsonl:1", fmt::format("the inputs' recipe {} does not load ({}); using the copy the baseline launched",
                                                        inputs_.file, e.what())});
    }
  }
  for (int run = 1; run <= 8; ++run) {
    const std::string rd = run_dir(0, run, "", damaged);
    if (rd.empty()) continue;
    if (auto r = launched_recipe(rd, damaged)) {
      const std::string source = r->config_path();
      return {std::move(r), source};
    }
  }
  damaged.push_back({"journal.jsonl:1", fmt::format("the original recipe is neither at {} nor in trials/0000-baseline/run-K/: "
                                                    "edits, the gate and the recipes' context cannot be replayed",
                                                    inputs_.file)});
  return {};
}

std::string CampaignRecord::relative(const std::string& path) const {
  std::error_code ec;
  const fs::path rel = fs::relative(fs::absolute(path, ec), fs::absolute(dir_, ec), ec);
  if (ec || rel.empty() || rel.native().rfind("..", 0) == 0) return path;
  return rel.string();
}

}  // namespace attune::campaign
