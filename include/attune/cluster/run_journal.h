// RunJournal: the append-only record of a campaign's runs, so that Ctrl-C or
// a crash never leaves a run attune cannot find again. A run is journalled
// "launching" (its spec, cluster and recipe) before it is submitted,
// "launched" (the cluster's id) right after submit returns, and finished with
// its final status; a restarted attune re-adopts what unfinished() lists —
// by id (Cluster::attach) or, for a run that never got one written down, by
// name (Cluster::find_run).
//
// The file is JSON Lines, one record per line:
//   {"event":"launching","run":NAME,"cluster":C,"spec":{...},"recipe":PATH,"at":ISO-8601}
//   {"event":"launched","run":NAME,"cluster":C,"id":ID,"at":...}
//   {"event":"finished","run":NAME,"status":{"state":S,"reason":R,"elapsed_s":E},"at":...}
// The file is a JsonlFile (util/jsonl_file.h): each record is one write() of
// a whole line on an O_APPEND descriptor, then fsync, so a crash leaves at
// most a torn last line, and several journals (or threads) appending to one
// file never interleave their lines (on a local file system). Reading
// ignores a torn last line (no newline, or not a JSON object) and cuts it off
// before the next append; a bad line anywhere else — a record that is not
// valid JSON, or one that is no journal record — is an InputError naming the
// file and line. Later records win: the latest state of each run.
//
// Thread-safe: one RunJournal may be shared by the threads watching runs.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/cluster/run.h"
#include "attune/util/jsonl_file.h"

namespace attune::cluster {

struct JournalEntry {
  std::string run;      // the RunSpec name, unique
  std::string cluster;  // the cluster's name ("slurm", "local", ...)
  std::string id;       // the cluster's id of the run; "" until the cluster gave one
  RunSpec spec;
  std::string state;    // "launching", "launched", or a final RunState name ("completed", ...)
  RunStatus status;     // set once finished
  std::string recipe;   // the recipe file launched (free text)
};

class RunJournal {
 public:
  // Opens (creating its parent directories; the file itself on the first
  // append) and reads the journal at `path`. InputError naming the file and
  // line for a corrupt record, or naming the file when it cannot be read.
  // Not `durable`: appends are not fsynced (JsonlFile).
  explicit RunJournal(std::string path, bool durable = true);
  ~RunJournal();
  RunJournal(const RunJournal&) = delete;
  RunJournal& operator=(const RunJournal&) = delete;

  const std::string& path() const { return file_.path(); }

  // Before submit. A name already launched or finished is refused
  // (std::invalid_argument: run names are unique); one still "launching"
  // (a restart that found it was never submitted) is journalled again.
  void launching(const std::string& run, const std::string& cluster, const RunSpec& spec, const std::string& recipe);
  // Right after submit returns (or when a restart found the run by name);
  // refused (std::invalid_argument) for a run that has finished.
  void launched(const std::string& run, const RunId& id);
  // status.state must be final. launched() and finished() for a run never
  // journalled are std::invalid_argument.
  void finished(const std::string& run, const RunStatus& status);

  // launching/launched, not finished: what a restart must re-adopt.
  std::vector<JournalEntry> unfinished() const;
  std::optional<JournalEntry> find(const std::string& run) const;
  // The latest state of each run, in launch order.
  std::vector<JournalEntry> entries() const;

  // An append that fails (disk full, permissions) throws InputError naming
  // the file, and the in-memory state is left as it was; a short write's
  // torn line is cut off again where it is still the file's tail.

 private:
  void load();
  void apply(const nlohmann::json& record);
  void append(nlohmann::json record);
  JournalEntry& entry(const std::string& run, bool create);

  mutable std::mutex mu_;  // guards file_ as well: a JsonlFile is not thread-safe
  JsonlFile file_;
  std::vector<JournalEntry> entries_;
  std::unordered_map<std::string, std::size_t> index_;
};

}  // namespace attune::cluster
