// Observation: what a policy may know of one trial of the campaign — the
// proposal, how it ended (measured and kept or not, failed with the
// diagnoser's class, refused by the gate, not expressible, already tried),
// what was measured (throughput, step time, peak memory) and the setting the
// simulator reads the trial's recipe as. Never anything of a scenario's
// hidden truth: only what the runs' logs said.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/policy/proposal.h"
#include "attune/sim/workload.h"

namespace attune::policy {

enum class TrialOutcome {
  Baseline,    // the recipe as written
  Accepted,    // faster than the incumbent by more than the noise: the new incumbent
  Rejected,    // measured, not faster by more than the noise
  Demoted,     // was accepted; a re-measurement took it back
  Failed,      // the run failed (failure says how)
  Refused,     // the gate refused the edited recipe (reason says why); no GPU time
  Unrunnable,  // the recipe cannot express the proposal, or the model says it cannot fit
  Duplicate,   // a recipe already measured or known infeasible: not launched again
  Pending,     // approved and in flight beside others (--parallel): not judged yet
};
std::string to_string(TrialOutcome o);  // "accepted", ...
std::optional<TrialOutcome> outcome_by_name(const std::string& name);

struct Observation {
  int trial = 0;
  int parent = 0;                      // the incumbent's trial it was proposed from
  Proposal proposal;
  TrialOutcome outcome = TrialOutcome::Rejected;
  std::string reason;                  // the gate's, the failure's evidence, the acceptance verdict
  std::string failure;                 // diagnoser class ("oom", "hang", ...; "" = none)
  std::optional<double> tokens_per_s_per_gpu;  // median over its runs
  std::optional<double> tokens_ci95_low;       // 95% interval of the mean over its runs' blocks
  std::optional<double> tokens_ci95_high;
  std::optional<double> step_time_s;
  std::optional<double> peak_memory_gib;       // reserved, as the log prints it
  std::optional<sim::Workload> workload;       // the trial's recipe as the simulator reads it
  std::string recipe_identity;         // the trial's recipe by its settings (recipe::settings_identity; "" = unknown)
  // What its proposal changed in the file, as the recipe spells it
  // ("--micro-batch-size: 1 -> 2", follow-ups included; empty = not known).
  std::vector<std::string> edits;
  int runs = 0;
  double gpu_hours = 0;
};

nlohmann::json to_json(const Observation& o);

}  // namespace attune::policy
