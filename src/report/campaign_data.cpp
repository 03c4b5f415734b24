// Reading a campaign directory back (campaign_data.h). The journal is read
// line by line and event by event so one damaged line or field costs only
// itself; every file is optional except that the directory must hold a
// journal or a summary.
#include "attune/report/campaign_data.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "attune/ledger/journal_event.h"
#include "attune/ledger/ledger_state.h"
#include "attune/recipe/wrapper_file.h"
#include "attune/util/error.h"
#include "attune/util/file.h"
#include "attune/util/json_input.h"
#include "attune/util/statistics.h"
#include "attune/util/text.h"

namespace attune::report {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string text_of(const json& j, const char* key) {
  const json* v = j.is_object() ? json_field::member(j, key) : nullptr;
  return v != nullptr && v->is_string() ? v->get<std::string>() : "";
}

int int_of(const json& j, const char* key, int fallback) {
  const json* v = j.is_object() ? json_field::member(j, key) : nullptr;
  return v != nullptr && v->is_number_integer() ? v->get<int>() : fallback;
}

std::optional<double> number_of(const json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  const std::optional<double> v = json_field::optional_number(j, key);
  return v && std::isfinite(*v) ? v : std::nullopt;
}

const json& member_of(const json& j, const char* key) {
  static const json none;
  const json* v = j.is_object() ? json_field::member(j, key) : nullptr;
  return v != nullptr ? *v : none;
}

// A JSON file that may be absent (null) or damaged (null, and a problem).
json read_json_file(const fs::path& path, const std::string& shown, std::vector<std::string>& problems) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return nullptr;
  try {
    return json::parse(read_file(path.string()));
  } catch (const json::exception& e) {
    problems.push_back(fmt::format("{}: not valid JSON ({}); left out", shown, e.what()));
  } catch (const InputError& e) {
    problems.push_back(fmt::format("{}: {}; left out", shown, e.what()));
  }
  return nullptr;
}

// The journal's events; a line that is not a JSON object is named and left out.
std::vector<json> read_journal(const fs::path& path, std::vector<std::string>& problems) {
  std::vector<json> events;
  std::string text;
  try {
    text = read_file(path.string());
  } catch (const InputError& e) {
    problems.push_back(fmt::format("journal.jsonl: {}", e.what()));
    return events;
  }
  const std::vector<std::string> lines = split(text, '\n');
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (trim(lines[i]).empty()) continue;
    const bool last = i + 1 == lines.size();  // no newline after it: written partly
    std::string why = "not a JSON object";
    try {
      json e = json::parse(lines[i]);
      if (e.is_object()) {
        events.push_back(std::move(e));
        continue;
      }
    } catch (const json::exception& e) {
      why = e.what();
    }
    problems.push_back(fmt::format("journal.jsonl:{}: {} ({}); the event is left out", i + 1,
                                   last ? "truncated line" : "damaged line", why));
  }
  return events;
}

// trials/NNNN-name directories by trial number.
std::map<int, std::string> trial_dirs(const fs::path& dir) {
  std::map<int, std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir / "trials", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() < 5 || name[4] != '-' || !std::all_of(name.begin(), name.begin() + 4, ::isdigit)) continue;
    out[std::stoi(name.substr(0, 4))] = "trials/" + name;
  }
  return out;
}

std::optional<Interval> block_interval(const std::vector<double>& blocks) {
  if (blocks.size() < 2) return std::nullopt;
  const double n = static_cast<double>(blocks.size());
  double mean = 0, var = 0;
  for (double b : blocks) mean += b / n;
  for (double b : blocks) var += (b - mean) * (b - mean) / (n - 1);
  const double half = 1.96 * std::sqrt(var / n);
  return Interval{mean - half, mean + half};
}

// One tool call as a line: "propose(lever_or_key = tp, value = 1): why".
std::string tool_call_line(const json& call) {
  json args = member_of(call, "arguments");
  if (args.is_string()) {
    try {
      args = json::parse(args.get<std::string>());
    } catch (const json::exception&) {
    }
  }
  std::string why, shown;
  if (args.is_object()) {
    for (const auto& [k, v] : args.items()) {
      if (k == "rationale" || k == "reason") {
        why = v.is_string() ? v.get<std::string>() : v.dump();
        continue;
      }
      if (!shown.empty()) shown += ", ";
      shown += k + " = " + (v.is_string() ? v.get<std::string>() : v.dump());
    }
  } else if (!args.is_null()) {
    shown = args.is_string() ? args.get<std::string>() : args.dump();
  }
  std::string line = text_of(call, "name") + "(" + shown + ")";
  if (!why.empty()) line += ": " + why;
  return line;
}

