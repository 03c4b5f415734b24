// StepModel: the simulator's prediction for one Workload on one GpuSystem —
// step time from compute (GEMMs at their achievable efficiency, attention,
// memory-bound work, recompute), the communication each parallelism needs
// (TP/SP, CP ring, EP all-to-all, DP reduce-scatter/all-gather, PP
// send/recv) less what the overlap flags hide, the pipeline bubble, the
// optimizer step and data loading; peak memory from the MemoryModel; and the
// way the run fails (OOM, an invalid layout, a combination the framework or
// the cluster rejects) when it would. The parts and the effects of the
// choices are step_parts.h; the model and its sources: docs/simulator.md.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "attune/sim/gpu_system.h"
#include "attune/sim/memory_model.h"
#include "attune/sim/perturbation.h"
#include "attune/sim/step_parts.h"
#include "attune/sim/workload.h"

namespace attune::sim {

struct Prediction {
  bool ok = false;
  std::string failure;         // "" | "oom" | "invalid_argument" | "import_error" | "hang" | ... (diagnoser classes)
  std::string error;           // the framework's message for the failure
  int fails_at_step = 0;       // runtime failures: the step at which the run dies (0: at start-up)
  bool oom_at_optimizer = false;  // an OOM only once the optimizer state is allocated (first step's end)
  double step_time_s = 0;
  double tokens_per_s_per_gpu = 0;
  double tflops_per_gpu = 0;   // model FLOPs, causal-halved convention
  double mfu = 0;              // against the dense BF16 peak (FP8 runs too), like the calibration data
  double oom_risk = 0;         // chance per run of a late, intermittent OOM (memory within memory_risk of HBM)
  StepBreakdown breakdown;
  MemoryBreakdown memory;
  double hbm_gib = 0;
};

// How much a prediction explains: Full adds the memory model's notes and the
// failure's message; Numbers is for searches that predict millions of layouts.
enum class Detail { Full, Numbers };

Prediction predict(const Workload& w, const Perturbation& p = {}, Detail detail = Detail::Full);
// The prediction of one setting from its parts, with its choices' factors.
Prediction predict_from_parts(const Workload& w, const StepParts& parts, const Perturbation& p, Detail detail);
nlohmann::json to_json(const Prediction& p);

// Late-OOM chance per run at this memory use: 0 below (1 - risk) x HBM,
// rising to 0.6 at the limit.
double oom_risk(double total_gib, double hbm_gib, double risk_share);
// The memory a setting may use without any risk of a late OOM.
inline double risk_free_gib(double hbm_gib, double risk_share) { return (1 - risk_share) * hbm_gib; }

}  // namespace attune::sim
