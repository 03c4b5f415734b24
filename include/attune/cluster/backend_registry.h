// The backends: every kind of cluster attune runs on (`sim`, `local`,
// `slurm`), each with its traits, found through this one registry, and the
// payloads a Slurm cluster's jobs can run (`command`, `sim`, `emulate`). The
// rest of attune asks a definition what its runs are (RunTraits: simulated,
// prints its own steps, once per node, one machine, scheduled) and never
// compares a backend's or a payload's name: a new backend is one entry here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attune/cluster/cluster.h"
#include "attune/cluster/cluster_config.h"

namespace attune::cluster {

// What a simulated cluster needs beyond its definition: the scenario's truth
// file ("" = the nominal model), which only the simulator reads (in-process,
// or a mock cluster's sim or emulated jobs), and the campaign's seed, from
// which every launch draws its own noise.
struct SimulationContext {
  std::string truth_file;
  std::uint64_t campaign_seed = 1;
};

struct BackendTraits {
  std::string_view name;     // as clusters.yaml spells it
  std::string_view summary;  // one line for `attune cluster list` and errors
  bool in_process = false;   // the simulator in attune's own process: nothing is executed
  bool one_machine = false;  // this machine: one node, no scheduler
  bool scheduled = false;    // a batch scheduler: partitions, accounts, QoS, sbatch and srun options
  bool per_node = false;     // the launch command runs once per node (a launcher per node)
  std::unique_ptr<Cluster> (*make)(const ClusterDefinition&, const SimulationContext&) = nullptr;
};

struct PayloadTraits {
  Payload payload;
  std::string_view name;         // as clusters.yaml spells it
  std::string_view summary;
  bool runs_recipe_command;      // the recipe's own launch command runs
  bool simulated;                // what a run measures is the simulator's (under a scenario's truth)
  bool prints_own_steps;         // the job prints exactly the steps to measure and ends by itself
  bool needs_attune_binary;      // the job runs attune (`sim job`, or the emulators' timing)
};

// What a cluster definition's runs are: its backend's traits with its payload's.
struct RunTraits {
  const BackendTraits* backend = nullptr;
  const PayloadTraits* payload = nullptr;
  bool in_process = false;         // nothing executes: the simulator in-process
  bool simulated = false;          // timings and failures are the simulator's: a scenario's truth applies
  bool prints_own_steps = false;   // a run ends by itself after exactly the steps to measure
  bool runs_recipe_command = false;  // the recipe's launch command is what runs
  bool emulated = false;           // torchrun and python resolve to the framework emulators
  bool per_node = false;           // a launcher per node under the scheduler
  bool one_machine = false;        // one node, this machine
  bool scheduled = false;          // Slurm: its request and options apply
  bool needs_attune_binary = false;
};

// Every backend, in the order `attune cluster list` and errors name them.
const std::vector<BackendTraits>& backends();
// By name; nullptr when there is none.
const BackendTraits* find_backend(std::string_view name);
const std::vector<PayloadTraits>& payloads();
const PayloadTraits& payload_traits(Payload p);
// By name; nullptr when there is none.
const PayloadTraits* find_payload(std::string_view name);
// "sim, local, slurm": for error messages.
std::string backend_names();
std::string payload_names();

// The traits of a definition (ClusterError naming it when its backend is unknown).
RunTraits run_traits(const ClusterDefinition& def);

// The backend a definition names, built and ready; ClusterError when the
// backend is unknown.
std::unique_ptr<Cluster> make_cluster(const ClusterDefinition& def, const SimulationContext& sim = {});

}  // namespace attune::cluster
