// SerializedCluster: one Cluster shared by several threads (a campaign with
// candidates in flight at once). Every call reaches the backend under one
// mutex, so a backend written for one caller (its table of runs, the
// children it forks, the Slurm tools it runs) needs no locks of its own.
// Calls are short (the backends bound their own waits); the waiting between
// polls happens in the callers, outside the lock.
#pragma once

#include <memory>
#include <mutex>

#include "attune/cluster/cluster.h"

namespace attune::cluster {

class SerializedCluster : public Cluster {
 public:
  explicit SerializedCluster(std::unique_ptr<Cluster> inner);

  std::string name() const override;
  RunId submit(const Launch& launch) override;
  RunStatus poll(const RunId& id) override;
  void cancel(const RunId& id) override;
  std::string log(const RunId& id) override;
  void attach(const RunId& id, const RunSpec& spec) override;
  std::optional<RunId> find_run(const RunSpec& spec) override;

 private:
  std::unique_ptr<Cluster> inner_;
  mutable std::mutex mutex_;
};

}  // namespace attune::cluster
