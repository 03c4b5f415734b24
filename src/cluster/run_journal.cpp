#include "attune/cluster/run_journal.h"

#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "attune/util/error.h"
#include "attune/util/json_input.h"
#include "attune/util/utc_time.h"

namespace attune::cluster {

namespace {

using json = nlohmann::json;
using namespace json_field;

}  // namespace

// ------------------------------------------------------------ RunJournal

RunJournal::RunJournal(std::string path, bool durable) : file_(std::move(path), durable) { load(); }

RunJournal::~RunJournal() = default;

// A record that is JSON but no journal record (an unknown event, a missing
// field) is damage wherever it is, the last line included: only an append
// that never finished tears a line, and JsonlFile has left that out already.
void RunJournal::load() {
  for (const JsonlFile::Line& line : file_.read_lines()) {
    try {
      apply(line.record);
    } catch (const InputError& e) {
      throw InputError({file_.path(), line.number, 0}, "",
                       "corrupt run journal record: " + format_error({}, e.key(), e.message()));
    } catch (const std::exception& e) {
      throw InputError({file_.path(), line.number, 0}, "", std::string("corrupt run journal record: ") + e.what());
    }
  }
}

JournalEntry& RunJournal::entry(const std::string& run, bool create) {
  if (const auto it = index_.find(run); it != index_.end()) return entries_[it->second];
  if (!create) throw std::invalid_argument(fmt::format("run '{}' is not in the run journal", run));
  index_.emplace(run, entries_.size());
  JournalEntry& e = entries_.emplace_back();
  e.run = run;
  e.spec.name = run;
  return e;
}

// Applies one record to the in-memory state; InputError for a malformed one.
// Records are applied leniently (a record for a run not seen yet creates it):
// several journals may have appended to one file.
void RunJournal::apply(const json& r) {
  if (!r.is_object()) wrong_type("record", "an object", r);
  std::string event, run;
  read_string(r, "event", event);
  read_string(r, "run", run);
  if (run.empty()) throw InputError({}, "run", "missing run name");
  if (event == "launching") {
    const json* spec = member(r, "spec");
    if (spec == nullptr) throw InputError({}, "spec", "missing");
    RunSpec s = run_spec_from_json(*spec);
    std::string cluster, recipe;
    read_string(r, "cluster", cluster);
    read_string(r, "recipe", recipe);
    JournalEntry& e = entry(run, true);
    e.cluster = std::move(cluster);
    e.spec = std::move(s);
    e.recipe = std::move(recipe);
    e.id.clear();
    e.status = RunStatus{};
    e.state = "launching";
  } else if (event == "launched") {
    std::string cluster, id;
    read_string(r, "cluster", cluster);
    read_string(r, "id", id);
    if (id.empty()) throw InputError({}, "id", "missing run id");
    JournalEntry& e = entry(run, true);
    if (!cluster.empty()) e.cluster = std::move(cluster);
    e.id = std::move(id);
    e.state = "launched";
  } else if (event == "finished") {
    const json* status = member(r, "status");
    if (status == nullptr) throw InputError({}, "status", "missing");
    RunStatus s = run_status_from_json(*status);
    if (!is_final(s.state)) throw InputError({}, "status", fmt::format("state '{}' is not final", to_string(s.state)));
    JournalEntry& e = entry(run, true);
    e.state = to_string(s.state);
    e.status = std::move(s);
  } else {
    throw InputError({}, "event", fmt::format("unknown event '{}'", event));
  }
}

// One record, one line, durable before it is applied (util/jsonl_file.h).
void RunJournal::append(json record) {
  record["at"] = utc_now_iso();
  file_.append(record);
}

void RunJournal::launching(const std::string& run, const std::string& cluster, const RunSpec& spec,
                           const std::string& recipe) {
  std::lock_guard lock(mu_);
  if (run.empty()) throw std::invalid_argument("a journalled run needs a name");
  if (const auto it = index_.find(run); it != index_.end() && entries_[it->second].state != "launching")
    throw std::invalid_argument(fmt::format("run '{}' is already in the run journal ({}): run names are unique",
                                            run, entries_[it->second].state));
  json r{{"event", "launching"}, {"run", run}, {"cluster", cluster}, {"spec", run_spec_json(spec)}, {"recipe", recipe}};
  append(r);
  apply(r);
}

void RunJournal::launched(const std::string& run, const RunId& id) {
  std::lock_guard lock(mu_);
  const JournalEntry& e = entry(run, false);
  if (e.state != "launching" && e.state != "launched")
    throw std::invalid_argument(fmt::format("run '{}' has finished ({}): it cannot be launched again", run, e.state));
  if (id.id.empty()) throw std::invalid_argument(fmt::format("run '{}': the cluster's id is empty", run));
  json r{{"event", "launched"}, {"run", run}, {"cluster", id.cluster}, {"id", id.id}};
  append(r);
  apply(r);
}

void RunJournal::finished(const std::string& run, const RunStatus& status) {
  std::lock_guard lock(mu_);
  entry(run, false);
  if (!is_final(status.state))
    throw std::invalid_argument(
        fmt::format("run '{}': '{}' is not a final state", run, to_string(status.state)));
  json r{{"event", "finished"}, {"run", run}, {"status", run_status_json(status)}};
  append(r);
  apply(r);
}

std::vector<JournalEntry> RunJournal::unfinished() const {
  std::lock_guard lock(mu_);
  std::vector<JournalEntry> out;
  for (const JournalEntry& e : entries_)
    if (e.state == "launching" || e.state == "launched") out.push_back(e);
  return out;
}

std::optional<JournalEntry> RunJournal::find(const std::string& run) const {
  std::lock_guard lock(mu_);
  const auto it = index_.find(run);
  if (it == index_.end()) return std::nullopt;
  return entries_[it->second];
}

std::vector<JournalEntry> RunJournal::entries() const {
  std::lock_guard lock(mu_);
  return entries_;
}

}  // namespace attune::cluster
