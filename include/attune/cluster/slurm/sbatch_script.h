// sbatch_job: what the `slurm` backend hands to sbatch for one run — the
// options (an argv, never a shell line) and the batch script itself, built
// from the RunSpec and the cluster's defaults. Pure functions, no I/O.
//
// Nothing from the spec can change what runs: every option is one argv
// element of the form --name=value, and a value holding a control character
// (a newline could start a second option in a human's copy-paste, or a
// second line in the script) is a ClusterError naming the setting. In the
// script, every value from the spec (argv, env values, workdir, container
// image and mounts) is shell_quote'd; the only unquoted text is attune's own
// fixed text. The options are not written as #SBATCH lines (sbatch would
// parse those); the script lists them in an ordinary comment for humans.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "attune/cluster/cluster_config.h"
#include "attune/cluster/run.h"
#include "attune/util/shell_quote.h"

namespace attune::cluster {

// The values a job asks Slurm for, as resolved from the spec and the
// cluster's defaults: what explain_sbatch_refusal names.
struct SbatchRequest {
  std::string run;             // spec.name
  std::string partition;       // "" = Slurm's default partition
  std::string account;         // "" = the user's default account
  std::string qos;             // "" = the default QOS
  int nodes = 1;
  int gpus_per_node = 0;
  std::string gpu;             // the GPU type asked for ("" = any)
  std::string constraint;      // --constraint ("" = none)
  long long time_minutes = 0;  // --time (0 = none given: the partition's default)
};

struct SbatchJob {
  std::vector<std::string> options;  // argv for sbatch before the script path, e.g. "--nodes=2"
  std::string script;                // the batch script's text
  SbatchRequest request;
};

// --time in whole minutes of real time for a limit in simulated seconds:
// max(1, ceil(time_limit_s / time_scale / 60)); 0 (no --time) when
// time_limit_s <= 0. A time_scale <= 0 counts as 1.
long long sbatch_time_minutes(double time_limit_s, double time_scale);

// A path for --output/--error: '%' doubled, since Slurm expands %j and the
// like in these names.
std::string slurm_filename(std::string_view path);

// The sbatch options and batch script of `spec` on cluster `def`:
//   --parsable --job-name=NAME --nodes=N --gpus-per-node=[GPU:]N
//   [--constraint=C] [--partition=P] [--account=A] [--qos=Q] [--time=MIN]
//   [--exclusive] --no-requeue --output=LOG --error=LOG --open-mode=append
//   [--chdir=DIR]
// GPU: spec.gpu, else the GPU type def.partitions gives the partition.
// --constraint: spec.constraint, else spec.gpu as a feature. Partition,
// account and QOS: the spec's, else the cluster's, else omitted.
// --no-requeue always: otherwise a node failure silently requeues the run.
//
// The script: `#!/bin/bash`, a comment listing the options, `set -u`, the
// spec's env exported, `cd -- WORKDIR || exit 1` when one is set, then
//  - per_node: rendezvous variables from Slurm's (MASTER_ADDR = the first node,
//    MASTER_PORT=29500, NNODES, GPUS_PER_NODE and torchrun's PET_* defaults)
//    and `srun --ntasks-per-node=1 --kill-on-bad-exit=1 [container flags]
//    bash -c 'export NODE_RANK=$SLURM_NODEID; exec "$@"' attune-launch ARGV...`;
//  - otherwise `exec ARGV...` (with a container: under `srun --nodes=1
//    --ntasks=1 --container-image=...`).
// Container flags (--container-image, --container-mounts) only on a cluster
// whose container is "pyxis".
//
// Throws ClusterError naming the run and the setting: an empty command or log
// path, a program starting with '-' (exec and srun would take it for an option), nodes or gpus_per_node < 1, a control character in an option value
// (name, partition, account, qos, gpu, constraint, log_path, workdir,
// container_image, container_mounts), a NUL byte in any value, a backslash in
// log_path (Slurm would drop it and stop expanding '%'), a GPU type that is
// not a plain name, an env name that is not [A-Za-z_][A-Za-z0-9_]*, a
// container mount holding a comma, a container image on a cluster without
// pyxis, a time limit that is not a number.
SbatchJob sbatch_job(const RunSpec& spec, const ClusterDefinition& def);

}  // namespace attune::cluster