// What the model said and which tools it called, in order.
std::vector<std::string> llm_reasoning(const json& policy) {
  std::vector<std::string> out;
  const json& exchanges = member_of(member_of(policy, "llm"), "exchanges");
  if (!exchanges.is_array()) return out;
  for (const json& x : exchanges) {
    const json& a = member_of(x, "assistant");
    if (!a.is_object()) continue;
    const std::string said = text_of(a, "text");
    if (!trim(said).empty()) out.push_back("said: " + said);
    const json& calls = member_of(a, "tool_calls");
    if (!calls.is_array()) continue;
    for (const json& c : calls) out.push_back(tool_call_line(c));
  }
  return out;
}

// Builds the rows and the best-so-far line from the events, in order.
class JournalReader {
 public:
  JournalReader(CampaignData& d, const std::map<int, std::string>& dirs) : d_(d), dirs_(dirs) {}

  void event(const json& e) {
    using ledger::EventKind;
    const EventKind kind = ledger::kind_of(e);
    const bool incumbent_changed = ledger::apply(state_, e);  // who the incumbent is, as tune and bench say
    const int n = int_of(e, "trial", -1);
    if (kind == EventKind::Campaign) d_.inputs = member_of(e, "inputs");
    else if (kind == EventKind::Finished && d_.summary.is_null()) d_.summary = member_of(e, "summary");
    else if (kind == EventKind::PolicyStop) append(d_.llm_stop_reasoning, llm_reasoning(member_of(e, "policy")));
    if (n < 0) return;
    if (kind == EventKind::Proposal) proposal(row(n), e);
    else if (kind == EventKind::RunFinished) run_finished(row(n), e);
    else if (kind == EventKind::Verdict) verdict(row(n), member_of(e, "verdict"));
    else if (kind == EventKind::Trial) trial(row(n), e);
    else if (kind == EventKind::Rescreened) row(n).outcome = text_of(e, "outcome");
    else if (kind == EventKind::Demoted) demoted(row(n), e);
    else if (kind == EventKind::Verification) verification(row(n), e);
    // A verdict that accepts is followed at once by its trial's record.
    if (kind == EventKind::Trial || kind == EventKind::Rescreened || (incumbent_changed && kind != EventKind::Verdict))
      mark_best();
  }

  void finish() {
    mark_best();  // the line runs on to what was spent in all, with the incumbent as it ended
    for (auto& [n, r] : rows_) {
      settle(r);
      d_.trials.push_back(std::move(r));
    }
  }

