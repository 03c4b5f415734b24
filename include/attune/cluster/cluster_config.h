// ClusterConfig: the clusters a user can run on, by name — read from a YAML
// file (`--clusters FILE`, default ~/.config/attune/clusters.yaml) on top of
// the built-in `sim`, `local` and `mock`. Each names its backend
// (backend_registry.h) and what its runs get: the Slurm request's defaults
// (partition, account, QoS, the GPU type each partition has, a constraint
// only when given, CPUs per task), the cluster-wide environment, the
// rendezvous port, extra sbatch and srun arguments (argv, never shell text),
// the container runtime and its options, and for a mock cluster the time
// scale and payload of its jobs.
//
//   clusters:
//     p5:
//       backend: slurm
//       partition: gpu
//       account: llm-research
//       partitions: {gpu: h100}          # partition -> GPU type (typed gres)
//       constraint: p5                   # --constraint, sent only when given
//       cpus_per_task: 24                # sbatch and every srun (Slurm 22.05-23.02 do not pass it on)
//       env: {FI_PROVIDER: efa, NCCL_SOCKET_IFNAME: ^lo,docker}   # below the recipe's own
//       rendezvous_port: 29500           # or `job`: 20000 + job id % 20000
//       sbatch_args: [--reservation=llm]
//       srun_args: [--mpi=none]
//       container: pyxis                 # none | pyxis
//       mount_home: false                # pyxis: --no-container-mount-home
//     mock:
//       backend: slurm
//       time_scale: 60                   # simulated seconds per real second (mock jobs)
//       payload: sim                     # command | sim (`attune sim job`) | emulate (framework emulators)
//       slurm_conf: /tmp/attune-mock-slurm/etc/slurm.conf
//
// Built in: `sim` (the simulator in-process), `local` (a child process here)
// and `mock` (the mock Slurm of scripts/mock-slurm: slurm backend, payload
// sim, time_scale 60, SLURM_CONF under $ATTUNE_MOCK_SLURM_DIR or
// /tmp/attune-mock-slurm), and `mock-emulate`, the same cluster running the
// recipes' own launch commands under the framework emulators.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace attune::cluster {

// What a job runs: the recipe's launch command, `attune sim job` (the log a
// framework would print), or the recipe's launch command with `torchrun` and
// `python` resolved to the framework emulators (tools/emulators).
enum class Payload { Command, Sim, Emulate };

struct ClusterDefinition {
  std::string name;
  std::string backend;                          // a name of backend_registry.h: sim | local | slurm
  std::string partition;
  std::string account;
  std::string qos;
  std::map<std::string, std::string> partitions;  // partition -> GPU type
  std::string constraint;                       // --constraint; "" = none sent
  bool typed_gres = true;                       // --gpus-per-node=TYPE:N (false: N, for untyped gres)
  int cpus_per_task = 0;                        // --cpus-per-task on sbatch and srun (0: not sent)
  std::map<std::string, std::string> env;       // cluster-wide environment; the recipe's wins
  int rendezvous_port = 29500;                  // MASTER_PORT; 0: from the job id (20000 + id % 20000)
  std::vector<std::string> sbatch_args;         // extra sbatch options, one argv element each
  std::vector<std::string> srun_args;           // extra options of every srun
  std::string container = "none";               // none | pyxis
  bool mount_home = true;                       // pyxis: false sends --no-container-mount-home
  double time_scale = 1;
  Payload payload = Payload::Command;
  std::string emulators;                        // payload emulate: the emulators' folder ("" = the built-in one)
  std::string slurm_conf;                       // "" = the environment's SLURM_CONF
};

// The built-in definitions and those of `path` (which override them by name).
// A missing file is an error unless it is the default location. Throws
// InputError naming the file, line and key on bad input.
std::vector<ClusterDefinition> load_cluster_definitions(const std::string& path, bool is_default_location);
std::vector<ClusterDefinition> parse_cluster_definitions(const std::string& name, const std::string& yaml_text);
// ~/.config/attune/clusters.yaml ($XDG_CONFIG_HOME honoured).
std::string default_clusters_path();
// By name; InputError listing the known names when there is none.
const ClusterDefinition& find_cluster(const std::vector<ClusterDefinition>& all, const std::string& name);
// The emulators' folder a definition with payload emulate uses: its own,
// else $ATTUNE_EMULATORS, else the one this attune was built beside.
std::string emulators_dir(const ClusterDefinition& def);

}  // namespace attune::cluster
