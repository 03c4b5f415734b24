// Perturbation: a scenario's hidden truth — multiplicative factors on named
// parts of the performance model (GEMM efficiency per GPU type, attention
// kernel, NVLink, network, all-to-all, a lever's effect, memory overhead) and
// the noise of its runs. The simulator applies it; policies never see it.
// Read from a YAML file (`--sim-perturb FILE`), e.g.:
//
//   gemm: {h100: 0.95, b200: 0.85}   # or one number for every GPU type
//   attention: 0.9
//   nvlink: 1.0
//   network: 0.7
//   alltoall: 0.8
//   memory: 1.05                      # > 1: more memory than modelled
//   levers: {tp_comm_overlap: 0.5, fp8: 0.8}   # 1 = the modelled gain, 0 = none
//   noise_cv: 0.03
//   stragglers: {probability: 0.02, slowdown: 1.5}
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attune::sim {

struct Perturbation {
  double gemm = 1;                         // achievable GEMM throughput, every GPU type
  std::map<std::string, double> gemm_by_gpu;  // GPU id -> factor (overrides `gemm`)
  double attention = 1;                    // attention kernel throughput
  double nvlink = 1;                       // NVLink bandwidth
  double network = 1;                      // scale-out bandwidth
  double alltoall = 1;                     // all-to-all bandwidth on top of the link factors
  double memory = 1;                       // memory overhead (fragmentation, workspaces)
  // Scale of a lever's modelled gain (see lever_effect_names()).
  double fp8 = 1;
  double tp_comm_overlap = 1;
  double dp_overlap = 1;                   // overlap_grad_reduce / overlap_param_gather
  double cuda_graphs = 1;
  double deepep = 1;
  double recompute = 1;                    // scale of recompute's extra forward time
  // Noise of each run (the run log and simulated jobs).
  double noise_cv = 0.02;
  double straggler_probability = 0;
  double straggler_slowdown = 1.5;

  double gemm_for(const std::string& gpu) const;
};

// Names accepted under `levers:`.
const std::vector<std::string>& lever_effect_names();

// Parses a perturbation file; throws InputError naming the file, line and key
// for an unknown key, a non-number or a factor outside (0, 10].
Perturbation read_perturbation(const std::string& path);
Perturbation parse_perturbation(const std::string& name, const std::string& yaml_text);
nlohmann::json to_json(const Perturbation& p);

}  // namespace attune::sim
