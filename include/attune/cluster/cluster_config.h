// ClusterConfig: the clusters a user can run on, by name — read from a YAML
// file (`--clusters FILE`, default ~/.config/attune/clusters.yaml) on top of
// the built-in `sim` and `local`. Each names its backend and the defaults its
// runs take (partition, account, QoS, the GPU type each partition has, the
// container runtime, and for a mock cluster the time scale of its jobs).
//
//   clusters:
//     mock:
//       backend: slurm
//       partition: gpu
//       account: attune
//       partitions: {h100: h100, h200: h200, b200: b200}   # partition -> GPU type
//       container: none            # none | pyxis
//       time_scale: 60             # simulated seconds per real second (mock jobs)
//       payload: sim               # command (the recipe's launch) | sim (`attune sim job`)
//       slurm_conf: /tmp/attune-mock-slurm/etc/slurm.conf
//
// Built in: `sim` (the simulator in-process), `local` (a child process here)
// and `mock` (the mock Slurm of scripts/mock-slurm: slurm backend, payload
// sim, time_scale 60, SLURM_CONF under $ATTUNE_MOCK_SLURM_DIR or
// /tmp/attune-mock-slurm).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace attune::cluster {

struct ClusterDefinition {
  std::string name;
  std::string backend;                          // sim | local | slurm
  std::string partition;
  std::string account;
  std::string qos;
  std::map<std::string, std::string> partitions;  // partition -> GPU type
  std::string container = "none";               // none | pyxis
  double time_scale = 1;
  std::string payload = "command";              // command | sim: jobs run `attune sim job` (mock clusters)
  std::string slurm_conf;                       // "" = the environment's SLURM_CONF
};

// The built-in definitions and those of `path` (which override them by name).
// A missing file is an error unless it is the default location. Throws
// InputError naming the file, line and key on bad input.
std::vector<ClusterDefinition> load_cluster_definitions(const std::string& path, bool is_default_location);
std::vector<ClusterDefinition> parse_cluster_definitions(const std::string& name, const std::string& yaml_text);
// ~/.config/attune/clusters.yaml ($XDG_CONFIG_HOME honoured).
std::string default_clusters_path();
// By name; InputError listing the known names when there is none.
const ClusterDefinition& find_cluster(const std::vector<ClusterDefinition>& all, const std::string& name);

}  // namespace attune::cluster