 private:
  static void append(std::vector<std::string>& to, std::vector<std::string> more) {
    to.insert(to.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }

  TrialRow& row(int n) {
    TrialRow& r = rows_[n];
    r.trial = n;
    if (n == 0 && r.label.empty()) r.label = "baseline";
    return r;
  }

  void proposal(TrialRow& r, const json& e) {
    r.parent = int_of(e, "parent", 0);
    const json& p = member_of(e, "proposal");
    r.rule = text_of(p, "rule");
    r.why = text_of(p, "why");
    r.predicted_memory_gib = number_of(p, "predicted_memory_gib");
    std::vector<std::string> levers, values, label;
    const json& changes = member_of(p, "changes");
    if (changes.is_array()) {
      for (const json& c : changes) {
        levers.push_back(text_of(c, "dimension"));
        values.push_back(text_of(c, "to"));
        label.push_back(fmt::format("{} {} -> {}", text_of(c, "dimension"), text_of(c, "from"), text_of(c, "to")));
      }
    }
    r.lever = fmt::format("{}", fmt::join(levers, ", "));
    r.value = fmt::format("{}", fmt::join(values, ", "));
    r.label = fmt::format("{}", fmt::join(label, ", "));
    r.llm_reasoning = llm_reasoning(member_of(e, "policy"));
  }

  void run_finished(TrialRow& r, const json& e) {
    const json& m = member_of(e, "measurement");
    RunRecord run;
    run.run = int_of(e, "run", 0);
    run.purpose = text_of(e, "purpose");
    run.gpu_hours = number_of(e, "gpu_hours").value_or(0);
    run.ok = member_of(m, "ok").is_boolean() && m["ok"].get<bool>();
    if (run.ok) run.tokens_per_s_per_gpu = number_of(m, "tokens_per_s_per_gpu");
    const json& blocks = member_of(m, "blocks");
    if (blocks.is_array()) {
      for (const json& b : blocks) {
        if (b.is_number()) run.blocks.push_back(b.get<double>());
      }
    }
    run.peak_memory_gib = number_of(m, "peak_reserved_gib");
    if (const auto it = dirs_.find(r.trial); it != dirs_.end()) run.dir = it->second + "/run-" + std::to_string(run.run);
    d_.gpu_hours += run.gpu_hours;
    r.gpu_hours += run.gpu_hours;
    if (!run.ok) {
      r.failure = text_of(m, "failure");
      r.evidence = text_of(m, "evidence");
    }
    r.runs.push_back(std::move(run));
  }

  static void verdict(TrialRow& r, const json& v) {
    const std::string why = text_of(v, "why");
    r.verdict = text_of(v, "decision") + (why.empty() ? "" : ": " + why);
  }

  void trial(TrialRow& r, const json& e) {
    r.outcome = text_of(e, "outcome");
    if (const std::string f = text_of(e, "failure"); !f.empty()) {
      r.failure = f;
      r.evidence = text_of(e, "reason");
    } else if (r.verdict.empty()) {
      r.verdict = text_of(e, "reason");
    }
  }

  void demoted(TrialRow& r, const json& e) {
    r.outcome = "demoted";
    verdict(r, member_of(e, "verdict"));
  }

  // The winner's loss check; a suspect winner is no longer the incumbent.
  void verification(TrialRow& r, const json& e) {
    d_.verification = e;
    const ledger::TrialState* t = state_.trial(r.trial);
    if (!t || t->outcome != "suspect") return;
    // As the summary says it: no steps to compare means it failed when re-run.
    r.outcome = int_of(member_of(e, "loss"), "steps", 0) == 0 ? "failed_on_rerun" : "suspect";
  }

  // The median of a trial's measured runs, the verification run included as
  // the campaign counts it (the summary's figure).
  static std::optional<double> measured(const TrialRow& r) {
    std::vector<double> means;
    for (const RunRecord& run : r.runs) {
      if (run.tokens_per_s_per_gpu) means.push_back(*run.tokens_per_s_per_gpu);
    }
    if (means.empty()) return std::nullopt;
    return median(means);
  }

  void mark_best() {
    const auto it = rows_.find(state_.incumbent);
    if (it == rows_.end()) return;
    const std::optional<double> t = measured(it->second);
    if (t) d_.best_so_far.push_back({d_.gpu_hours, *t, state_.incumbent});
  }

  static void settle(TrialRow& r) {
    r.tokens_per_s_per_gpu = measured(r);
    std::vector<double> blocks;
    for (const RunRecord& run : r.runs) {
      if (run.ok) blocks.insert(blocks.end(), run.blocks.begin(), run.blocks.end());
      if (run.peak_memory_gib) r.memory_gib = std::max(r.memory_gib.value_or(0), *run.peak_memory_gib);
    }
    r.interval = block_interval(blocks);
  }

  CampaignData& d_;
  const std::map<int, std::string>& dirs_;
  std::map<int, TrialRow> rows_;
  ledger::LedgerState state_;
};

// A run's diagnosis.json fills in the memory the journal did not keep and
// says what one GPU holds.
void read_diagnoses(const fs::path& dir, CampaignData& d) {
  for (TrialRow& r : d.trials) {
    for (RunRecord& run : r.runs) {
      if (run.dir.empty()) continue;
      const json diag = read_json_file(dir / run.dir / "diagnosis.json", run.dir + "/diagnosis.json", d.problems);
      const json& mem = member_of(diag, "memory");
      if (const auto cap = number_of(mem, "capacity_gib")) d.gpu_memory_gib = std::max(d.gpu_memory_gib.value_or(0), *cap);
      if (d.framework.empty()) d.framework = text_of(diag, "framework");
      if (run.peak_memory_gib) continue;
      run.peak_memory_gib = number_of(mem, "peak_reserved_gib");
      if (!run.peak_memory_gib) run.peak_memory_gib = number_of(mem, "peak_allocated_gib");
      if (run.peak_memory_gib) r.memory_gib = std::max(r.memory_gib.value_or(0), *run.peak_memory_gib);
    }
  }
}

// Framework, model and hardware from the baseline's wrapper as launched,
// else from the inputs.
void read_recipe_facts(const fs::path& dir, const std::map<int, std::string>& dirs, CampaignData& d) {
  std::string framework = text_of(d.inputs, "framework");
  d.model = text_of(d.inputs, "model");
  d.hardware.gpu = text_of(d.inputs, "gpu");
  d.hardware.nodes = int_of(d.inputs, "nodes", 0);
  d.hardware.gpus_per_node = int_of(d.inputs, "gpus_per_node", 0);
  std::error_code ec;
  const auto base = dirs.find(0);
  const fs::path run1 = base == dirs.end() ? fs::path() : dir / base->second / "run-1";
  for (fs::directory_iterator it(run1, ec), end; base != dirs.end() && !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.ends_with(".attune.yaml")) continue;
    try {
      const recipe::WrapperFile w = recipe::parse_wrapper_file(it->path().string(), read_file(it->path().string()));
      if (!w.framework.empty()) framework = w.framework;
      d.framework_version = w.framework_version;
      d.container_image = w.launch.container_image;
      if (!w.model.empty()) d.model = w.model;
      if (!w.hardware.gpu.empty()) d.hardware = w.hardware;
    } catch (const InputError& e) {
      d.problems.push_back(fmt::format("{}/{}: {}; left out", base->second + "/run-1", name, e.what()));
    }
  }
  if (!framework.empty()) d.framework = framework;
  if (!d.gpu_memory_gib) {
    if (const recipe::GpuSpec* g = recipe::gpu_spec(d.hardware.gpu)) d.gpu_memory_gib = g->hbm_gib;
  }
}

