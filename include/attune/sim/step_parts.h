// StepParts: one setting's step and memory taken apart — what each Term
// comes to for a layout and its structural levers, before the choices
// (knobs.h) are applied — with the effects that the choices (and the
// scenario's truth) have on them. combine_step() and combine_memory() put the
// parts together under a set of term factors; they are monotone in every
// factor (a larger cost factor never shortens the step, a larger benefit
// never lengthens it), which lets the search bound a setting whose choices it
// has not fixed yet (best_factors in effects.h). predict() is
// step_parts + factors_for + combine.
#pragma once

#include <string>
#include <vector>

#include "attune/sim/effects.h"
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
  double memory_bound_s = 0;   // norms, activations, elementwise work, FP8 casts, kernel launches
  double tp_comm_s = 0;
  double cp_comm_s = 0;
  double ep_comm_s = 0;
  double dp_comm_s = 0;
  double pp_comm_s = 0;
  double bubble_s = 0;
  double optimizer_s = 0;
  double offload_s = 0;        // activation offload transfers the compute does not hide
  double data_s = 0;           // data loading the step waits for
  double other_s = 0;          // per-step fixed costs (logging, synchronisation)
};

// One data-parallel collective of the step: its seconds before overlap, how
// often it runs and what it can hide behind.
struct DpCollective {
  double seconds = 0;
  double count = 0;       // per optimizer step
  int window = 0;         // 0: nothing (exposed), 1: a micro-batch's forward, 2: its backward
};

// A combination of choices that cannot run (the framework rejects it, or the
// truth says it fails here).
struct ChoiceFailure {
  ChoiceEffect when;            // its term and factor are unused
  FailureKind kind = FailureKind::InvalidArgument;
  int at_step = 1;
  std::string message;
};

struct StepParts {
  std::string failure;          // "" | "invalid_argument": the layout itself is invalid
  std::string error;            // the framework's message
  double hbm_gib = 0;
  TermValues value{};           // per time term: seconds, or 1 for the scales (Recompute, Bubble, Step, Memory); memory terms carry factors only (their bytes: `memory`)
  double micro = 1;             // micro-batches per step per pipeline
  // Recompute: seconds of one micro-batch's extra forward, by the term whose factor they follow.
  double recompute_gemm = 0, recompute_expert = 0, recompute_attention = 0, recompute_memory_bound = 0;
  double tp_gemm_share = 0;     // TP overlap hides at most this share of the compute
  bool dp_flagged = true;       // DP overlap follows the overlap flags (DDP, distributed optimizer), not FSDP's prefetch
  double offload_hide_share = 0;  // activation offload's transfers hide behind this share of the compute
  std::vector<DpCollective> dp; // the step's data-parallel collectives (DpComm factor, DpTail, DpHide)
  MemoryParts memory;
  std::vector<ChoiceEffect> effects;   // the simulator's own and the truth's, resolved for this setting
  std::vector<ChoiceFailure> failures;
  double tokens_per_step = 0;
  int world = 1;
  double flops_per_token = 0;   // causal-halved convention
  double peak_tflops = 0;       // dense BF16 peak (MFU)
};

// Detail::Full adds the failure messages the search does not need.
StepParts step_parts(const Workload& w, const Perturbation& p, bool with_messages = true);
// The same into `out`, reusing its buffers (searches take millions apart).
void step_parts(const Workload& w, const Perturbation& p, bool with_messages, StepParts& out);

// Seconds per step under these factors (and the breakdown when asked).
double combine_step(const StepParts& parts, const TermValues& f, StepBreakdown* breakdown = nullptr);
// GiB on the most loaded GPU under these factors (and the breakdown when asked).
double combine_memory(const StepParts& parts, const TermValues& f, MemoryBreakdown* breakdown = nullptr);
// The failure of these choices, or nullptr.
const ChoiceFailure* failure_for(const StepParts& parts, const std::array<std::uint8_t, kChoiceCount>& choices);

}  // namespace attune::sim
