#include "attune/cluster/run.h"

#include <algorithm>

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

double run_time_limit_s(double recipe_limit_s, double budget_gpu_hours, int nodes, int gpus_per_node) {
  if (budget_gpu_hours < 0 || nodes <= 0 || gpus_per_node <= 0) return recipe_limit_s;
  const double payable_s = budget_gpu_hours * 3600.0 / (static_cast<double>(nodes) * gpus_per_node);
  return recipe_limit_s > 0 ? std::min(recipe_limit_s, payable_s) : payable_s;
}

}  // namespace attune::cluster
