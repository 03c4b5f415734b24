#include "attune/report/export_record.h"

#include <filesystem>

#include <fmt/format.h>

#include "attune/report/campaign_data.h"
#include "attune/report/sha256.h"
#include "attune/util/error.h"
#include "attune/util/file.h"

namespace attune::report {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json text_or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }
json positive_or_null(int n) { return n > 0 ? json(n) : json(nullptr); }

json value_at(const json& j, const char* key) {
  return j.is_object() && j.contains(key) ? j[key] : json(nullptr);
}

json throughput(const CampaignData& d, int trial, const json& claimed) {
  const TrialRow* t = d.trial(trial);
  json interval = nullptr;
  if (t != nullptr && t->interval) interval = json::array({t->interval->low, t->interval->high});
  int runs = 0;
  if (t != nullptr) {
    for (const RunRecord& r : t->runs) runs += r.ok ? 1 : 0;
  }
  return {{"trial", trial}, {"tokens_per_s_per_gpu", claimed.is_number() ? claimed : json(nullptr)}, {"ci95", interval},
          {"measured_runs", runs}};
}

// The run logs of one trial with their hashes; a log that is gone is a problem.
void hash_logs(const CampaignData& d, int trial, json& logs, json& problems) {
  const TrialRow* t = d.trial(trial);
  if (t == nullptr) return;
  for (const RunRecord& r : t->runs) {
    if (r.dir.empty()) {
      problems.push_back(fmt::format("trial {} run {}: its directory is missing", trial, r.run));
      continue;
    }
    std::error_code ec;
    bool found = false;
    for (fs::directory_iterator it(fs::path(d.dir) / r.dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (!name.ends_with(".log") && !name.ends_with(".log.gz")) continue;
      try {
        const FileHash h = sha256_file(it->path().string());
        logs.push_back({{"trial", trial}, {"run", r.run}, {"purpose", r.purpose}, {"path", r.dir + "/" + name},
                        {"bytes", h.bytes}, {"sha256", h.sha256}});
        found = true;
      } catch (const InputError& e) {
        problems.push_back(e.what());
      }
    }
    if (!found) problems.push_back(fmt::format("{}: no run log to hash", r.dir));
  }
}

json file_hash(const fs::path& dir, const std::string& name) {
  std::error_code ec;
  if (!fs::is_regular_file(dir / name, ec)) return nullptr;
  const FileHash h = sha256_file((dir / name).string());
  return {{"path", name}, {"bytes", h.bytes}, {"sha256", h.sha256}};
}

// best/<recipe>, the original beside the baseline's first run, and the diff.
json recipe_files(const CampaignData& d, const json& best) {
  json r = {{"file", nullptr}, {"original", nullptr}, {"tuned", nullptr}, {"diff", nullptr},
            {"edits", value_at(best, "edits").is_array() ? best["edits"] : json::array()},
            {"changes", value_at(best, "changes").is_array() ? best["changes"] : json::array()}};
  if (!d.best_diffs.empty()) r["diff"] = d.best_diffs.front().text;
  if (d.best_files.empty()) return r;
  const BestFile& tuned = d.best_files.front();
  r["file"] = tuned.name;
  r["tuned"] = tuned.text;
  const TrialRow* base = d.trial(0);
  if (base != nullptr && !base->runs.empty() && !base->runs.front().dir.empty()) {
    const fs::path original = fs::path(d.dir) / base->runs.front().dir / tuned.name;
    std::error_code ec;
    if (fs::is_regular_file(original, ec)) r["original"] = read_file(original.string());
  }
  return r;
}

}  // namespace

json export_record(const std::string& campaign_dir) {
  const CampaignData d = read_campaign(campaign_dir);
  if (!d.summary.is_object())
    throw InputError({(fs::path(campaign_dir) / "summary.json").string(), 0, 0}, "summary",
                     "the campaign has not finished: there is no summary to export (finish it with attune tune --resume)");
  const json& s = d.summary;
  const json best = value_at(s, "best");
  const int best_trial = value_at(best, "trial").is_number_integer() ? best["trial"].get<int>() : 0;
  const std::string verification = value_at(s, "verification").is_string() ? s["verification"].get<std::string>() : "";
  json logs = json::array(), problems = json::array();
  for (const std::string& p : d.problems) problems.push_back(p);
  hash_logs(d, 0, logs, problems);
  if (best_trial != 0) hash_logs(d, best_trial, logs, problems);
  json record = {
      {"format", kExportFormat},
      {"attune_version", text_or_null(value_at(d.inputs, "version").is_string() ? d.inputs["version"].get<std::string>() : "")},
      {"framework",
       {{"name", text_or_null(d.framework)}, {"version", text_or_null(d.framework_version)},
        {"container_image", text_or_null(d.container_image)}}},
      {"model", text_or_null(d.model)},
      {"hardware",
       {{"gpu", text_or_null(d.hardware.gpu)}, {"nodes", positive_or_null(d.hardware.nodes)},
        {"gpus_per_node", positive_or_null(d.hardware.gpus_per_node)}}},
      {"campaign",
       {{"policy", value_at(s, "policy")}, {"cluster", value_at(s, "cluster")}, {"seed", value_at(d.inputs, "seed")},
        {"budget_gpu_hours", value_at(s, "budget_gpu_hours")}, {"trials", value_at(s, "trials")},
        {"stop_reason", value_at(s, "stop_reason")}}},
      {"recipe", recipe_files(d, best)},
      {"throughput",
       {{"unit", "tokens/s/GPU"},
        {"before", throughput(d, 0, value_at(value_at(s, "baseline"), "tokens_per_s_per_gpu"))},
        {"after", throughput(d, best_trial, value_at(best, "tokens_per_s_per_gpu"))},
        {"gain", value_at(s, "gain")}}},
      {"gpu_hours", value_at(s, "gpu_hours").is_number() ? s["gpu_hours"] : json(d.gpu_hours)},
      {"loss_parity",
       {{"verified", verification.starts_with("passed") || verification.starts_with("not needed")},
        {"verdict", verification},
        {"event", d.verification.is_null() ? json(nullptr) : d.verification}}},
      {"logs", logs},
      {"journal", file_hash(campaign_dir, "journal.jsonl")},
      {"problems", problems},
  };
  return record;
}

std::string export_text(const json& record) {
  return record.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace attune::report
