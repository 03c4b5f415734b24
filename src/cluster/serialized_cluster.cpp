#include "attune/cluster/serialized_cluster.h"

namespace attune::cluster {

SerializedCluster::SerializedCluster(std::unique_ptr<Cluster> inner) : inner_(std::move(inner)) {}

std::string SerializedCluster::name() const {
  std::lock_guard lock(mutex_);
  return inner_->name();
}

RunId SerializedCluster::submit(const Launch& launch) {
  std::lock_guard lock(mutex_);
  return inner_->submit(launch);
}

RunStatus SerializedCluster::poll(const RunId& id) {
  std::lock_guard lock(mutex_);
  return inner_->poll(id);
}

void SerializedCluster::cancel(const RunId& id) {
  std::lock_guard lock(mutex_);
  inner_->cancel(id);
}

std::string SerializedCluster::log(const RunId& id) {
  std::lock_guard lock(mutex_);
  return inner_->log(id);
}

void SerializedCluster::attach(const RunId& id, const RunSpec& spec) {
  std::lock_guard lock(mutex_);
  inner_->attach(id, spec);
}

std::optional<RunId> SerializedCluster::find_run(const RunSpec& spec) {
  std::lock_guard lock(mutex_);
  return inner_->find_run(spec);
}

}  // namespace attune::cluster
