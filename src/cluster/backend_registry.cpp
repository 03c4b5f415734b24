#include "attune/cluster/backend_registry.h"

#include "attune/cluster/local/local_cluster.h"
#include "attune/cluster/sim/sim_cluster.h"
#include "attune/cluster/slurm/slurm_cluster.h"
#include "attune/sim/perturbation.h"

namespace attune::cluster {

namespace {

std::unique_ptr<Cluster> make_sim(const ClusterDefinition&, const SimulationContext& sim) {
  const sim::Perturbation truth = sim.truth_file.empty() ? sim::Perturbation{} : sim::read_perturbation(sim.truth_file);
  return std::make_unique<SimCluster>(truth, sim.campaign_seed);
}

std::unique_ptr<Cluster> make_local(const ClusterDefinition&, const SimulationContext&) {
  return std::make_unique<LocalCluster>();
}

std::unique_ptr<Cluster> make_slurm(const ClusterDefinition& def, const SimulationContext&) {
  return std::make_unique<SlurmCluster>(def);
}

template <class List>
std::string names_of(const List& list) {
  std::string out;
  for (const auto& t : list) out += (out.empty() ? "" : ", ") + std::string(t.name);
  return out;
}

}  // namespace

const std::vector<BackendTraits>& backends() {
  static const std::vector<BackendTraits> all = {
      {SimCluster::kBackend, "the simulator in attune's own process, under a scenario's hidden truth",
       /*in_process=*/true, /*one_machine=*/false, /*scheduled=*/false, /*per_node=*/false, make_sim},
      {LocalCluster::kBackend, "a process group on this machine: one node",
       /*in_process=*/false, /*one_machine=*/true, /*scheduled=*/false, /*per_node=*/false, make_local},
      {SlurmCluster::kBackend, "a Slurm cluster: sbatch, one launcher per node under srun",
       /*in_process=*/false, /*one_machine=*/false, /*scheduled=*/true, /*per_node=*/true, make_slurm},
  };
  return all;
}

const BackendTraits* find_backend(std::string_view name) {
  for (const auto& b : backends()) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

const std::vector<PayloadTraits>& payloads() {
  static const std::vector<PayloadTraits> all = {
      {Payload::Command, "command", "the recipe's own launch command",
       /*runs_recipe_command=*/true, /*simulated=*/false, /*prints_own_steps=*/false, /*needs_attune_binary=*/false},
      {Payload::Sim, "sim", "`attune sim job`: the log the framework would print, paced by the time scale",
       /*runs_recipe_command=*/false, /*simulated=*/true, /*prints_own_steps=*/true, /*needs_attune_binary=*/true},
      {Payload::Emulate, "emulate",
       "the recipe's own launch command with torchrun and python resolved to the framework emulators",
       /*runs_recipe_command=*/true, /*simulated=*/true, /*prints_own_steps=*/false, /*needs_attune_binary=*/true},
  };
  return all;
}

const PayloadTraits& payload_traits(Payload p) {
  for (const auto& t : payloads()) {
    if (t.payload == p) return t;
  }
  return payloads().front();
}

const PayloadTraits* find_payload(std::string_view name) {
  for (const auto& p : payloads()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string backend_names() { return names_of(backends()); }
std::string payload_names() { return names_of(payloads()); }

RunTraits run_traits(const ClusterDefinition& def) {
  const BackendTraits* b = find_backend(def.backend);
  if (!b)
    throw ClusterError("cluster '" + def.name + "': unknown backend '" + def.backend + "' (known: " + backend_names() +
                       ")");
  RunTraits t;
  t.backend = b;
  t.payload = &payload_traits(def.payload);
  t.in_process = b->in_process;
  t.one_machine = b->one_machine;
  t.scheduled = b->scheduled;
  t.per_node = b->per_node;
  if (b->in_process) {
    // The simulator in-process: it prints exactly the steps asked for.
    t.simulated = true;
    t.prints_own_steps = true;
    return t;
  }
  t.simulated = t.payload->simulated;
  t.prints_own_steps = t.payload->prints_own_steps;
  t.runs_recipe_command = t.payload->runs_recipe_command;
  t.emulated = def.payload == Payload::Emulate;
  t.needs_attune_binary = t.payload->needs_attune_binary;
  // `attune sim job` prints the whole job's log once, in the batch script.
  if (!t.runs_recipe_command) t.per_node = false;
  return t;
}

std::unique_ptr<Cluster> make_cluster(const ClusterDefinition& def, const SimulationContext& sim) {
  return run_traits(def).backend->make(def, sim);
}

}  // namespace attune::cluster