void read_best(const fs::path& dir, CampaignData& d) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir / "best", ec), end; !ec && it != end; it.increment(ec)) files.push_back(it->path());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    try {
      BestFile b{f.filename().string(), read_file(f.string())};
      (b.name.ends_with(".diff") ? d.best_diffs : d.best_files).push_back(std::move(b));
    } catch (const InputError& e) {
      d.problems.push_back(fmt::format("best/{}: {}; left out", f.filename().string(), e.what()));
    }
  }
}

}  // namespace

const TrialRow* CampaignData::trial(int n) const {
  for (const TrialRow& r : trials) {
    if (r.trial == n) return &r;
  }
  return nullptr;
}

CampaignData read_campaign(const std::string& dir_text) {
  const fs::path dir(dir_text);
  std::error_code ec;
  const bool has_journal = fs::exists(dir / "journal.jsonl", ec), has_summary = fs::exists(dir / "summary.json", ec);
  if (!has_journal && !has_summary)
    throw InputError({dir_text, 0, 0}, "journal.jsonl", "not a campaign directory: it holds neither journal.jsonl nor summary.json");
  CampaignData d;
  d.dir = dir_text;
  d.summary = read_json_file(dir / "summary.json", "summary.json", d.problems);
  if (!has_journal) d.problems.push_back("journal.jsonl: missing; only the summary is shown");
  const std::map<int, std::string> dirs = trial_dirs(dir);
  JournalReader reader(d, dirs);
  if (has_journal) {
    for (const json& e : read_journal(dir / "journal.jsonl", d.problems)) {
      try {
        reader.event(e);
      } catch (const json::exception& x) {
        d.problems.push_back(fmt::format("journal.jsonl: a '{}' event of trial {} could not be read ({}); left out",
                                         text_of(e, "event"), int_of(e, "trial", -1), x.what()));
      }
    }
  }
  reader.finish();
  if (d.inputs.is_null()) d.inputs = read_json_file(dir / "campaign.json", "campaign.json", d.problems);
  read_diagnoses(dir, d);
  read_recipe_facts(dir, dirs, d);
  read_best(dir, d);
  return d;
}

}  // namespace attune::report
