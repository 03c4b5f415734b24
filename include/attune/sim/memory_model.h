// MemoryModel: the peak memory one GPU needs for a Workload — model states under
// DP sharding, activations of the pipeline stage that holds the most
// micro-batches with TP/SP/CP and recompute, MoE experts under EP, and the
// fixed consumers (CUDA context, NCCL buffers, fragmentation). A peak above
// the GPU's HBM is an OOM. Formulas and sources: perfmodel.md §3.
#pragma once

#include <string>
#include <vector>

#include "attune/sim/workload.h"

namespace attune::sim {

// GiB (2^30 bytes) per GPU, for the most loaded GPU.
struct MemoryBreakdown {
  double weights_gib = 0;
  double gradients_gib = 0;
  double optimizer_gib = 0;
  double activations_gib = 0;       // peak in-flight activations (incl. logits on the last stage)
  double overhead_gib = 0;          // CUDA context, NCCL, workspace, FP8 caches
  double fragmentation_gib = 0;     // allocator reserve above allocated
  double peak_allocated_gib = 0;    // weights + grads + optimizer + activations + FP8 extras
  double peak_reserved_gib = 0;     // what the allocator holds: allocated + fragmentation
  double total_gib = 0;             // reserved + overhead: what the GPU must hold
  std::vector<std::string> notes;   // assumptions worth reading
};

// hbm_gib: usable capacity, for the notes only; OOM is decided by the caller.
// with_notes = false skips the notes (searches).
MemoryBreakdown estimate_memory(const Workload& w, double hbm_gib, bool with_notes = true);

}  // namespace attune::sim
