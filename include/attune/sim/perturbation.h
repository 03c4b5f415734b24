// Perturbation: a scenario's hidden truth — how one cluster differs from the
// simulator's nominal model. Factors on named parts of the model (GEMM
// efficiency per GPU type, attention, NVLink, network, all-to-all, memory),
// scales of what a lever is modelled to gain, signed effects of a lever on any
// part of the step or of memory (possibly only in combination with another
// lever or a layout), settings that fail here (an import error, a hang), the
// noise of its runs and how slowly they start. The `sim` cluster and the
// benchmark harness apply it; policies never see it. The file format is
// docs/scenarios.md ("truth.yaml"); every key is optional and an empty file
// is the nominal model.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attune/sim/effects.h"

namespace attune::sim {

// How a setting fails on this cluster, as the framework and the launcher
// report it (the diagnoser's failure classes).
enum class FailureKind : std::uint8_t {
  ImportError,          // at start-up: a module the setting needs is missing or broken
  InvalidArgument,      // at start-up: the framework rejects the combination
  Hang,                 // a collective never completes from `at_step` on: the watchdog or NCCL's timeout ends it
  NcclTimeout,          // a collective times out at `at_step` (NCCL's watchdog takes the job down)
  NcclError,            // NCCL reports an error at `at_step`
  IllegalMemoryAccess,  // a kernel faults at `at_step`
};
std::string_view failure_kind_name(FailureKind k);  // "import_error", ...

struct FailureRule {
  std::vector<Condition> when;  // all must hold; none: every setting
  FailureKind kind = FailureKind::ImportError;
  int at_step = 1;              // runtime failures: the step at which it strikes
  std::string message;          // the framework's words ("" = the simulator's own for the kind)
  std::string why;
  int line = 0;
};

// The noise of one run: each launch draws a fresh run-level factor, slow
// nodes and per-step jitter and stragglers (docs/scenarios.md).
struct NoiseModel {
  double run_cv = 0.01;         // run-to-run CV of the step time on one node (placement, clocks)
  double per_node_doubling_cv = 0.002;  // extra run CV per doubling of the node count
  double cross_node_cv = 0.02;  // extra run CV per unit of exposed cross-node communication share
  double step_cv = 0.01;        // per-step jitter within a run
  double slow_node_probability = 0;   // chance that a node is slow for the whole run
  double slow_node_slowdown = 1.05;   // step time / its time on healthy nodes
  double straggler_probability = 0;   // chance per GPU and step that it holds the step up
  double straggler_slowdown = 1.5;
  double node_failure_per_node_hour = 0;  // chance that a node fails, per node-hour of the run
};

struct Perturbation {
  double gemm = 1;                         // achievable GEMM throughput, every GPU type
  std::map<std::string, double> gemm_by_gpu;  // GPU id -> factor (overrides `gemm`)
  double attention = 1;                    // attention kernel throughput
  double nvlink = 1;                       // NVLink bandwidth
  double network = 1;                      // scale-out bandwidth
  double alltoall = 1;                     // all-to-all bandwidth on top of the link factors
  double memory = 1;                       // memory overhead (fragmentation, workspaces)
  // Scale of a lever's modelled gain (see lever_effect_names()): 0 = none,
  // 1 = as modelled, 2 = twice it. A lever that hurts is an effect.
  double fp8 = 1;
  double tp_comm_overlap = 1;
  double dp_overlap = 1;                   // overlap_grad_reduce / overlap_param_gather
  double cuda_graphs = 1;
  double deepep = 1;
  double recompute = 1;                    // scale of recompute's extra forward time
  std::vector<Effect> effects;             // signed effects of levers and their combinations
  std::vector<FailureRule> failures;       // settings that fail on this cluster
  double memory_risk = 0.03;               // within this share of HBM a run may OOM late (more often nearer the limit)
  double startup = 1;                      // scale of the start-up time (slow image pulls, a slow file system)
  NoiseModel noise;
  std::uint64_t seed = 1;                  // campaign seed when the truth states one

  double gemm_for(const std::string& gpu) const;
};

// Names accepted under `levers:`.
const std::vector<std::string>& lever_effect_names();

// Parses a truth file; throws InputError naming the file, line and key for
// an unknown key, a non-number or a value outside its range.
Perturbation read_perturbation(const std::string& path);
Perturbation parse_perturbation(const std::string& name, const std::string& yaml_text);
nlohmann::json to_json(const Perturbation& p);

}  // namespace attune::sim
