// CampaignJournal: the campaign directory's journal.jsonl — every event of a
// campaign, appended and fsynced before the action it records takes effect
// (a proposal before its trial is judged, a run before it is launched, its
// end before anything is decided from it). It is the single source of truth:
// a resumed campaign re-runs its loop and recalls from here every proposal
// and every finished run instead of asking or launching again, so nothing is
// lost or run twice and the budget is exactly what was spent.
//
// Events (one JSON object per line, each with "event" and "at"):
//   campaign {inputs}           the first line
//   proposal {trial, parent, proposal}
//   trial {trial, outcome, reason, ...}       how a trial ended
//   run_launching {trial, run, purpose, dir}  before the run is submitted
//   run_finished {trial, run, status, gpu_hours, measurement}
//   verdict {trial, runs, verdict}            each acceptance test
//   demoted {trial, by}                        a re-measurement took a winner back
//   verification {trial, loss}                 the winner's loss against the baseline's
//   policy_note {trial, note}                  a policy's word to the user (an LLM falling back to rules)
//   policy_stop {trial, reason, policy}        the policy ends the search, with what it was based on
//   finished {summary}
//
// Crash tests kill attune right after its Nth record with
// ATTUNE_TEST_KILL_AFTER_EVENTS=N (SIGKILL, so nothing is flushed or
// cleaned up): the way to stop a campaign at exactly each kind of event.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/util/jsonl_file.h"

namespace attune::campaign {

class CampaignJournal {
 public:
  // Reads what is there (InputError naming the file and line of a damaged record).
  // Not `durable`: events are not fsynced (a campaign nothing will resume).
  explicit CampaignJournal(std::string path, bool durable = true);

  const std::string& path() const { return file_.path(); }
  const std::vector<nlohmann::json>& events() const { return events_; }

  // Appends the event (with "at"), durable when this returns (if the journal is).
  void record(nlohmann::json event);

  // The latest event of this kind for a trial (and run, when run >= 0); nullptr if none.
  const nlohmann::json* find(const std::string& event, int trial, int run = -1) const;

 private:
  JsonlFile file_;
  std::vector<nlohmann::json> events_;
};

}  // namespace attune::campaign
