// TrialRuns: how a campaign's trial gets its runs — planned against the
// budget (a run's expected cost from those so far; one run's worth kept
// back to verify a winner; runs in flight held together), journalled before
// launch (`run_launching`), made on the cluster (together when several are
// in flight), and recorded when they end (`run_finished`). A run the journal
// recalls as finished is not made again: its measurement is read back, so a
// resumed campaign gets exactly the numbers it had. An interrupted run is
// not recorded as finished: a resume measures it again.
//
// A proposal reaches the cluster here: plan() turns an approved trial into a
// DirectoryRunRequest, run_in_directory() prepares the Launch
// (cluster/launch.h) and submits it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attune/campaign/campaign_parts.h"
#include "attune/campaign/concurrent_runs.h"
#include "attune/campaign/run_measure.h"
#include "attune/campaign/trial.h"

namespace attune::campaign {

// A run the campaign is about to make, or one the journal recalls.
struct PlannedRun {
  int trial = 0, run = 0;
  std::string purpose;                 // baseline | screen | confirm | remeasure | rescreen | verify
  int steps_factor = 1;
  double cost = 0;                     // its expected cost, held against the budget while in flight
  std::optional<RunMeasure> recalled;  // it finished before: its measurement from the journal
  nlohmann::json recalled_record;      // and the journal's record of it
  ConcurrentRun job;                   // otherwise: what to run, and how it ended
};

struct TrialRunHooks {
  std::function<bool()> interrupted;
  std::function<void(const std::string& doing, double elapsed_s)> on_progress;
  std::function<void(const std::string&)> on_note;
};

class TrialRuns {
 public:
  TrialRuns(CampaignParts& parts, const AcceptanceRule& rule, TrialRunHooks hooks)
      : parts_(parts), rule_(rule), hooks_(std::move(hooks)) {}

  // From the runs recorded so far, with a margin (a resume recalls the same
  // runs in the same order, so it plans as the campaign did).
  double expected_cost(int steps_factor) const;
  // The trial's next run, or nullopt when the budget cannot pay for it (with
  // `in_flight` GPU-hours held by runs planned beside it) or the campaign
  // was interrupted. A recalled run is always returned.
  std::optional<PlannedRun> plan(Trial& t, const std::string& purpose, int steps_factor, double in_flight);
  // Makes the planned runs that were not recalled, together.
  void execute(std::vector<PlannedRun>& runs);
  // Records how the run ended, charges it, and absorbs it into its trial;
  // nullopt when it was interrupted (stopped() is then true). ClusterError
  // becomes InputError naming the run and how to resume.
  std::optional<RunMeasure> finish(Trial& t, PlannedRun& p);
  // plan, execute and finish one run.
  std::optional<RunMeasure> measure(Trial& t, const std::string& purpose, int steps_factor);

  bool stopped() const { return stopped_; }
  int launches() const { return launches_; }
  int failed_launches() const { return failed_launches_; }
  double run_seconds() const { return run_seconds_; }  // the clock's time spent waiting on runs

 private:
  bool interrupted() const { return stopped_ || (hooks_.interrupted && hooks_.interrupted()); }
  void count(const RunMeasure& m);

  CampaignParts& parts_;
  AcceptanceRule rule_;
  TrialRunHooks hooks_;
  bool stopped_ = false;
  int launches_ = 0, failed_launches_ = 0;
  double run_seconds_ = 0;
};

}  // namespace attune::campaign
