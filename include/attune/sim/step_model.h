// StepModel: the simulator's prediction for one Workload on one GpuSystem —
// step time from compute (GEMMs at their achievable efficiency, attention,
// memory-bound work, recompute), the communication each parallelism needs
// (TP/SP, CP ring, EP all-to-all, DP reduce-scatter/all-gather, PP
// send/recv) less what the overlap flags hide, the pipeline bubble and the
// optimizer step; peak memory from the MemoryModel; and the way the run
// fails (OOM, an invalid layout) when it would. perfmodel.md §2, §4, §5.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "attune/sim/gpu_system.h"
#include "attune/sim/memory_model.h"
#include "attune/sim/perturbation.h"
#include "attune/sim/workload.h"

namespace attune::sim {

// Seconds per optimizer step, by where they go (exposed time only: what
// overlap hides is not counted).
struct StepBreakdown {
  double compute_s = 0;        // forward + backward model FLOPs
  double recompute_s = 0;      // extra forward for recomputed layers
  double memory_bound_s = 0;   // norms, activations, elementwise work, FP8 casts
  double tp_comm_s = 0;
  double cp_comm_s = 0;
  double ep_comm_s = 0;
  double dp_comm_s = 0;
  double pp_comm_s = 0;
  double bubble_s = 0;
  double optimizer_s = 0;
  double other_s = 0;          // per-step fixed costs (launch, data, logging)
};

struct Prediction {
  bool ok = false;
  std::string failure;         // "" | "oom" | "invalid_argument"
  std::string error;           // the framework's message for the failure
  double step_time_s = 0;
  double tokens_per_s_per_gpu = 0;
  double tflops_per_gpu = 0;   // model FLOPs, causal-halved convention
  double mfu = 0;              // against the dense BF16 peak (FP8 runs too), like the calibration data
  StepBreakdown breakdown;
  MemoryBreakdown memory;
  double hbm_gib = 0;
};

// How much a prediction explains: Full adds the memory model's notes and the
// failure's message; Numbers is for searches that predict millions of layouts.
enum class Detail { Full, Numbers };

Prediction predict(const Workload& w, const Perturbation& p = {}, Detail detail = Detail::Full);
nlohmann::json to_json(const Prediction& p);

}  // namespace attune::sim
