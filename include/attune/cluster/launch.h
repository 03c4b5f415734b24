// Launch: from an approved recipe and a cluster definition to the RunSpec the
// cluster launches. It writes the recipe as it will run into the run's
// directory (recipe/recipe_files.h), picks the command (the wrapper's
// launch.command, else the framework's usual launch; on a cluster whose
// payload is `sim`, `attune sim job` on the written recipe), and fills in the
// Slurm request, the time limit (the recipe's, cut to what the budget can pay
// for), the steps and the expected step time the hang watchdog needs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attune/cluster/cluster_config.h"
#include "attune/cluster/run.h"
#include "attune/recipe/recipe.h"

namespace attune::cluster {

struct LaunchRequest {
  std::string run_name;             // unique per run: the job name, the journal's key
  std::string run_dir;              // recipe files, log and batch script; every node must see it
  double budget_gpu_hours = -1;     // what is left to spend (< 0: no budget)
  double default_time_limit_s = 7200;  // when the recipe states none
  int steps = 0;                    // 0: the recipe's measure.steps, else 50
  // Payload `sim` only: the attune binary the job runs, the scenario's hidden
  // truth file it passes on, and the seed of this launch's noise.
  std::string attune_binary;
  std::string truth_file;
  std::uint64_t seed = 1;
};

// The framework's usual launch, with "{config}" where the recipe file goes
// (Megatron-LM scripts: `bash {config}`; torchtitan: `torchrun -m
// torchtitan.train --job.config_file {config}`; ...). Empty for HyperPod,
// whose recipes its own launcher submits: the wrapper must say launch.command.
std::vector<std::string> default_launch_command(const recipe::Recipe& r);

// Writes the recipe into request.run_dir and returns the run's spec. Throws
// InputError when the recipe cannot be launched there (no command for a
// framework without a default, no hardware for a cluster that needs it).
RunSpec prepare_launch(const recipe::Recipe& recipe, const ClusterDefinition& cluster, const LaunchRequest& request);

}  // namespace attune::cluster
