// make_cluster: the backend a cluster definition names, built and ready —
// cluster/sim (in-process, with the scenario's hidden truth and seed),
// cluster/local or cluster/slurm. The one place that knows every backend, so
// the commands and the campaign only ever hold a Cluster.
#pragma once

#include <cstdint>
#include <memory>

#include "attune/cluster/cluster.h"
#include "attune/cluster/cluster_config.h"
#include "attune/sim/perturbation.h"

namespace attune::cluster {

std::unique_ptr<Cluster> make_cluster(const ClusterDefinition& def, const sim::Perturbation& truth = {},
                                      std::uint64_t seed = 1);

}  // namespace attune::cluster
