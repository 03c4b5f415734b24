// Launch: a run ready to submit, and prepare_launch, the one way to make one.
// prepare_launch takes an approved recipe and a cluster definition, writes the
// recipe as it will run into the run's directory (recipe/recipe_files.h),
// takes the framework's launch from its adapter (recipe/framework_launch.h:
// the command, the environment over the cluster's, what must run first; on a
// cluster whose payload is `sim`, `attune sim job` on the written recipe; with
// payload `emulate`, the same command with the framework emulators first on
// PATH), and fills in the Slurm request, the time limit (the recipe's, cut
// to what the budget can pay for), the steps and the expected step time the
// hang watchdog needs.
//
// A Launch holds that spec and the approved recipe it came from. Its
// constructor is private and prepare_launch is its one friend, and
// Cluster::submit takes nothing else, so what a cluster runs (the files in the
// run directory, the command, the environment) is always what the gate
// approved: no code can submit a RunSpec it made up. A negative-compile test
// (tests/CMakeLists.txt) proves it. Preparing again with the same request and
// the same approved recipe gives the same spec and the same files, which is
// how a restarted campaign submits a run it journalled but never submitted.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attune/cluster/cluster_config.h"
#include "attune/cluster/run.h"
#include "attune/gate/approved_recipe.h"
#include "attune/recipe/recipe.h"

namespace attune::cluster {

struct LaunchRequest {
  std::string run_name;             // unique per run: the job name, the journal's key
  std::string run_dir;              // recipe files, log and batch script; every node must see it
  double budget_gpu_hours = -1;     // what is left to spend (< 0: no budget)
  double default_time_limit_s = 7200;  // when the recipe states none
  int steps = 0;                    // 0: the recipe's measure.steps, else 50
  // The time between two step lines of the log (a step times the recipe's
  // log interval), for the hang watchdog (0 = unknown). The caller estimates
  // it (campaign/step_estimate.h): the cluster module knows nothing of the simulator.
  double expected_step_s = 0;
  // Payloads `sim` and `emulate`: the attune binary the job runs, the
  // scenario's hidden truth file it passes on, and the seed of this launch's noise.
  std::string attune_binary;
  std::string truth_file;
  std::uint64_t seed = 0;           // 0: the backend draws from its own campaign seed (a sim payload: 1)
  bool durable = true;              // false: the run's files are not fsynced (RunSpec::durable)
};

class Launch;

// Writes the approved recipe into request.run_dir and returns the run, ready
// for Cluster::submit. Throws InputError when the recipe cannot be launched
// there (no command for a framework without a default, more nodes than a
// local cluster has, no attune binary for a sim payload).
Launch prepare_launch(const gate::ApprovedRecipe& approved, const ClusterDefinition& cluster,
                      const LaunchRequest& request);

class Launch final {
 public:
  const RunSpec& spec() const { return spec_; }
  const gate::ApprovedRecipe& approved() const { return approved_; }
  const recipe::Recipe& recipe() const { return approved_.recipe(); }
  // The definition it was prepared for: a backend refuses a launch prepared
  // for another kind of cluster (its command and request would be wrong).
  const std::string& cluster_name() const { return cluster_; }
  const std::string& backend() const { return backend_; }

 private:
  friend Launch prepare_launch(const gate::ApprovedRecipe&, const ClusterDefinition&, const LaunchRequest&);
  Launch(gate::ApprovedRecipe approved, RunSpec spec, std::string cluster, std::string backend)
      : approved_(std::move(approved)), spec_(std::move(spec)), cluster_(std::move(cluster)),
        backend_(std::move(backend)) {}

  gate::ApprovedRecipe approved_;
  RunSpec spec_;
  std::string cluster_;
  std::string backend_;
};

}  // namespace attune::cluster
