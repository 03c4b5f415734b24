// make_cluster: the backend a cluster definition names, built and ready —
// cluster/sim (in-process, under a scenario's hidden truth), cluster/local or
// cluster/slurm. The one place that knows every backend, so the commands and
// the campaign only ever hold a Cluster.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "attune/cluster/cluster.h"
#include "attune/cluster/cluster_config.h"

namespace attune::cluster {

// What a simulated cluster needs beyond its definition: the scenario's truth
// file ("" = the nominal model), which only the sim backend (in-process, or
// a mock cluster's jobs) reads, and the campaign's seed, from which every
// launch draws its own noise.
struct SimulationContext {
  std::string truth_file;
  std::uint64_t campaign_seed = 1;
};

std::unique_ptr<Cluster> make_cluster(const ClusterDefinition& def, const SimulationContext& sim = {});

}  // namespace attune::cluster
