#include "nominal_effects.h"

#include <algorithm>
#include <initializer_list>

#include "attune/util/text.h"
#include "memory_terms.h"

namespace attune::sim::detail {

namespace {

constexpr double kBf16Bytes = 2;
constexpr double kMiB = 1024.0 * 1024.0;

// Attention kernels: share of the BF16 peak over forward and backward.
// TE's fused (cuDNN) kernels ~50% (FlashAttention-3 paper: FA3 reaches 75%
// forward, backward lower); FlashAttention-2 35% forward on Hopper and less
// backward (FA3 paper, Table 2), which PyTorch SDPA and TE's flash backend
// run (TE's flash backend takes FA3 on Hopper when it is installed);
// FA3 is Hopper-only; FlexAttention ~85% of FA2; the unfused math path is
// bound by the s^2 score traffic.
double attention_efficiency(std::uint8_t kernel, bool hopper, bool blackwell) {
  switch (kernel) {
    case attention::kFused: return 0.55;
    case attention::kFlash: return hopper ? 0.45 : blackwell ? 0.3 : 0.5;
    case attention::kFlash3: return 0.55;
    case attention::kSdpa: return 0.3;
    case attention::kFlex: return 0.26;
    default: return 0.08;
  }
}
// Context parallelism splits attention into per-chunk kernels with a softmax
// correction between them (p2p ring, all-gather), each a fraction of the size
// (fitted on the four CP rows); Ulysses all-to-all keeps whole-sequence kernels.
constexpr double kCpAttentionEfficiency = 0.6;
// Eager PyTorch runs norms, activations and residual adds as separate
// kernels: about twice the HBM traffic of fused ones (torchtitan: compile
// +16%), and keeps more intermediates (82.4 vs 77.0 GiB on Llama 3.1 8B).
constexpr double kEagerTrafficFactor = 2.0;
constexpr double kEagerActivationFactor = 1.1;
// What CUDA graphs leave of the launch overhead: per-layer capture (TE,
// Megatron's local graphs) keeps the inter-layer launches; MoE layers with
// dropless routing can only capture their static parts; full-iteration
// graphs leave almost nothing (Bridge performance guide, host overhead).
constexpr double kLayerGraphsResidual = 0.2, kMoeGraphsResidual = 0.6, kFullGraphsResidual = 0.05;
constexpr double kFullGraphsMemory = 1.3;
// NVLink SHARP all-reduce 480 GB/s against the ring's 370 on 8 GPUs (§1.3):
// the collective model's NVLink figures are the ring's, so NVLS speeds up
// collectives of more than two GPUs inside a node by 370/480.
constexpr double kNvlsFactor = 370.0 / 480.0;
// Expandable segments leave ~3% of the churn reserved instead of ~10%.
constexpr double kExpandableFragmentation = 0.3;
// CUDA_DEVICE_MAX_CONNECTIONS != 1 before Blackwell: TP/CP overlap loses its
// ordering (Megatron warns; the overlapped GEMM waits behind the
// collective), and FSDP wants concurrent streams (1 serialises them).
constexpr double kUnorderedTpHide = 0.4, kUnorderedCpHide = 0.5, kSerialisedFsdpHide = 0.6;

inline void add(StepParts& parts, Choice c, std::initializer_list<std::uint8_t> values, Term t, double factor) {
  if (factor == 1) return;
  std::uint32_t mask = 0;
  for (std::uint8_t v : values) mask |= 1u << v;
  ChoiceEffect& e = parts.effects.emplace_back();
  e.term = t;
  e.factor = factor;
  e.conditions = 1;
  e.choice[0] = static_cast<std::uint8_t>(c);
  e.allowed[0] = mask;
}

// An effect that needs two choices at given values.
void add_pair(StepParts& parts, Choice a, std::uint8_t va, Choice b, std::uint8_t vb, Term t, double factor) {
  ChoiceEffect& e = parts.effects.emplace_back();
  e.term = t;
  e.factor = factor;
  e.conditions = 2;
  e.choice[0] = static_cast<std::uint8_t>(a);
  e.allowed[0] = 1u << va;
  e.choice[1] = static_cast<std::uint8_t>(b);
  e.allowed[1] = 1u << vb;
}

void fail(StepParts& parts, Choice c, std::initializer_list<std::uint8_t> values, FailureKind kind, std::string message) {
  ChoiceFailure f;
  f.when.conditions = 1;
  f.when.choice[0] = static_cast<std::uint8_t>(c);
  for (std::uint8_t v : values) f.when.allowed[0] |= 1u << v;
  f.kind = kind;
  f.message = std::move(message);
  parts.failures.push_back(std::move(f));
}

bool hopper_or_older(const GpuSystem& g) { return !(g.id == "b200" || g.id == "gb200"); }

void attention_effects(const Workload& w, const NominalInputs& in, StepParts& parts, bool with_messages) {
  const GpuSystem& g = in.sh.g;
  const bool hopper = g.id == "h100" || g.id == "h200" || g.id == "h100-96gb";
  const bool blackwell = g.id == "b200" || g.id == "gb200";
  for (std::uint8_t k = 0; k < choice_values(Choice::Attention).size(); ++k)
    add(parts, Choice::Attention, {k}, Term::Attention, 1 / attention_efficiency(k, hopper, blackwell));
  add(parts, Choice::Attention, {attention::kFused, attention::kFlash, attention::kFlash3, attention::kSdpa, attention::kFlex},
      Term::MemScores, 0.0);
  if (!hopper)
    fail(parts, Choice::Attention, {attention::kFlash3}, FailureKind::ImportError,
         with_messages ? "ImportError: FlashAttention-3 (flash_attn_3) is built for Hopper (sm90) only; this GPU is " +
                             g.display
                       : "");
  if (w.plan.cp > 1)
    fail(parts, Choice::Attention, {attention::kUnfused}, FailureKind::InvalidArgument,
         with_messages ? "ValueError: context parallelism is not supported by the unfused attention backend" : "");
}

void compile_and_graph_effects(const Workload& w, StepParts& parts, bool with_messages, const Perturbation& pert) {
  add(parts, Choice::Compile, {0}, Term::MemoryBound, kEagerTrafficFactor);
  add(parts, Choice::Compile, {0}, Term::MemActivations, kEagerActivationFactor);
  const double g = pert.cuda_graphs;
  const double layers = w.model.is_moe() ? kMoeGraphsResidual : kLayerGraphsResidual;
  auto residual = [&](double r) { return std::max(0.02, 1 - g * (1 - r)); };
  add(parts, Choice::CudaGraphs, {cuda_graphs::kLayers}, Term::Launch, residual(layers));
  add(parts, Choice::CudaGraphs, {cuda_graphs::kFull}, Term::Launch, residual(kFullGraphsResidual));
  add(parts, Choice::CudaGraphs, {cuda_graphs::kNone}, Term::MemGraphs, 0.0);
  add(parts, Choice::CudaGraphs, {cuda_graphs::kFull}, Term::MemGraphs, kFullGraphsMemory);
  if (w.model.is_moe())
    fail(parts, Choice::CudaGraphs, {cuda_graphs::kFull}, FailureKind::InvalidArgument,
         with_messages ? "AssertionError: full-iteration CUDA graphs need static shapes: dropless MoE token routing "
                         "is dynamic (pad expert inputs to capacity to capture it)"
                       : "");
}

// NCCL protocol forced for a message of `bytes` (auto picks per size):
// Simple is latency-bound on small messages; LL moves half its bytes as
// flags; LL128 is validated on NVLink, not on every network.
double proto_factor(std::uint8_t proto, double bytes, bool cross) {
  switch (proto) {
    case nccl_proto::kSimple: return bytes < kMiB ? 1.5 : bytes < 16 * kMiB ? 1.1 : 1.0;
    case nccl_proto::kLL: return bytes > 256 * 1024 ? 1.8 : bytes > 64 * 1024 ? 1.3 : 0.95;
    case nccl_proto::kLL128: return cross ? 1.1 : 1.03;
    default: return 1.0;
  }
}

// Forced channel counts: few channels cannot fill the links on large
// messages; more than NCCL picks helps a little across nodes. (What they
// take from overlapped compute in SMs is below what a measurement resolves.)
double channel_factor(std::uint8_t channels, double bytes, bool cross) {
  switch (channels) {
    case nccl_channels::k4: return bytes > 16 * kMiB ? 1.4 : bytes > kMiB ? 1.2 : 1.0;
    case nccl_channels::k16: return cross ? 0.98 : 1.0;
    case nccl_channels::k32: return cross ? 0.93 : 0.97;
    default: return 1.0;
  }
}

struct Collectives {
  double tp_bytes = 0, dp_bytes = 0, ep_bytes = 0, cp_bytes = 0;
  bool tp_cross = false, dp_cross = false, ep_cross = false, cp_cross = false;
  bool tp_nvls = false, dp_nvls = false;  // inside a node, more than two GPUs
};

Collectives collectives_of(const Workload& w, const Shape& sh) {
  Collectives c;
  const auto& p = w.plan;
  const int node = std::max(1, p.gpus_per_node);
  c.tp_bytes = sh.tok_mb * sh.m.hidden * kBf16Bytes;
  c.tp_cross = crosses_nodes(sh, 1, p.tp);
  // NVLink SHARP needs third-generation NVSwitch (Hopper, Blackwell) and
  // reduces in the switch: all-reduces gain (TP without sequence
  // parallelism, plain DDP); the all-gathers and reduce-scatters of SP and
  // sharded optimizers are modelled without it.
  const bool nvls_capable = sh.g.id != "a100";
  c.tp_nvls = nvls_capable && p.tp > 2 && !c.tp_cross && !sh.k.sequence_parallel;
  const long long dp = static_cast<long long>(p.dp) * p.cp;
  c.dp_cross = dp > 1 && static_cast<long long>(p.tp) * dp > node;
  c.dp_nvls = nvls_capable && dp > 2 && !c.dp_cross && sh.k.zero_stage == 0 && !sh.k.distributed_optimizer;
  // Megatron's bucket: max(40M, 1M x DP) parameters (bf16 gradients).
  c.dp_bytes = std::max(40e6, 1e6 * static_cast<double>(dp)) * kBf16Bytes;
  const double tokens = sh.tok_mb / (sh.k.sequence_parallel ? p.tp : 1);
  c.ep_bytes = p.ep > 1 ? tokens * sh.m.top_k * sh.m.hidden * kBf16Bytes / p.ep : 0;
  c.ep_cross = static_cast<long long>(std::max(1, p.etp)) * p.ep > node;
  c.cp_bytes = sh.tok_mb * sh.kv * kBf16Bytes / p.tp;
  c.cp_cross = crosses_nodes(sh, p.tp, p.cp);
  return c;
}

void nccl_effects(const Workload& w, const NominalInputs& in, const Collectives& c, StepParts& parts) {
  const bool fsdp = w.knobs.zero_stage >= 2;
  // NVLS runs when it is enabled and NCCL_ALGO leaves the choice to NCCL;
  // a forced tree is a little slower inside a node than the ring.
  if (c.tp_nvls) {
    add_pair(parts, Choice::Nvls, 0, Choice::NcclAlgo, nccl_algo::kAuto, Term::TpComm, kNvlsFactor);
    add(parts, Choice::NcclAlgo, {nccl_algo::kTree}, Term::TpComm, 1.1);
  }
  if (c.dp_nvls) {
    add_pair(parts, Choice::Nvls, 0, Choice::NcclAlgo, nccl_algo::kAuto, Term::DpComm, kNvlsFactor);
    add(parts, Choice::NcclAlgo, {nccl_algo::kTree}, Term::DpComm, 1.1);
  } else if (c.dp_cross) {
    add(parts, Choice::NcclAlgo, {nccl_algo::kTree}, Term::DpComm, 0.97);  // tree's latency at scale
  }
  const double overhead = parts.memory.first.overhead;
  if (overhead > 0 && in.nvls_bytes > 0) add(parts, Choice::Nvls, {0}, Term::MemOverhead, 1 + in.nvls_bytes / overhead);
  const double fsdp_unit = memory::largest_layer_params(w.model, w.plan) * kBf16Bytes;
  const double dp_message = fsdp ? fsdp_unit : c.dp_bytes;
  struct Use {
    Term term;
    double bytes;
    bool cross;
    bool present;
  };
  const Use uses[] = {{Term::TpComm, c.tp_bytes, c.tp_cross, w.plan.tp > 1},
                      {Term::DpComm, dp_message, c.dp_cross, !parts.dp.empty()},
                      {Term::EpComm, c.ep_bytes, c.ep_cross, c.ep_bytes > 0},
                      {Term::CpComm, c.cp_bytes, c.cp_cross, w.plan.cp > 1}};
  for (const Use& u : uses) {
    if (!u.present) continue;
    for (std::uint8_t v : {nccl_proto::kSimple, nccl_proto::kLL, nccl_proto::kLL128})
      add(parts, Choice::NcclProto, {v}, u.term, proto_factor(v, u.bytes, u.cross));
    for (std::uint8_t v : {nccl_channels::k4, nccl_channels::k16, nccl_channels::k32})
      add(parts, Choice::NcclChannels, {v}, u.term, channel_factor(v, u.bytes, u.cross));
  }
}

// Bucket size: smaller buckets reach less bandwidth (NCCL's size curve,
// §1.3) but leave a smaller last bucket exposed; larger ones the opposite.
void bucket_effects(const Workload& w, const Collectives& c, StepParts& parts) {
  if (parts.dp.empty() || w.knobs.zero_stage >= 2) return;
  const double base = c.dp_bytes;
  auto efficiency = [](double bytes) { return bytes / (bytes + 16 * kMiB); };
  add(parts, Choice::Bucket, {bucket::kSmall}, Term::DpComm, efficiency(base) / efficiency(base / 4));
  add(parts, Choice::Bucket, {bucket::kSmall}, Term::DpTail, 0.5);
  add(parts, Choice::Bucket, {bucket::kLarge}, Term::DpComm, efficiency(base) / efficiency(base * 4));
  add(parts, Choice::Bucket, {bucket::kLarge}, Term::DpTail, 2.0);
}

void connection_effects(const Workload& w, const NominalInputs& in, StepParts& parts) {
  if (!hopper_or_older(in.sh.g)) return;
  const std::initializer_list<std::uint8_t> unordered = {max_connections::kUnset, max_connections::k32};
  if (w.plan.tp > 1) add(parts, Choice::MaxConnections, unordered, Term::TpHide, kUnorderedTpHide);
  if (w.plan.cp > 1) add(parts, Choice::MaxConnections, unordered, Term::CpHide, kUnorderedCpHide);
  if (w.knobs.zero_stage >= 2) add(parts, Choice::MaxConnections, {max_connections::k1}, Term::DpHide, kSerialisedFsdpHide);
}

// Workers prepare the next micro-batches while the GPU computes; with none
// the step waits for each.
void worker_effects(const NominalInputs& in, StepParts& parts) {
  if (in.data_load <= 0) return;
  for (std::uint8_t v = workers::k1; v <= workers::k8; ++v) {
    const double exposed = std::max(0.0, in.data_load / worker_count(v) - in.per_mb_compute);
    add(parts, Choice::Workers, {v}, Term::Data, std::max(1e-6, exposed / in.data_load));
  }
}

void dispatcher_effects(const NominalInputs& in, StepParts& parts) {
  add(parts, Choice::Dispatcher, {dispatcher::kAllToAll, dispatcher::kAllGather}, Term::MemBuffers, 0.0);
  if (in.ep_alltoall <= 0) return;
  add(parts, Choice::Dispatcher, {dispatcher::kAllGather}, Term::EpComm, in.ep_allgather / in.ep_alltoall);
  add(parts, Choice::Dispatcher, {dispatcher::kDeepEp}, Term::EpComm, in.ep_deepep / in.ep_alltoall);
}

// Context parallelism: the p2p ring overlaps with the attention chunks; the
// all-gather scheme gathers K/V once forward and reduce-scatters dK/dV once
// backward, mostly exposed; Ulysses all-to-all moves Q, K, V and the output,
// not overlappable, and needs the heads of a TP rank to divide by CP.
void cp_effects(const Workload& w, const NominalInputs& in, StepParts& parts, bool with_messages) {
  if (w.plan.cp <= 1) return;
  const Shape& sh = in.sh;
  add(parts, Choice::CpComm, {cp_comm::kP2p, cp_comm::kAllGather}, Term::Attention, 1 / kCpAttentionEfficiency);
  add(parts, Choice::CpComm, {cp_comm::kAllGather}, Term::CpComm, 2.0 / 3.0);
  add(parts, Choice::CpComm, {cp_comm::kAllGather}, Term::CpHide, 0.25);
  const double ring = parts.value[static_cast<int>(Term::CpComm)];
  if (ring > 0) {
    const bool cross = crosses_nodes(sh, w.plan.tp, w.plan.cp);
    const double bytes = sh.tok_mb * (2 * sh.q + sh.kv) * kBf16Bytes / w.plan.tp;
    const double a2a = 2 * collective_seconds(sh.g, Collective::AllToAll, bytes, w.plan.cp, cross) /
                       (cross ? in.pert.network : in.pert.nvlink);
    add(parts, Choice::CpComm, {cp_comm::kA2a}, Term::CpComm, std::max(1e-6, a2a / ring));
  }
  add(parts, Choice::CpComm, {cp_comm::kA2a}, Term::CpHide, 1e-6);
  const int heads = w.model.heads / std::max(1, w.plan.tp);
  if (heads % w.plan.cp != 0)
    fail(parts, Choice::CpComm, {cp_comm::kA2a}, FailureKind::InvalidArgument,
         with_messages ? "AssertionError: num_attention_heads per tensor-parallel rank must be divisible by "
                         "context_parallel_size for cp_comm_type a2a"
                       : "");
}

}  // namespace

// The overlap flags: off, the collectives they would hide stay exposed.
// Megatron refuses TP overlap without sequence parallelism.
void overlap_effects(const Workload& w, StepParts& parts, bool with_messages) {
  add(parts, Choice::TpCommOverlap, {0}, Term::TpHide, 0.0);
  add(parts, Choice::OverlapGradReduce, {0}, Term::DpReduceHide, 0.0);
  add(parts, Choice::OverlapParamGather, {0}, Term::DpGatherHide, 0.0);
  if (w.plan.tp > 1 && !w.knobs.sequence_parallel)
    fail(parts, Choice::TpCommOverlap, {1}, FailureKind::InvalidArgument,
         with_messages ? "AssertionError: Tensor parallel communication/GEMM overlap can happen only when sequence "
                         "parallelism is enabled"
                       : "");
}

void add_nominal_effects(const Workload& w, const NominalInputs& in, StepParts& parts, bool with_messages) {
  parts.effects.reserve(96);
  overlap_effects(w, parts, with_messages);
  attention_effects(w, in, parts, with_messages);
  compile_and_graph_effects(w, parts, with_messages, in.pert);
  const Collectives c = collectives_of(w, in.sh);
  nccl_effects(w, in, c, parts);
  bucket_effects(w, c, parts);
  connection_effects(w, in, parts);
  worker_effects(in, parts);
  dispatcher_effects(in, parts);
  cp_effects(w, in, parts, with_messages);
  add(parts, Choice::Expandable, {1}, Term::MemFragmentation, kExpandableFragmentation);
}

void add_failure_rule(const FailureRule& rule, const Workload& w, StepParts& parts) {
  Effect e;
  e.when = rule.when;
  std::vector<ChoiceEffect> resolved;
  if (!resolve(e, w, resolved) || resolved.empty()) return;
  ChoiceFailure f;
  f.when = resolved.front();
  f.kind = rule.kind;
  f.at_step = rule.at_step;
  f.message = rule.message;
  parts.failures.push_back(std::move(f));
}

}  // namespace attune::sim::detail
