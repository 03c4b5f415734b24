// LaunchSettings: how a recipe is launched and measured, as the attune
// wrapper's `launch:` and `measure:` sections say — the command (an argv, never
// shell text), its working directory, environment, container, the Slurm
// request (partition, account, QoS, constraint, exclusive, time limit), and
// how many steps a measurement run takes. The cluster module turns these into
// a RunSpec; nothing here is ever run through a shell.
//
//   launch:
//     command: [torchrun, pretrain_gpt.py, --yaml-cfg, "{config}"]   # "{config}": the recipe file as launched
//     args: [/data/llama, /ckpt]          # positional arguments of a launch script (with the default command)
//     recipe: llama32_1b_pretrain_config  # Megatron-Bridge: the recipe an override file applies to
//     base_results_dir: /fsx/results      # HyperPod: the launcher's base_results_dir (default: the run directory)
//     workdir: /opt/megatron-lm
//     env: {CUDA_DEVICE_MAX_CONNECTIONS: "1"}
//     container: {image: nvcr.io/nvidia/nemo:25.09, mounts: ["/lustre:/lustre"]}
//     slurm: {partition: gpu, account: llm, qos: high, constraint: h100, exclusive: true, time_limit: 40m}
//   measure: {steps: 60, skip_first: 10}
#pragma once

#include <map>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace attune::recipe {

struct LaunchSettings {
  std::vector<std::string> command;  // empty: the framework's default launch
  std::vector<std::string> args;     // appended to the framework's default launch (a script's positional arguments)
  std::string recipe;                // Megatron-Bridge: the recipe function an override file applies to
  std::string base_results_dir;      // HyperPod: what the launcher's base_results_dir would be ("" = the run directory)
  std::string workdir;
  std::map<std::string, std::string> env;
  std::string container_image;
  std::vector<std::string> container_mounts;
  std::string partition;
  std::string account;
  std::string qos;
  std::string constraint;
  bool exclusive = true;
  double time_limit_s = 0;  // 0: not stated
};

struct MeasureSettings {
  int steps = 0;       // 0: not stated
  int skip_first = 0;
};

// Parses the `launch:` / `measure:` sections; InputError names the file, line
// and key (e.g. "launch.slurm.time_limit") on bad input.
LaunchSettings parse_launch_settings(const std::string& file, const YAML::Node& node);
MeasureSettings parse_measure_settings(const std::string& file, const YAML::Node& node);
// The sections back as YAML (for the wrapper written beside a launched recipe).
YAML::Node launch_settings_yaml(const LaunchSettings& s);
YAML::Node measure_settings_yaml(const MeasureSettings& s);

// "40m", "2h", "90s", "1:30:00", "1-00:00:00", or Slurm's bare minutes ("90")
// as seconds; nullopt-like -1 when the text is none of these.
double parse_time_limit_s(const std::string& text);
// Slurm's [D-]HH:MM:SS for a number of seconds (rounded up to a minute).
std::string format_time_limit(double seconds);

}  // namespace attune::recipe
