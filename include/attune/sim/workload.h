// Workload: what the simulator needs to know about one training run — the
// model, the canonical plan (layout, batch, sequence, precision, recompute) and
// the throughput knobs the analytic model understands — independent of the
// framework that spelled them. Built from a Recipe (workload_from_recipe) or
// from a row of published measurements (calibration).
#pragma once

#include <string>

#include "attune/recipe/model_spec.h"
#include "attune/recipe/plan.h"

namespace attune::sim {

// Levers beyond the plan that change time or memory. Defaults are what
// Megatron-LM's current performance recipes run with.
struct Knobs {
  bool sequence_parallel = true;        // TP with SP (activations sharded between TP ranks)
  bool distributed_optimizer = true;    // ZeRO-1-like optimizer sharding over DP
  bool grads_fp32 = false;              // fp32 gradient buffer (grad_reduce_in_fp32); performance recipes keep bf16
  int zero_stage = 0;                   // 0 none, 1 optimizer, 2 +grads, 3 +params (FSDP full shard)
  bool overlap_grad_reduce = true;      // DP reduce-scatter overlapped with backward
  bool overlap_param_gather = true;     // DP all-gather overlapped with forward
  bool tp_comm_overlap = false;         // TP collectives overlapped with GEMMs (userbuffers)
  bool flash_attention = true;          // no s^2 activations, fused attention kernel
  bool sdpa_attention = false;          // PyTorch SDPA / FlashAttention-2 kernels (torchtitan, HF) rather than TE's cuDNN ones
  bool per_op_selective = false;        // torchtitan's per-op SAC: every other matmul recomputed, attention kept
  bool compiled = true;                 // elementwise work fused (torch.compile, TE kernels); false: eager PyTorch
  std::string recompute_granularity = "none";  // none | selective | full
  int recompute_num_layers = 0;         // full recompute: layers per stage recomputed (0 = all)
  bool fp8 = false;                     // FP8 GEMMs (Transformer Engine / torchao)
  bool mxfp8 = false;                   // FP8 with 1x32 block scales (Blackwell): less end-to-end gain than per-tensor
  bool fp8_param_gather = false;        // no BF16 weight copy kept beside FP8
  double optimizer_cpu_offload = 0;     // fraction of optimizer state on the CPU
  bool cuda_graphs = false;
  std::string moe_dispatcher = "alltoall";  // alltoall | allgather | deepep
  bool expandable_segments = false;     // allocator setting: less fragmentation
  bool loss_fp32 = true;                // logits upcast to fp32 for the loss (AutoModel's fp32_upcast: false keeps bf16)
  bool uneven_pipeline_split = false;   // first/last stage sizes set (layers need not divide by PP)
  // The source did not say whether it recomputes (published measurements):
  // its recipe default may, so a predicted OOM is retried with recompute.
  bool recompute_unstated = false;
};

struct Workload {
  recipe::ModelSpec model;
  recipe::Plan plan;  // plan.gpu, nodes, gpus_per_node, world and the layout are filled
  Knobs knobs;
};

}  // namespace attune::sim

namespace attune::recipe {
class Recipe;
}

namespace attune::sim {

// The Workload a recipe describes: its model (preset or the recipe's own
// fields), its plan, and the knobs read from its canonical levers. Throws
// InputError when the recipe names no model or no GPU type.
Workload workload_from_recipe(const recipe::Recipe& r);

}  // namespace attune::sim
