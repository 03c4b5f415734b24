// Effects: how a setting moves a part of the step or of memory. The step
// model computes each part (a Term) for a layout and its structural levers;
// effects multiply parts by factors under conditions on the setting — a
// choice's value, a structural lever, a layout property. The simulator's own
// (nominal) knowledge of the choices is effects (the attention kernel's
// efficiency, CUDA graphs removing launch overhead, a forced NCCL protocol),
// and so is a scenario's hidden truth (`effects:` in its truth file: a lever
// that hurts here, an interaction with another lever). Because every factor
// enters the step time monotonically, the search can bound what choices it has
// not fixed yet can gain (layout_search.h).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attune/sim/knobs.h"

namespace attune::sim {

struct Workload;

enum class Term : std::uint8_t {
  // Seconds of one micro-batch on the busiest stage, forward + backward.
  Gemm,           // dense GEMMs: attention projections, dense MLP / shared experts, the output layer
  ExpertGemm,     // routed-expert GEMMs
  Attention,      // the attention kernel (QK^T, softmax, AV)
  MemoryBound,    // norms, activations, residuals, permutation, casts
  Launch,         // kernel launch overhead (what CUDA graphs remove)
  Recompute,      // the extra forward of recomputed work (a scale on it)
  TpComm,         // TP/SP collectives before overlap
  TpHide,         // share of them that overlap can hide (a benefit)
  CpComm,         // context-parallel K/V exchange
  CpHide,         // share of it hidden behind attention (a benefit)
  EpComm,         // MoE dispatch and combine
  Offload,        // activation-offload transfers (before what the compute hides)
  // Seconds per optimizer step.
  DpComm,         // gradient reduce-scatter / all-reduce and parameter all-gather, before overlap
  DpTail,         // the last bucket, which nothing hides
  DpHide,         // share of the backward / forward the overlap hides them behind (a benefit)
  DpReduceHide,   // whether gradient reductions overlap the backward (a benefit: 1 on, 0 off)
  DpGatherHide,   // whether parameter gathers overlap the forward (a benefit: 1 on, 0 off)
  PpComm,         // pipeline send/recv
  Bubble,         // pipeline fill and drain (a scale on it)
  Optimizer,      // the optimizer step
  Data,           // data loading the step waits for
  Other,          // per-step fixed costs (logging, synchronisation, host overhead)
  Step,           // the whole step (a scale on it)
  // GiB on the most loaded GPU.
  MemStates,      // weights, gradients, optimizer state
  MemActivations, // activations kept for the backward, logits
  MemTransient,   // gathered FSDP units and other transient buffers
  MemFragmentation,  // allocator reserve above what is allocated (a fraction of what churns)
  MemOverhead,    // CUDA context, NCCL communicators
  MemGraphs,      // CUDA-graph memory pools
  MemBuffers,     // dispatcher (DeepEP) and NVLS buffers
  MemScores,      // s^2 attention scores of an unfused kernel
  Memory,         // all of memory (a scale on it)
};
inline constexpr std::size_t kTermCount = 32;

std::string_view term_name(Term t);
std::optional<Term> term_by_name(std::string_view name);
const std::vector<std::string_view>& term_names();
// Benefits (TpHide, CpHide, DpHide) shorten the step as they grow; every
// other term lengthens it (or raises memory).
bool is_benefit(Term t);

// A property of a setting an effect's condition can test.
enum class Property : std::uint8_t {
  // Choices (Choice values as their index) come first, in Choice's order.
  // Structural levers and layout:
  Tp = kChoiceCount, Pp, Vp, Cp, Ep, Etp, Dp, Mbs, Micro, Nodes, World,
  Recompute,       // 0 none, 1 selective, 2 full
  RecomputeLayers, // full recompute: layers per stage (0 = all)
  SequenceParallel, DistributedOptimizer, ZeroStage, ReshardAfterForward, Fp8, Offload,
  EpNodes,         // nodes one EP group spans
  CrossNodeDp,     // 1 when the data-parallel group leaves the node
  Moe,             // 1 for a mixture-of-experts model
};
inline constexpr std::size_t kPropertyCount = kChoiceCount + 22;

std::string_view property_name(Property p);
std::optional<Property> property_by_name(std::string_view name);
bool is_choice(Property p);
// The property a choice is read as.
constexpr Property property_of(Choice c) { return static_cast<Property>(static_cast<std::uint8_t>(c)); }
// The value of a structural or layout property for a workload (choices too).
long long property_value(const Workload& w, Property p);

// Holds when the property's value lies in one of the ranges.
struct Condition {
  Property property = Property::Tp;
  struct Range {
    long long lo, hi;
  };
  std::vector<Range> ranges;

  bool holds(long long v) const;
};

struct Effect {
  Term term = Term::Step;
  double factor = 1;              // > 0; < 1 shortens the part (or, for a benefit, shrinks it)
  std::vector<Condition> when;    // all must hold
  std::string why;                // what real effect it stands for
  int line = 0;                   // where a truth file states it (0: built in)
};

// One value per term: what the step model computes, or the product of the
// factors that apply.
using TermValues = std::array<double, kTermCount>;

// An effect whose structural and layout conditions held for one setting:
// what is left to test is the choices (at most four of them).
struct ChoiceEffect {
  Term term = Term::Step;
  double factor = 1;
  std::uint8_t conditions = 0;
  std::array<std::uint8_t, 4> choice{};   // Choice index
  std::array<std::uint32_t, 4> allowed{}; // bit v: value v satisfies the condition
};

// Resolves effects against a setting's structural levers and layout: drops
// those whose conditions fail there, keeps the choice conditions. Returns
// false (and adds nothing) for an effect with more than four choice conditions.
bool resolve(const Effect& e, const Workload& w, std::vector<ChoiceEffect>& out);

// The factors of every effect whose choice conditions hold for `choices`.
TermValues factors_for(const std::vector<ChoiceEffect>& effects, const std::array<std::uint8_t, kChoiceCount>& choices);

// The most favourable factor per term over every assignment of the choices
// not yet `fixed` (bit c), each choice ranging over the values in `domain[c]`
// (bit v): the minimum for costs, the maximum for benefits. A bound: no
// completion of the fixed choices does better on any term.
TermValues best_factors(const std::vector<ChoiceEffect>& effects, const std::array<std::uint8_t, kChoiceCount>& choices,
                        std::uint32_t fixed, const std::array<std::uint32_t, kChoiceCount>& domain);

}  // namespace attune::sim
