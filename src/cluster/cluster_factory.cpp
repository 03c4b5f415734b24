#include "attune/cluster/cluster_factory.h"

#include "attune/cluster/local/local_cluster.h"
#include "attune/cluster/sim/sim_cluster.h"
#include "attune/cluster/slurm/slurm_cluster.h"

namespace attune::cluster {

std::unique_ptr<Cluster> make_cluster(const ClusterDefinition& def, const sim::Perturbation& truth, std::uint64_t seed) {
  if (def.backend == "sim") return std::make_unique<SimCluster>(truth, seed);
  if (def.backend == "local") return std::make_unique<LocalCluster>();
  if (def.backend == "slurm") return std::make_unique<SlurmCluster>(def);
  throw ClusterError("cluster '" + def.name + "': unknown backend '" + def.backend + "'");
}

}  // namespace attune::cluster
