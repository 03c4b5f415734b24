// LedgerState: what a campaign's journal says so far, folded one event at a
// time by apply() — the trials with their outcomes and measured runs, the
// GPU-hours spent, and the incumbent. apply() is the one statement of who
// the incumbent is: tune, bench and the report all fold the same events
// through it, so they cannot disagree (an accepted candidate, a demotion, a
// winner its verification found suspect).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attune::ledger {

struct TrialState {
  int trial = 0;
  int parent = 0;                 // the incumbent it was accepted over
  std::string outcome;            // the trial event's, then a rescreen's, a demotion's ("demoted"), "suspect"
  std::optional<double> decided_tokens_per_s_per_gpu;  // as the trial event recorded it at its decision
  std::vector<double> run_tokens;  // each successful run's throughput, in order
  double gpu_hours = 0;
  int runs = 0;
};

struct LedgerState {
  std::map<int, TrialState> trials;  // by trial number; the baseline is trial 0
  int incumbent = 0;
  double spent_gpu_hours = 0;
  int finished_runs = 0;
  double gpu_hours_per_steps_factor = 0;  // the sum over finished runs of each one's GPU-hours per step factor
  bool finished = false;

  const TrialState* trial(int n) const;
  // The median throughput of the incumbent's successful runs so far; none before one.
  std::optional<double> incumbent_tokens_per_s_per_gpu() const;
};

// Folds one journal record into the state; true when it changed the
// incumbent. A record of a kind it does not know changes nothing.
bool apply(LedgerState& state, const nlohmann::json& record);

}  // namespace attune::ledger
