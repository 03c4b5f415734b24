#include "attune/cluster/run.h"

namespace attune::cluster {

std::string to_string(RunState s) {
  switch (s) {
    case RunState::Pending: return "pending";
    case RunState::Running: return "running";
    case RunState::Completed: return "completed";
    case RunState::Failed: return "failed";
    case RunState::Cancelled: return "cancelled";
    case RunState::Timeout: return "timeout";
    case RunState::NodeFail: return "node_fail";
    case RunState::OutOfMemory: return "out_of_memory";
    case RunState::Preempted: return "preempted";
    case RunState::Hang: return "hang";
  }
  return "unknown";
}

bool is_final(RunState s) { return s != RunState::Pending && s != RunState::Running; }

double gpu_hours(const RunSpec& spec, double elapsed_s) {
  return static_cast<double>(spec.nodes) * spec.gpus_per_node * elapsed_s / 3600.0;
}

}  // namespace attune::cluster
