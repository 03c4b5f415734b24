#include "attune/cluster/cluster_factory.h"

#include "attune/cluster/local/local_cluster.h"
#include "attune/cluster/sim/sim_cluster.h"
#include "attune/cluster/slurm/slurm_cluster.h"
#include "attune/sim/perturbation.h"

namespace attune::cluster {

std::unique_ptr<Cluster> make_cluster(const ClusterDefinition& def, const SimulationContext& sim) {
  if (def.backend == "sim") {
    const sim::Perturbation truth = sim.truth_file.empty() ? sim::Perturbation{} : sim::read_perturbation(sim.truth_file);
    return std::make_unique<SimCluster>(truth, sim.campaign_seed);
  }
  if (def.backend == "local") return std::make_unique<LocalCluster>();
  if (def.backend == "slurm") return std::make_unique<SlurmCluster>(def);
  throw ClusterError("cluster '" + def.name + "': unknown backend '" + def.backend + "'");
}

}  // namespace attune::cluster
