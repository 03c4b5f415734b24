// DirectoryRun: one run of an approved recipe in its own directory, crash
// safe — what both `attune run` and every trial of `attune tune` do. The run
// is journalled in the directory (cluster/run_journal.h) before it is
// submitted, so the same call after a crash or a kill re-attaches to it, or
// reports how it ended, or submits it when attune died before the cluster got
// it — never launches it twice; it is followed with the hang watchdog and its
// log diagnosed with the recipe's context.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "attune/cluster/cluster.h"
#include "attune/cluster/cluster_config.h"
#include "attune/cluster/launch.h"
#include "attune/cluster/run.h"
#include "attune/cluster/run_watch.h"
#include "attune/diagnose/diagnosis.h"
#include "attune/gate/approved_recipe.h"
#include "attune/util/clock.h"

namespace attune::campaign {

struct DirectoryRunRequest {
  std::string run_dir;
  std::string run_name;               // unique, safe as a Slurm job name
  std::string recipe_file;            // what the journal names as the recipe
  int steps = 0;                      // 0: the recipe's measure.steps
  double budget_gpu_hours = -1;       // what is left (< 0: none): cuts the time limit
  std::string truth_file;             // a sim payload's scenario truth
  std::uint64_t seed = 1;             // this launch's noise (simulated clusters)
  double hang_factor = 10;
  double startup_allowance_s = 900;
  bool to_end = false;                // a real run goes on past the steps to measure
  bool durable = true;                // false: its journal and files are not fsynced (TuneRequest::durable)
};

struct DirectoryRunResult {
  cluster::RunId id;
  cluster::RunSpec spec;
  cluster::RunStatus status;
  bool reattached = false;            // adopted from the journal, not launched now
  bool already_ended = false;         // the journal already had its end
  std::optional<diagnose::Diagnosis> diagnosis;  // none when the run left no log
  double gpu_hours = 0;
};

struct DirectoryRunHooks {
  std::function<bool()> interrupted;                                  // cancel the run when it returns true
  std::function<void(const DirectoryRunResult&)> on_started;  // launched or adopted (status not yet known)
  std::function<void(const cluster::WatchProgress&, const cluster::RunSpec&)> on_progress;
  std::function<void(const std::string&)> on_note;
  Clock* clock = nullptr;  // the watchdog's time (nullptr: the real clock)
};

// The cluster's request for this run (its name for a new run, the
// step estimate, the binary a sim payload runs).
cluster::LaunchRequest launch_request_for(const DirectoryRunRequest& request, const gate::ApprovedRecipe& approved);

// ClusterError when the cluster refuses or loses the run; InputError when the
// directory holds a run of another cluster, or the recipe cannot launch there.
DirectoryRunResult run_in_directory(cluster::Cluster& cluster, const cluster::ClusterDefinition& definition,
                                    const gate::ApprovedRecipe& approved, const DirectoryRunRequest& request,
                                    const DirectoryRunHooks& hooks = {});

}  // namespace attune::campaign
