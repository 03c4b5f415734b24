// MemoryModel: the peak memory one GPU needs for a Workload — model states under
// DP sharding, activations of the pipeline stage that holds the most
// micro-batches with TP/SP/CP and recompute, MoE experts under EP, and the
// fixed consumers (CUDA context, NCCL buffers, fragmentation). A peak above
// the GPU's HBM is an OOM. What it counts: docs/simulator.md (memory).
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

// One pipeline stage's GPU, in bytes, before the choices' factors: what
// CUDA graphs, DeepEP or an unfused attention kernel would add is here, and a
// factor of 0 takes it out when the choice is off.
struct StageMemory {
  double weights = 0, grads = 0, optimizer = 0;  // model states
  double activations = 0;                        // kept for the backward, logits
  double transient = 0;                          // gathered FSDP units (churn, counted in weights/grads)
  double scores = 0;                             // s^2 scores if attention were unfused
  double graphs = 0;                             // CUDA-graph pools if graphs were on
  double buffers = 0;                            // DeepEP buffers if it dispatched
  double overhead = 0;                           // CUDA context + NCCL communicators
  double fragmentation = 0;                      // reserved-but-unallocated share of what churns
  double inflight = 0;                           // micro-batches' worth of activations held (notes)
};

// The pipeline's two ends (the same stage without PP).
struct MemoryParts {
  StageMemory first, last;
  bool pipelined = false;
};
MemoryParts memory_parts(const Workload& w);

// Factors on the parts (the memory terms of effects.h).
struct MemoryFactors {
  double states = 1, activations = 1, transient = 1, fragmentation = 1, overhead = 1, graphs = 1, buffers = 1,
         scores = 1, memory = 1;
};
// One stage under factors.
MemoryBreakdown memory_breakdown(const StageMemory& s, const MemoryFactors& f);
// The more loaded end, with notes when asked.
MemoryBreakdown worst_stage(const Workload& w, const MemoryParts& parts, const MemoryFactors& f, double hbm_gib,
                            bool with_notes);

// The workload's memory with its choices' own effects (graphs, DeepEP,
// unfused attention, expandable segments, NVLS). hbm_gib: usable capacity,
// for the notes only; OOM is decided by the caller. with_notes = false skips
// the notes (searches).
MemoryBreakdown estimate_memory(const Workload& w, double hbm_gib, bool with_notes = true);

}  // namespace attune::sim
