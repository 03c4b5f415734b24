// LayoutSearch: the best settings of a Workload that keep what it trains —
// same model, GPUs, global batch and sequence length — over every layout (TP,
// PP, virtual stages, CP, EP, expert TP, micro batch), every structural lever
// (recompute and its modules or layers, activation offload, sharding stage,
// reshard after forward, sequence parallel, distributed optimizer, the
// overlap flags, FP8 when the user allows it) and every choice (attention
// kernel, compile, CUDA graphs, NCCL settings, bucket size, workers, MoE
// dispatcher, CP communication, expandable segments) the recipe can spell.
//
// Exact, by branch and bound: every layout and structural setting (a "core")
// is taken apart once (step_parts) and bounded with its choices' most
// favourable factors; cores are explored best bound first, and within a core
// the choices are fixed one by one, each partial assignment bounded the same
// way. A branch is cut only when its bound cannot beat what is kept, and the
// step time is monotone in every factor (step_parts.h), so nothing better is
// ever cut. Settings that fail (an invalid combination, an OOM, memory within
// the truth's risk margin of HBM) never count. Works on Workloads only;
// Optimum turns the winner into recipe edits the gate approves.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "attune/sim/perturbation.h"
#include "attune/sim/recipe_levers.h"
#include "attune/sim/step_model.h"
#include "attune/sim/workload.h"

namespace attune::sim {

// Which dimensions may change (false or a one-entry list: keep the base
// workload's value) — the levers the recipe's framework exposes.
struct SearchSpace {
  bool tp = true, pp = true, vp = true, cp = true, ep = true, etp = false, mbs = true;
  // Values the gate refuses on their own (Megatron's padded vocabulary moves
  // with TP, for one); the base value is always allowed.
  std::vector<int> refused_tp, refused_pp, refused_vp, refused_cp, refused_ep, refused_mbs;
  // The micro batch follows the layout (no gradient accumulation: HyperPod
  // SMP's global batch is the micro batch times the data-parallel size).
  bool mbs_follows_dp = false;
  // The FSDP shard group is the DP ranks expert parallelism leaves (Axolotl's
  // expert-parallel plugin: expert_parallel_size x dp_shard_size = world).
  bool shard_excludes_ep = false;
  int max_mbs = 16;
  int max_pp = 32;
  int max_vp = 8;
  int max_cp = 16;
  // Structural levers: the values to try (the base's first; empty: the base only).
  std::vector<RecomputeSetting> recompute;
  std::vector<int> offload_layers;
  std::vector<int> zero_stage;
  bool sequence_parallel = true, distributed_optimizer = true, reshard_after_forward = false;
  bool fp8 = false;     // numerics: only when the user allows it
  // Choices: bit v set = value v may be tried (the base's value always is).
  std::array<std::uint32_t, kChoiceCount> choices{};
};

// Every lever and choice the recipe can spell (no gate refusals yet).
SearchSpace search_space(const SpellableLevers& spellable);
// Every value of every lever the simulator reads, whatever a recipe can
// spell (tests, and people asking what the model itself would do).
SearchSpace every_setting(const Workload& base);

struct RankedWorkload {
  Workload workload;
  Prediction prediction;  // Detail::Numbers
  int changes = 0;        // dimensions that differ from the base
};

struct SearchResult {
  std::vector<RankedWorkload> best;  // best first; only settings that run reliably
  long long settings = 0;            // settings in the space: every one evaluated or bounded out
  long long evaluated = 0;           // settings predicted in full
  long long cores = 0;               // layouts x structural settings taken apart
};

// Ranks by tokens/s/GPU, each changed dimension costing 0.1% so that a
// change must pay for itself; keeps the `keep` best.
SearchResult search_layouts(const Workload& base, const SearchSpace& space, const Perturbation& pert,
                            std::size_t keep = 32);

// Every setting one lever away from `from` within the space (the values the
// space allows for `base`): another TP with DP following, another recompute
// setting, another value of one choice. Layouts the framework would reject
// are left out (a tuner checks them before launching).
std::vector<Workload> one_lever_moves(const Workload& from, const Workload& base, const SearchSpace& space);

// The score search_layouts ranks by.
double search_score(double tokens_per_s_per_gpu, int changes);

}  // namespace attune::sim
