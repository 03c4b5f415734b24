// The shape of one run on one GPU, as the step model and its nominal effects
// compute with it. Internal to src/sim.
#pragma once

#include "attune/recipe/model_spec.h"
#include "attune/recipe/plan.h"
#include "attune/sim/gpu_system.h"
#include "attune/sim/knobs.h"

namespace attune::sim::detail {

struct Shape {
  const recipe::ModelSpec& m;
  const recipe::Plan& p;
  const Knobs& k;
  const GpuSystem& g;
  double s = 0;           // sequence length
  double tok_mb = 0;      // tokens of one micro-batch on one GPU (after CP)
  double micro = 0;       // micro-batches per step per pipeline
  int layers_stage = 0;   // transformer layers on the busiest stage
  double q = 0, kv = 0, ffn_gemms = 0;
  double qk_av = 0;       // per token, all heads: the QK^T and AV widths (MLA: 192 + 128 per head)
  double params = 0;      // parameters on the busiest GPU, before DP sharding (the memory model's count)
  double gemm_factor = 1; // the perturbation's GEMM factor for this GPU type
};

// Whether a group of `ranks` groups of `inner` adjacent GPUs leaves the NVLink domain.
inline bool crosses_nodes(const Shape& sh, int inner, int ranks) {
  return static_cast<long long>(inner) * ranks > sh.g.nvlink_domain;
}

}  // namespace attune::sim::detail
