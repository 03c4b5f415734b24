// check_cluster: `attune cluster check NAME` — whether a cluster definition
// can run anything: for Slurm, the client commands are found, the controller
// answers, the partitions exist with the GPU types the definition says, the
// account exists and accounting answers; for local, which GPUs this machine
// shows; for a mock cluster, the attune binary its jobs run. Each finding is
// a line with ok / warn / fail, so a user sees everything wrong at once.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/cluster/cluster_config.h"

namespace attune::cluster {

enum class CheckLevel { Ok, Warn, Fail };

struct CheckItem {
  std::string what;    // "sbatch", "controller", "partition h100", ...
  CheckLevel level = CheckLevel::Ok;
  std::string detail;  // what was found, or what is wrong and how to fix it
};

struct CheckContext {
  std::string attune_binary;     // what a payload-sim job runs
  double command_timeout_s = 20; // each outside command
};

std::vector<CheckItem> check_cluster(const ClusterDefinition& def, const CheckContext& context);
// True when no item failed.
bool check_passed(const std::vector<CheckItem>& items);
std::string to_string(CheckLevel level);  // "ok", "warn", "FAIL"
nlohmann::json to_json(const std::vector<CheckItem>& items);

}  // namespace attune::cluster
