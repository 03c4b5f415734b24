// Cluster: where approved recipes run. One interface over the backends
// (cluster/sim: the simulator in-process; cluster/local: a child process on
// this machine; cluster/slurm: sbatch and friends): submit a Launch, poll it,
// cancel it, read its log, and find it again after attune restarts. Only the
// gate can make an ApprovedRecipe and only prepare_launch can make a Launch
// from one, so nothing reaches a cluster unchecked.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "attune/cluster/launch.h"
#include "attune/cluster/run.h"

namespace attune::cluster {

class Cluster {
 public:
  virtual ~Cluster() = default;

  virtual std::string name() const = 0;
  // Launches the run as prepare_launch built it (launch.spec(): command,
  // environment, log path; the files it wrote to the run directory); throws
  // ClusterError when the cluster refuses it, or when it was prepared for
  // another kind of cluster.
  virtual RunId submit(const Launch& launch) = 0;
  // Current state; never blocks for long (bounded by the backend's own timeouts).
  virtual RunStatus poll(const RunId& id) = 0;
  virtual void cancel(const RunId& id) = 0;
  // The run's log so far ("" before it starts).
  virtual std::string log(const RunId& id) = 0;
  // Re-adopts a run this cluster launched before a restart (its spec as it was
  // launched); throws ClusterError if the cluster no longer knows it.
  virtual void attach(const RunId& id, const RunSpec& spec) = 0;
  // The run this cluster launched under spec.name, if it still knows it: how
  // a restarted attune finds a run whose id it never learnt (it died while
  // submitting). nullopt: no such run was ever launched.
  virtual std::optional<RunId> find_run(const RunSpec& spec) = 0;
};

// A cluster refused or lost a run: the message names the setting or the run.
class ClusterError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What every backend's submit checks first: a launch prepared for another
// kind of cluster (a sim launch has no command, a local one no Slurm
// request) or, when `cluster` is given, for another cluster of the kind,
// is refused rather than half run.
inline void require_prepared_for(const Launch& launch, std::string_view backend, const std::string& cluster = "") {
  if (launch.backend() != backend || (!cluster.empty() && launch.cluster_name() != cluster))
    throw ClusterError("run '" + launch.spec().name + "' was prepared for cluster '" + launch.cluster_name() +
                       "' (backend " + launch.backend() + "), not for " +
                       (cluster.empty() ? "a " + std::string(backend) + " cluster" : "cluster '" + cluster + "'"));
}

}  // namespace attune::cluster
