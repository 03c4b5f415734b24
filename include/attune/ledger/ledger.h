// Ledger: the campaign directory's journal.jsonl and what it says so far.
// Every event is appended and fsynced before the action it records takes
// effect (a proposal before its trial is judged, a run before it is
// launched, its end before anything is decided from it), so the journal is
// the single source of truth: a resumed campaign runs its loop again and
// recalls every proposal and finished run from here instead of asking or
// launching again.
//
// Resuming is folding the journal: each event the loop records that the
// journal already holds (the same kind, trial and run, in the same order) is
// taken from the journal instead of appended, so a campaign killed and
// resumed, or resumed after it finished, leaves the journal a campaign
// never killed would have left. state() is the fold of the events recorded
// so far (journal_event.h names them, ledger_state.h folds them).
//
// Crash tests kill attune right after its Nth appended record with
// ATTUNE_TEST_KILL_AFTER_EVENTS=N (SIGKILL, so nothing is flushed or
// cleaned up): the way to stop a campaign at exactly each kind of event.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/ledger/journal_event.h"
#include "attune/ledger/ledger_state.h"
#include "attune/util/jsonl_file.h"

namespace attune::ledger {

class Ledger {
 public:
  // Reads what is there (InputError naming the file and line of a damaged record).
  // Not `durable`: events are not fsynced (a campaign nothing will resume).
  explicit Ledger(std::string path, bool durable = true);

  const std::string& path() const { return file_.path(); }
  // Every record of the journal: what was there, and what was appended since.
  const std::vector<nlohmann::json>& events() const { return events_; }
  const LedgerState& state() const { return state_; }

  // Records the event: taken from the journal when it holds it and this
  // ledger has not recorded it yet, else appended (with "at"), durable when
  // this returns. Either way folded into state(). Returns the record kept.
  const nlohmann::json& record(nlohmann::json event);
  template <typename Event>
  const nlohmann::json& record(const Event& event) {
    return record(to_json(event));
  }

  // The latest record of this kind for a trial (and run, when run >= 0); nullptr if none.
  const nlohmann::json* find(EventKind kind, int trial, int run = -1) const;

 private:
  using Key = std::tuple<int, int, int>;  // kind, trial, run
  static Key key_of(const nlohmann::json& record);

  JsonlFile file_;
  std::vector<nlohmann::json> events_;
  std::map<Key, std::deque<std::size_t>> not_recorded_;  // journal records this ledger has not recorded again, in order
  LedgerState state_;
};

}  // namespace attune::ledger
