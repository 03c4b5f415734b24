// LayoutSearch: every legal layout (TP, PP, virtual stages, CP, EP, micro
// batch) and lever setting (recompute, sequence parallel, distributed
// optimizer, the overlap flags, CUDA graphs, the MoE dispatcher, FP8 when the
// user allows it) of a Workload that keeps what it trains — same model, GPUs,
// global batch and sequence length — predicted and ranked. Works on Workloads
// only; Optimum turns the winner into recipe edits the gate approves.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "attune/sim/perturbation.h"
#include "attune/sim/step_model.h"
#include "attune/sim/workload.h"

namespace attune::sim {

// Which dimensions may change (false: keep the base workload's value) — the
// levers the recipe's framework exposes.
struct SearchSpace {
  bool tp = true, pp = true, vp = true, cp = true, ep = true, mbs = true, recompute = true;
  bool sequence_parallel = true, distributed_optimizer = true, overlap_grad_reduce = true,
       overlap_param_gather = true, tp_comm_overlap = true, cuda_graphs = true, moe_dispatcher = true;
  bool fp8 = false;     // numerics: only when the user allows it
  // Values the gate refuses on their own (Megatron's padded vocabulary moves
  // with TP, for one); the base value is always allowed.
  std::vector<int> refused_tp, refused_pp, refused_vp, refused_cp, refused_ep, refused_mbs;
  std::vector<std::string> refused_recompute;
  int max_mbs = 16;
  int max_pp = 32;
  int max_vp = 8;
  int max_cp = 16;
};

struct RankedWorkload {
  Workload workload;
  Prediction prediction;  // Detail::Numbers
  int changes = 0;        // dimensions that differ from the base
};

struct SearchResult {
  std::vector<RankedWorkload> best;  // fastest first; only runs that fit and are valid
  long long searched = 0;            // predictions made
};

// Ranks by tokens/s/GPU, each changed dimension costing 0.1% so that a
// change must pay for itself; keeps the `keep` best.
SearchResult search_layouts(const Workload& base, const SearchSpace& space, const Perturbation& pert,
                            std::size_t keep = 32);

}  // namespace attune::sim
