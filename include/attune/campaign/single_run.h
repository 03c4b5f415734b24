// SingleRun: one run of a recipe as it is (`attune run`). The gate approves
// the recipe against itself (only an ApprovedRecipe reaches a cluster); the
// run is journalled in its directory before it is submitted, so the same
// request after a crash or a kill re-attaches to it — or reports how it
// ended — instead of launching it twice; it is followed with the hang
// watchdog and its log diagnosed. On the sim cluster a scenario's truth is
// applied by the backend and the noise comes from a fresh campaign seed:
// nothing the caller passes picks either.
//
// A run directory belongs to one request: another (another recipe, other
// flags, another cluster) is refused rather than handed the old run's
// result, and it is locked (DIR/.lock, util/file_lock.h) for the whole run,
// so a second attune in it is refused naming the first's pid.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "attune/cluster/cluster_config.h"
#include "attune/cluster/run.h"
#include "attune/cluster/run_watch.h"
#include "attune/diagnose/diagnosis.h"
#include "attune/recipe/recipe.h"

namespace attune::campaign {

struct SingleRunRequest {
  std::string file;                   // recipe, wrapper or scenario
  recipe::RecipeOptions options;
  std::string cluster = "sim";
  std::string clusters_file;          // "" = the default location, when it exists
  std::string run_dir;                // "" = attune-runs/<recipe>-<time>
  double budget_gpu_hours = -1;       // < 0: no budget
  double hang_factor = 10;
  double startup_allowance_s = 900;
  bool to_end = false;                // a real run goes on past the steps to measure
};

struct SingleRunResult {
  cluster::ClusterDefinition cluster;
  cluster::RunId id;
  cluster::RunSpec spec;
  bool reattached = false;            // adopted from the journal, not launched now
  bool already_ended = false;         // the journal already had its end
  cluster::RunStatus status;
  std::string run_dir;
  std::optional<diagnose::Diagnosis> diagnosis;  // none when the run left no log
};

struct SingleRunHooks {
  std::function<bool()> interrupted;                          // cancel the run when it returns true
  std::function<void(const SingleRunResult&)> on_started;     // launched or adopted (status not yet known)
  std::function<void(const cluster::WatchProgress&, const cluster::RunSpec&)> on_progress;
  std::function<void(const std::string&)> on_note;            // a line worth telling the user
};

// Throws InputError for a bad request (unknown cluster, a run directory
// that holds another request's run or that another attune is running in, a
// refused recipe, a cluster that refuses or loses the run, a journalled run
// that can no longer be followed).
SingleRunResult run_single(const SingleRunRequest& request, const SingleRunHooks& hooks = {});

// {cluster, backend, run, id, reattached, state, reason, elapsed_s,
// gpu_hours, time_limit_s, nodes, gpus_per_node, log, run_dir, diagnosis}
nlohmann::json to_json(const SingleRunResult& r);

}  // namespace attune::campaign
