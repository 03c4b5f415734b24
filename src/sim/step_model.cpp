#include "attune/sim/step_model.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attune/diagnose/flops.h"
#include "memory_terms.h"
#include "nominal_effects.h"
#include "step_shape.h"

namespace attune::sim {

namespace {

using detail::Shape;

constexpr double kBf16Bytes = 2;
// Training GEMMs (dgrad/wgrad transposes, epilogues) reach less than the
// best-shape MAMF; narrow ones less still (half of MAMF at an inner
// dimension of kHalfEfficiencyDim). Calibrated on the Megatron-LM rows.
constexpr double kTrainingGemmFactor = 0.85;
constexpr double kHalfEfficiencyDim = 512;
// TP overlap (userbuffers, async TP) hides up to two thirds of the TP
// collectives (one chunk stays exposed) and no more than this share of the
// layer's compute (Bridge Llama 3 70B SFT: TP8 stays 28% slower than TP4
// with overlap on).
constexpr double kTpOverlapHideShare = 0.65;
constexpr double kTpOverlapGemmShare = 0.2;
constexpr double kReferenceMamf = 794.5;  // H100 BF16, where the GEMM size curve comes from
// Grouped expert GEMMs (many small, unevenly filled) and the permutation
// around them, calibrated on the MoE rows.
constexpr double kExpertGemmFactor = 0.6;
constexpr double kPermuteBytesPerH = 12;  // per routed token copy: permute, unpermute, forward and back
// FP8 GEMMs gain this share of the MAMF ratio over BF16 end to end (scaling
// and amax bookkeeping; Transformer Engine's published FP8 speed-ups are 1.2-1.5x).
constexpr double kFp8GainShare = 0.6;
// MXFP8's 1x32 block scales cost more (torchtitan on B200: MXFP8 +16-20%
// end to end where per-tensor FP8 gains +25%, torchtitan's published figures).
constexpr double kMxfp8GainShare = 0.3;
// Norms, residual adds, activation functions, rotary: HBM traffic per token
// and layer, forward + backward: about 40 bytes per hidden unit and 16 per
// FFN unit (SwiGLU reads two FFN-wide tensors and writes one, and back).
constexpr double kElementwiseBytesPerH = 40;
constexpr double kElementwiseBytesPerFfn = 16;
// Logits and cross entropy in fp32: written, read, and their gradient, per vocab entry.
constexpr double kLogitBytesPerVocab = 16;
constexpr double kLaunchPerLayerS = 30e-6;  // kernel launches of one layer, one micro-batch (no CUDA graphs)
constexpr double kFixedPerStepS = 0.01;     // logging, synchronisation
// DP overlap: buckets hide behind the backward / forward except the last one.
constexpr double kDpTailShare = 0.1;
constexpr double kDpHideShare = 0.8;
// Context parallelism's K/V ring runs behind the attention blocks.
constexpr double kCpHideShare = 0.8;
// Activation offload: the copies run on their own stream behind this share
// of the stage's compute (Megatron's and SMP's offload overlap the D2H copy
// with the next layer's forward and the H2D prefetch with the backward).
constexpr double kOffloadHideShare = 0.7;
// Host-side data preparation per micro-batch sample: pre-tokenised, packed
// pretraining data read from an index (Megatron's mmap'd datasets) is cheap;
// fine-tuning data is tokenised, padded and collated on the fly (HF datasets
// behind a DataLoader). Estimates: docs/simulator.md.
constexpr double kPretrainDataPerSampleS = 0.5e-3, kPretrainDataPerTokenS = 10e-9;
constexpr double kSftDataPerSampleS = 3e-3, kSftDataPerTokenS = 150e-9;
// Flash attention's backward recomputes the scores and runs five matmuls to
// the forward's two: 2.5x the forward's FLOPs (FlashAttention-2 paper, §3.1),
// not the 2x of the linear layers. It is what makes long sequences slower than
// the model FLOPs say.
constexpr double kAttentionBackwardShare = 2.5;
// Full recompute re-runs each recomputed layer's forward, its TP
// collectives (two all-gathers and two reduce-scatters of the eight) included.
constexpr double kRecomputeTpShare = 0.5;

// Narrow models reach less of MAMF: hidden size d costs (d + k) / d. (Costing
// each GEMM by its own inner dimension, TP shards included, fitted the
// measurements worse: small models came out faster still.)
double narrow_cost(double hidden) { return hidden > 0 ? (hidden + kHalfEfficiencyDim) / hidden : 1.0; }

// Forward linear FLOPs of one layer for one token on one GPU, weighted by
// their narrowness, and the size of the largest GEMMs (GFLOP) for the
// efficiency curve.
struct LayerWork {
  double dense_flops = 0;      // forward, per token, attention projections + dense MLP / shared experts
  double mlp_flops = 0;        // of which the MLP (dense or shared experts)
  double mla_up_flops = 0;     // of which MLA's up-projections
  double expert_flops = 0;     // forward, per token, routed experts
  double dense_gemm_gflop = 0;
  double expert_gemm_gflop = 0;
};

LayerWork layer_work(const Shape& sh, bool moe_layer) {
  const auto& m = sh.m;
  const double h = m.hidden, tp = sh.p.tp, tok = sh.tok_mb;
  const double up = sh.ffn_gemms - 1;  // gate + up, or up
  LayerWork w;
  const double narrow = narrow_cost(h);
  // QKV and output projections (GQA, or MLA's low-rank down/up projections).
  w.dense_flops = 2 * memory::attention_params(m) / tp * narrow;
  if (m.is_mla()) {
    const double up_params = static_cast<double>(m.q_lora_rank) * m.heads * (m.qk_nope_head_dim + m.qk_rope_head_dim) +
                             static_cast<double>(m.kv_lora_rank) * m.heads * (m.qk_nope_head_dim + m.v_head_dim);
    w.mla_up_flops = 2 * up_params / tp * narrow;
  }
  auto mlp = [&](double ffn, double split) { return 2 * h * ffn * (up + 1) / split * narrow; };
  if (moe_layer) {
    // With SP each TP rank routes its own 1/tp of the tokens; ETP ranks
    // gather theirs and each computes 1/etp of every expert, so a GPU does
    // 1/tp of the micro-batch's expert work either way.
    const double etp = std::max(1, sh.p.etp);
    // Token copies each local expert sees per micro-batch with balanced routing.
    const double tokens_per_expert = tok * etp / tp * m.top_k * sh.p.ep / std::max(1, m.experts);
    w.expert_flops = mlp(m.moe_ffn, etp) * m.top_k * etp / tp;
    if (m.shared_experts > 0) w.mlp_flops = mlp(static_cast<double>(m.moe_ffn) * m.shared_experts, tp);
    w.expert_gemm_gflop = 2 * tokens_per_expert * h * m.moe_ffn / etp / 1e9;
  } else {
    w.mlp_flops = mlp(m.ffn, tp);
  }
  w.dense_flops += w.mlp_flops;
  w.dense_gemm_gflop = 2 * tok * h * std::max<double>(m.ffn, sh.q) / tp / 1e9;
  return w;
}

double gemm_tflops(const Shape& sh, double gflop, const Perturbation& pert) {
  double peak = sh.g.mamf_bf16;
  if (sh.k.fp8 && sh.g.mamf_fp8 > 0)
    peak *= 1 + (sh.k.mxfp8 ? kMxfp8GainShare : kFp8GainShare) * pert.fp8 * (sh.g.mamf_fp8 / sh.g.mamf_bf16 - 1);
  // The size curve was measured on H100: a faster GPU needs proportionally
  // more work per GEMM to hide the same launch and tail overheads.
  const double relative_size = gflop * kReferenceMamf / peak;
  return peak * kTrainingGemmFactor * gemm_efficiency(relative_size) * sh.gemm_factor;
}

// Forward seconds of one transformer layer, one micro-batch.
struct LayerTime {
  double gemm = 0, mlp_gemm = 0, mla_up_gemm = 0, expert = 0, attention = 0;
  double memory_bound = 0;      // forward + backward
  double act_traffic = 0;       // of which the experts' activation function (moe_act recompute)
  double norm_traffic = 0;      // of which the two norms (layernorm recompute)
};

LayerTime layer_time(const Shape& sh, bool moe_layer, const Perturbation& pert) {
  const LayerWork w = layer_work(sh, moe_layer);
  LayerTime t;
  const double dense_tflops = gemm_tflops(sh, w.dense_gemm_gflop, pert) * 1e12;
  t.gemm = w.dense_flops * sh.tok_mb / dense_tflops;
  t.mlp_gemm = w.mlp_flops * sh.tok_mb / dense_tflops;
  t.mla_up_gemm = w.mla_up_flops * sh.tok_mb / dense_tflops;
  if (w.expert_flops > 0)
    t.expert = w.expert_flops * sh.tok_mb / (gemm_tflops(sh, w.expert_gemm_gflop, pert) * kExpertGemmFactor * 1e12);
  // QK^T and AV, causal half of 2*s*(qk + v) per head, at the BF16 peak: the
  // attention kernel's efficiency is its choice's effect.
  t.attention = sh.s * sh.qk_av / sh.p.tp * sh.tok_mb / (sh.g.bf16_tflops * pert.attention * 1e12);
  const double tokens = sh.tok_mb / (sh.k.sequence_parallel ? sh.p.tp : 1);
  const double ffn = moe_layer ? static_cast<double>(sh.m.moe_ffn) * sh.m.top_k : sh.m.ffn;
  double bytes = (kElementwiseBytesPerH * sh.m.hidden + kElementwiseBytesPerFfn * ffn / sh.p.tp) * tokens;
  if (moe_layer) bytes += kPermuteBytesPerH * sh.m.hidden * sh.m.top_k * sh.tok_mb;
  if (sh.k.fp8) bytes *= 1.3;  // quantise / transpose casts around every GEMM
  const double hbm = sh.g.hbm_tbps * 1e12;
  t.memory_bound = bytes / hbm;
  if (moe_layer) t.act_traffic = 6.0 * sh.m.moe_ffn * sh.m.top_k / std::max(1, sh.p.etp) * sh.tok_mb / sh.p.tp / hbm;
  t.norm_traffic = 8.0 * sh.m.hidden * tokens / hbm;
  return t;
}

// Bus bandwidth scale for a collective whose group has `per_node` members in
// each node: they share the node's NICs, so fewer members get less of the
// hierarchical bandwidth (one NIC each).
double network_share(const Shape& sh, int per_node) {
  const double full = sh.g.gpus_per_node;
  return std::clamp(per_node / full, 1.0 / full, 1.0);
}

// TP/SP collectives of one layer, one micro-batch, forward + backward.
double tp_layer_comm(const Shape& sh, const Perturbation& pert) {
  if (sh.p.tp <= 1) return 0;
  const double bytes = sh.tok_mb * sh.m.hidden * kBf16Bytes;
  const bool cross = detail::crosses_nodes(sh, 1, sh.p.tp);
  // SP: 2 all-gathers + 2 reduce-scatters forward, the same backward; without
  // SP 2 all-reduces each way (same bytes).
  const double per = sh.k.sequence_parallel
                         ? 8 * collective_seconds(sh.g, Collective::AllGather, bytes, sh.p.tp, cross)
                         : 4 * collective_seconds(sh.g, Collective::AllReduce, bytes, sh.p.tp, cross);
  return per / (cross ? pert.network : pert.nvlink);
}

double cp_ring_comm(const Shape& sh, const Perturbation& pert) {
  if (sh.p.cp <= 1) return 0;
  const double kv_bytes = sh.tok_mb * sh.kv * kBf16Bytes / sh.p.tp;
  const bool cross = detail::crosses_nodes(sh, sh.p.tp, sh.p.cp);
  // Ring: cp-1 hops of K,V forward, twice that backward (dK, dV).
  return 3 * (sh.p.cp - 1) * collective_seconds(sh.g, Collective::SendRecv, kv_bytes, 2, cross) /
         (cross ? pert.network : pert.nvlink);
}

double pp_comm(const Shape& sh) {
  if (sh.p.pp <= 1) return 0;
  const double act = sh.tok_mb * sh.m.hidden * kBf16Bytes / (sh.k.sequence_parallel ? sh.p.tp : 1);
  const double hop = collective_seconds(sh.g, Collective::SendRecv, act, 2, sh.p.world > sh.g.nvlink_domain);
  return sh.micro * 2 * std::max(1, sh.p.vp) * hop * 0.5;  // half hidden behind compute
}

double optimizer_time(const Shape& sh) {
  const double shard = sh.k.distributed_optimizer || sh.k.zero_stage > 0 ? sh.p.dp * sh.p.cp : 1;
  const double params = sh.params / shard;
  // Adam reads and writes fp32 master, m, v and reads the gradient: ~32 B/param.
  const double hbm = params * 32 / (sh.g.hbm_tbps * 1e12 * 0.7);
  double offload = sh.k.optimizer_cpu_offload * params * 16 / (sh.g.pcie_gbps * 1e9);
  // FSDP CPU offload: the gradients come down and the updated weights go
  // back up each step, and the host runs Adam (~1 ns per parameter and core
  // group; full offload measured at 4.2x the step).
  if (sh.k.param_offload && sh.k.zero_stage >= 3) offload += params * 6 / (sh.g.pcie_gbps * 1e9) + params * 1e-9;
  return hbm + offload;
}

// The step's data-parallel collectives, appended to `out`: what the sharding
// mode sends, how often, and what each can hide behind.
void dp_collectives(const Shape& sh, const Perturbation& pert, std::vector<DpCollective>& out) {
  const int dp = sh.p.dp * sh.p.cp;  // gradients are reduced over DP x CP
  if (dp <= 1) return;
  const bool fsdp = sh.k.zero_stage >= 2;
  // HSDP: FSDP inside the shard group, gradients all-reduced across replicas.
  const int shard = fsdp && sh.p.dp_shard > 0 ? std::min(dp, sh.p.dp_shard * sh.p.cp) : dp;
  const int replicas = std::max(1, dp / std::max(1, shard));
  const int per_node = std::max(1, sh.g.gpus_per_node / std::max(1, sh.p.tp));
  auto link = [&](int ranks, bool& cross) {
    cross = detail::crosses_nodes(sh, sh.p.tp, ranks);
    const double share = cross ? network_share(sh, std::min(per_node, ranks)) : 1.0;
    return (cross ? pert.network : pert.nvlink) * share;
  };
  bool cross = false;
  const double l = link(shard, cross);
  const double grad_bytes = sh.params * (sh.k.grads_fp32 ? 4 : kBf16Bytes);
  const double weight_bytes = sh.params * kBf16Bytes;
  const double micro = sh.micro;
  auto seconds = [&](Collective c, double bytes) { return collective_seconds(sh.g, c, bytes, shard, cross) / l; };
  // Reductions hide behind a backward, gathers behind a forward; under
  // DDP and the distributed optimizer only when their overlap flag is on (a
  // choice: the DpReduceHide / DpGatherHide terms), FSDP always prefetches.
  const int reduce_window = 2;
  const int gather_window = 1;
  if (!fsdp && !(sh.k.distributed_optimizer || sh.k.zero_stage == 1)) {
    out.push_back({seconds(Collective::AllReduce, grad_bytes), 1, reduce_window});
  } else if (!fsdp) {
    out.push_back({seconds(Collective::ReduceScatter, grad_bytes), 1, reduce_window});
    out.push_back({seconds(Collective::AllGather, weight_bytes), 1, gather_window});
  } else if (sh.k.zero_stage == 2) {
    // ZeRO-2 / SHARD_GRAD_OP: gradients reduce-scattered each micro-batch,
    // weights gathered once after the optimizer step.
    out.push_back({seconds(Collective::ReduceScatter, grad_bytes), micro, 2});
    out.push_back({seconds(Collective::AllGather, weight_bytes), 1, 1});
  } else {
    // ZeRO-3 / FULL_SHARD: every micro-batch gathers the weights for its
    // forward and (when resharded after it) again for its backward, and
    // reduce-scatters its gradients.
    out.push_back({seconds(Collective::AllGather, weight_bytes), micro, 1});
    if (sh.k.reshard_after_forward) out.push_back({seconds(Collective::AllGather, weight_bytes), micro, 2});
    out.push_back({seconds(Collective::ReduceScatter, grad_bytes), micro, 2});
  }
  if (replicas > 1) {
    bool cross_r = false;
    const double lr = link(replicas * shard, cross_r);
    out.push_back({collective_seconds(sh.g, Collective::AllReduce, grad_bytes / shard, replicas, cross_r) / lr, 1,
                   reduce_window});
  }
}

std::string layout_error(const Workload& w) {
  const auto& p = w.plan;
  const auto& m = w.model;
  const long long mp = static_cast<long long>(p.tp) * p.pp * p.cp;
  if (p.world <= 0 || mp <= 0 || p.world % mp != 0)
    return "world size (" + std::to_string(p.world) + ") is not divisible by tensor (" + std::to_string(p.tp) +
           ") x pipeline (" + std::to_string(p.pp) + ") x context (" + std::to_string(p.cp) + ") parallel size";
  if (m.layers % p.pp != 0 && !w.knobs.uneven_pipeline_split)
    return "number of layers (" + std::to_string(m.layers) + ") should be divisible by pipeline parallel size (" +
           std::to_string(p.pp) + ")";
  if (p.vp > 1 && m.layers % (p.pp * p.vp) != 0 && !w.knobs.uneven_pipeline_split)
    return "number of layers should be divisible by the number of virtual pipeline stages";
  if (m.heads % p.tp != 0) return "num_attention_heads must be divisible by tensor_model_parallel_size";
  if (m.is_moe() && m.experts % p.ep != 0) return "num_experts must be divisible by expert_model_parallel_size";
  // Experts regroup the TP x CP x DP ranks of a stage into ETP x EP x expert-DP.
  if (p.ep > 1 && (static_cast<long long>(p.tp) * p.cp * p.dp) % (static_cast<long long>(p.ep) * std::max(1, p.etp)) != 0)
    return "expert tensor parallel x expert parallel size must divide tensor x context x data parallel size";
  if (p.cp > 1 && w.plan.seq_len % (2 * p.cp) != 0) return "sequence length must be divisible by 2 x context parallel size";
  if (p.gbs % (static_cast<long long>(p.mbs) * p.dp) != 0)
    return "global batch size (" + std::to_string(p.gbs) + ") is not divisible by micro batch size (" +
           std::to_string(p.mbs) + ") times data parallel size (" + std::to_string(p.dp) + ")";
  return "";
}

Shape shape_of(const Workload& w, const GpuSystem& g, const Perturbation& pert) {
  const auto& m = w.model;
  const auto& p = w.plan;
  Shape sh{m, p, w.knobs, g};
  sh.s = static_cast<double>(p.seq_len);
  sh.tok_mb = p.mbs * sh.s / p.cp;
  sh.micro = static_cast<double>(p.gbs) / (static_cast<double>(p.mbs) * p.dp);
  sh.layers_stage = (m.layers + p.pp - 1) / p.pp;  // the busiest stage of an uneven split
  sh.q = m.heads * m.attention_head_dim();
  sh.kv = 2.0 * (m.kv_heads > 0 ? m.kv_heads : m.heads) * m.attention_head_dim();
  sh.ffn_gemms = m.mlp_matrices();
  sh.qk_av = m.is_mla() ? m.heads * double(m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim) : 2 * sh.q;
  sh.gemm_factor = pert.gemm_for(g.id);
  sh.params = std::max(memory::gpu_params(m, p, true, p.pp == 1).total(), memory::gpu_params(m, p, p.pp == 1, true).total());
  return sh;
}

// Share of the stage's layers whose forward full recompute re-runs.
double full_recompute_share(const Shape& sh) {
  if (sh.k.recompute_granularity != "full") return 0;
  return sh.k.recompute_num_layers > 0 ? std::min(1.0, sh.k.recompute_num_layers / double(sh.layers_stage)) : 1.0;
}

// The compute terms of one micro-batch on the busiest stage and its
// recomputed forward.
void add_compute(const Shape& sh, const Perturbation& pert, StepParts& parts) {
  const auto& m = sh.m;
  const int moe_layers = m.is_moe() ? m.layers - m.dense_layers : 0;
  const double moe_share = m.layers > 0 ? static_cast<double>(moe_layers) / m.layers : 0;
  const LayerTime dense = layer_time(sh, false, pert);
  const LayerTime moe = m.is_moe() ? layer_time(sh, true, pert) : dense;
  auto mix = [&](double a, double b) { return sh.layers_stage * ((1 - moe_share) * a + moe_share * b); };
  const double logits_gemm = 2.0 * m.hidden * m.vocab / sh.p.tp * sh.tok_mb /
                             (gemm_tflops(sh, 2 * sh.tok_mb * m.hidden * m.vocab / sh.p.tp / 1e9, pert) * 1e12);
  const double logits_bytes = kLogitBytesPerVocab * m.vocab / sh.p.tp * sh.tok_mb / (sh.g.hbm_tbps * 1e12);
  TermValues& v = parts.value;
  v[static_cast<int>(Term::Gemm)] = 3 * (mix(dense.gemm, moe.gemm) + logits_gemm);  // backward is twice the forward
  v[static_cast<int>(Term::ExpertGemm)] = 3 * mix(0, moe.expert);
  v[static_cast<int>(Term::Attention)] = (1 + kAttentionBackwardShare) * mix(dense.attention, moe.attention);
  v[static_cast<int>(Term::MemoryBound)] = mix(dense.memory_bound, moe.memory_bound) + logits_bytes;
  v[static_cast<int>(Term::Launch)] = sh.layers_stage * kLaunchPerLayerS;

  // Full recompute: one more forward of the recomputed layers. Selective:
  // what its modules re-run (core attention is free with fused kernels:
  // Bridge's Llama 3 70B SFT ran 1638 tokens/s with it, 1625 without);
  // torchtitan's per-op policy recomputes every other matmul.
  const double r = full_recompute_share(sh);
  parts.recompute_gemm = r * mix(dense.gemm, moe.gemm);
  parts.recompute_expert = r * mix(0, moe.expert);
  parts.recompute_attention = r * mix(dense.attention, moe.attention);
  parts.recompute_memory_bound = r * mix(dense.memory_bound, moe.memory_bound) / 3;
  if (sh.k.recompute_granularity == "selective") {
    using namespace recompute_module;
    if (sh.k.per_op_selective) {
      parts.recompute_gemm += 0.5 * mix(dense.gemm, moe.gemm);
      parts.recompute_expert += 0.5 * mix(0, moe.expert);
    } else {
      const unsigned mods = sh.k.recompute_modules;
      const double fc1 = (sh.ffn_gemms - 1) / sh.ffn_gemms;  // gate + up of the MLP's matrices
      if (mods & kMlp) {
        parts.recompute_gemm += fc1 * mix(dense.mlp_gemm, moe.mlp_gemm);
        parts.recompute_expert += fc1 * mix(0, moe.expert);
      }
      if (mods & kMlaUpProj) parts.recompute_gemm += mix(dense.mla_up_gemm, moe.mla_up_gemm);
      if (mods & kMoeAct) parts.recompute_memory_bound += mix(0, moe.act_traffic);
      if (mods & kLayerNorm) parts.recompute_memory_bound += mix(dense.norm_traffic, moe.norm_traffic);
    }
  }
  v[static_cast<int>(Term::Recompute)] = pert.recompute;
}

// Expert dispatch and combine of one MoE layer, one micro-batch, forward and
// backward, by dispatcher. Inside a node the all-to-all runs over NVLink;
// across nodes only the copies bound for other nodes use the network, and
// DeepEP sends a token once per remote node (forwarding to its experts there
// over NVLink) instead of once per expert.
struct EpTimes {
  double alltoall = 0, allgather = 0, deepep = 0;
};

double remote_nodes_per_token(double nodes, double top_k) {
  if (nodes <= 1) return 0;
  return nodes * (1 - std::pow(1 - 1 / nodes, top_k)) * (nodes - 1) / nodes;
}

EpTimes ep_layer_comm(const Shape& sh, const Perturbation& pert) {
  EpTimes e;
  if (!sh.m.is_moe() || sh.p.ep <= 1) return e;
  const double tokens = sh.tok_mb / (sh.k.sequence_parallel ? sh.p.tp : 1);
  const double token_bytes = sh.m.hidden * kBf16Bytes * (sh.k.fp8 ? 0.75 : 1.0);  // FP8 dispatch, BF16 combine
  const double k = sh.m.top_k;
  const int inner = std::max(1, sh.p.etp);  // EP ranks are adjacent (Megatron orders expert ranks etp-ep-dp)
  const double span = static_cast<double>(inner) * sh.p.ep;
  const double per_node = std::min<double>(sh.p.ep, std::max(1.0, sh.g.gpus_per_node / double(inner)));
  const double nodes = span > sh.g.nvlink_domain ? std::ceil(sh.p.ep / per_node) : 1;
  // collective_seconds moves (n-1)/n of its message: pass the message whose
  // moved part is what goes over each link.
  const double local_bytes = tokens * k * token_bytes * (per_node - 1) / sh.p.ep;
  const double local = per_node > 1 ? collective_seconds(sh.g, Collective::AllToAll, local_bytes * per_node / (per_node - 1),
                                                         static_cast<int>(per_node), false) /
                                           pert.nvlink
                                     : 0;
  auto with_network = [&](double remote_copies) {
    double t = local;
    if (nodes > 1) {
      const double bytes = tokens * remote_copies * token_bytes;
      const double net =
          collective_seconds(sh.g, Collective::AllToAll, bytes * sh.p.ep / (sh.p.ep - 1), sh.p.ep, true) / pert.network;
      t = std::max(t, net);  // NVLink and network phases run concurrently
    }
    return 4 * t / pert.alltoall;
  };
  e.alltoall = with_network(k * (nodes - 1) / nodes);
  e.deepep = with_network(remote_nodes_per_token(nodes, k)) * std::max(0.1, 1 - 0.15 * pert.deepep);
  // All-gather dispatch: every rank receives every token of the EP group and
  // keeps those routed to its experts; the combine is a reduce-scatter.
  const bool cross = nodes > 1;
  const double gather = collective_seconds(sh.g, Collective::AllGather, tokens * token_bytes * sh.p.ep, sh.p.ep, cross);
  e.allgather = 4 * gather / ((cross ? pert.network : pert.nvlink) * pert.alltoall);
  return e;
}

// Seconds a micro-batch's data takes on the host with no worker processes.
double data_load_seconds(const Shape& sh) {
  const double tokens = sh.p.mbs * sh.s;
  return sh.k.sft_data ? sh.p.mbs * kSftDataPerSampleS + tokens * kSftDataPerTokenS
                       : sh.p.mbs * kPretrainDataPerSampleS + tokens * kPretrainDataPerTokenS;
}

// Activation offload: the offloaded layers' saved activations go to the host
// in the forward and come back in the backward (seconds of transfer, one
// micro-batch), behind the share of the compute `hide_share` says.
double offload_transfer(const Shape& sh, const Workload& w, double& hide_share) {
  hide_share = 0;
  if (w.knobs.offload_layers == 0) return 0;
  const int layers = sh.layers_stage;
  const int off = w.knobs.offload_layers < 0 ? layers : std::min(w.knobs.offload_layers, layers);
  const memory::Recompute mode = memory::recompute_mode(w.knobs, w.plan);
  const double per_layer = memory::layer_activation_bytes(
      w, sh.m.is_moe(), mode);
  hide_share = kOffloadHideShare * off / std::max(1, layers);
  return 2 * off * per_layer / (sh.g.pcie_gbps * 1e9);
}

}  // namespace

StepParts step_parts(const Workload& w, const Perturbation& pert, bool with_messages) {
  StepParts parts;
  step_parts(w, pert, with_messages, parts);
  return parts;
}

void step_parts(const Workload& w, const Perturbation& pert, bool with_messages, StepParts& parts) {
  parts.failure.clear();
  parts.error.clear();
  parts.effects.clear();
  parts.failures.clear();
  parts.dp.clear();
  parts.recompute_gemm = parts.recompute_expert = parts.recompute_attention = parts.recompute_memory_bound = 0;
  parts.offload_hide_share = 0;
  const GpuSystem* g = find_gpu_system(w.plan.gpu);
  if (!g) {
    parts.failure = "invalid_argument";
    parts.error = "no GPU type '" + w.plan.gpu + "' in the simulator's catalog";
    return;
  }
  parts.hbm_gib = g->hbm_gib;
  if (std::string e = layout_error(w); !e.empty()) {
    parts.failure = "invalid_argument";
    parts.error = std::move(e);
    return;
  }
  const Shape sh = shape_of(w, *g, pert);
  const auto& p = w.plan;
  TermValues& v = parts.value;
  v.fill(0);
  parts.micro = sh.micro;
  add_compute(sh, pert, parts);
  const double tp_layer = tp_layer_comm(sh, pert);
  v[static_cast<int>(Term::TpComm)] = sh.layers_stage * tp_layer * (1 + kRecomputeTpShare * full_recompute_share(sh));
  // What TP overlap would hide; the overlap flag (a choice) turns it off.
  v[static_cast<int>(Term::TpHide)] = p.tp > 1 ? kTpOverlapHideShare * pert.tp_comm_overlap : 0;
  parts.tp_gemm_share = kTpOverlapGemmShare * pert.tp_comm_overlap;
  v[static_cast<int>(Term::CpComm)] = cp_ring_comm(sh, pert);
  v[static_cast<int>(Term::CpHide)] = kCpHideShare;
  const int moe_layers = w.model.is_moe() ? w.model.layers - w.model.dense_layers : 0;
  const double moe_share = w.model.layers > 0 ? static_cast<double>(moe_layers) / w.model.layers : 0;
  const EpTimes ep = ep_layer_comm(sh, pert);
  v[static_cast<int>(Term::EpComm)] = moe_share * sh.layers_stage * ep.alltoall;
  v[static_cast<int>(Term::Offload)] = offload_transfer(sh, w, parts.offload_hide_share);
  dp_collectives(sh, pert, parts.dp);
  v[static_cast<int>(Term::DpComm)] = 1;
  v[static_cast<int>(Term::DpTail)] = kDpTailShare;
  v[static_cast<int>(Term::DpHide)] = std::min(0.95, kDpHideShare * pert.dp_overlap);
  v[static_cast<int>(Term::DpReduceHide)] = 1;
  v[static_cast<int>(Term::DpGatherHide)] = 1;
  parts.dp_flagged = w.knobs.zero_stage < 2;
  v[static_cast<int>(Term::PpComm)] = pp_comm(sh);
  v[static_cast<int>(Term::Bubble)] = p.pp > 1 ? (p.pp - 1.0) / std::max(1, p.vp) : 0;  // 1F1B fill and drain
  v[static_cast<int>(Term::Optimizer)] = optimizer_time(sh);
  const double per_mb_compute =
      v[static_cast<int>(Term::Gemm)] + v[static_cast<int>(Term::ExpertGemm)] + v[static_cast<int>(Term::Attention)];
  v[static_cast<int>(Term::Data)] = sh.micro * data_load_seconds(sh);
  v[static_cast<int>(Term::Other)] = kFixedPerStepS;
  v[static_cast<int>(Term::Step)] = 1;
  v[static_cast<int>(Term::Memory)] = pert.memory;

  // Memory terms carry factors only: their bytes are per pipeline stage.
  parts.memory = memory_parts(w);

  parts.tokens_per_step = static_cast<double>(p.gbs) * sh.s;
  parts.world = p.world;
  parts.flops_per_token = diagnose::flops_per_token(w.model, p.seq_len, diagnose::FlopsConvention::CausalHalved);
  parts.peak_tflops = g->bf16_tflops;

  detail::NominalInputs in{sh, pert, per_mb_compute, ep.alltoall, ep.allgather, ep.deepep, data_load_seconds(sh),
                           memory::nvls_buffer_bytes(w)};
  detail::add_nominal_effects(w, in, parts, with_messages);
  for (const Effect& e : pert.effects) resolve(e, w, parts.effects);
  for (const FailureRule& f : pert.failures) detail::add_failure_rule(f, w, parts);
}

double combine_step(const StepParts& parts, const TermValues& f, StepBreakdown* out) {
  const TermValues& v = parts.value;
  auto at = [&](Term t) { return v[static_cast<int>(t)] * f[static_cast<int>(t)]; };
  const double fg = f[static_cast<int>(Term::Gemm)], fx = f[static_cast<int>(Term::ExpertGemm)];
  const double fa = f[static_cast<int>(Term::Attention)], fm = f[static_cast<int>(Term::MemoryBound)];
  const double gemm = at(Term::Gemm), expert = at(Term::ExpertGemm), attn = at(Term::Attention);
  const double compute = gemm + expert + attn;
  const double recompute = at(Term::Recompute) * (parts.recompute_gemm * fg + parts.recompute_expert * fx +
                                                  parts.recompute_attention * fa + parts.recompute_memory_bound * fm);
  const double memory_bound = at(Term::MemoryBound) + at(Term::Launch);
  const double tp = at(Term::TpComm);
  const double tp_hide = f[static_cast<int>(Term::TpHide)];
  const double tp_hidden = std::min(at(Term::TpHide) * tp, parts.tp_gemm_share * tp_hide * compute);
  const double tp_exposed = std::max(0.0, tp - tp_hidden);
  const double cp_exposed = std::max(0.0, at(Term::CpComm) - at(Term::CpHide) * attn);
  const double ep = at(Term::EpComm);
  const double offload = std::max(0.0, at(Term::Offload) - parts.offload_hide_share * compute);
  const double per_mb = compute + recompute + memory_bound + tp_exposed + cp_exposed + ep + offload;

  // Data-parallel collectives, by the window they hide behind: the forward
  // (1) or backward (2) of a micro-batch. Per-micro-batch ones each hide
  // behind their own; once-a-step ones share the last (or first) one's.
  const double dp_scale = f[static_cast<int>(Term::DpComm)];
  const double tail = at(Term::DpTail), hide = at(Term::DpHide);
  const double window_hide[3] = {0, hide * (parts.dp_flagged ? f[static_cast<int>(Term::DpGatherHide)] : 1.0),
                                 hide * (parts.dp_flagged ? f[static_cast<int>(Term::DpReduceHide)] : 1.0)};
  const double window_s[3] = {0, compute / 3, compute * 2 / 3};
  double per_mb_sum[3] = {0, 0, 0}, per_step_sum[3] = {0, 0, 0};
  const double micro = parts.micro;
  for (const DpCollective& c : parts.dp) {
    const double s = c.seconds * dp_scale;
    if (c.count > 1.5) per_mb_sum[c.window] += s;
    else per_step_sum[c.window] += s * c.count;
  }
  auto expose = [&](double s, double hidden) { return s <= 0 ? 0.0 : std::max(tail * s, s - hidden); };
  double dp = per_mb_sum[0] * micro + per_step_sum[0];
  for (int wnd = 1; wnd <= 2; ++wnd) {
    const double hidden = window_hide[wnd] * window_s[wnd];
    dp += expose(per_mb_sum[wnd] + per_step_sum[wnd], hidden) + std::max(0.0, micro - 1) * expose(per_mb_sum[wnd], hidden);
  }
  const double bubble = at(Term::Bubble) * per_mb;
  const double pp = at(Term::PpComm), opt = at(Term::Optimizer), data = at(Term::Data), other = at(Term::Other);
  const double scale = f[static_cast<int>(Term::Step)];
  const double step = (micro * per_mb + bubble + dp + pp + opt + data + other) * scale;
  if (out) {
    out->compute_s = micro * compute * scale;
    out->recompute_s = micro * recompute * scale;
    out->memory_bound_s = micro * memory_bound * scale;
    out->tp_comm_s = micro * tp_exposed * scale;
    out->cp_comm_s = micro * cp_exposed * scale;
    out->ep_comm_s = micro * ep * scale;
    out->offload_s = micro * offload * scale;
    out->dp_comm_s = dp * scale;
    out->pp_comm_s = pp * scale;
    out->bubble_s = bubble * scale;
    out->optimizer_s = opt * scale;
    out->data_s = data * scale;
    out->other_s = other * scale;
  }
  return step;
}

namespace {

MemoryFactors memory_factors(const StepParts& parts, const TermValues& f) {
  auto at = [&](Term t) { return f[static_cast<int>(t)]; };
  MemoryFactors m;
  m.memory = parts.value[static_cast<int>(Term::Memory)] * at(Term::Memory);
  m.states = at(Term::MemStates);
  m.activations = at(Term::MemActivations);
  m.transient = at(Term::MemTransient);
  m.fragmentation = at(Term::MemFragmentation);
  m.overhead = at(Term::MemOverhead);
  m.graphs = at(Term::MemGraphs);
  m.buffers = at(Term::MemBuffers);
  m.scores = at(Term::MemScores);
  return m;
}

}  // namespace

double combine_memory(const StepParts& parts, const TermValues& f, MemoryBreakdown* out) {
  const MemoryFactors m = memory_factors(parts, f);
  const MemoryBreakdown first = memory_breakdown(parts.memory.first, m);
  const MemoryBreakdown last = parts.memory.pipelined ? memory_breakdown(parts.memory.last, m) : first;
  const MemoryBreakdown& worst = first.total_gib >= last.total_gib ? first : last;
  if (out) *out = worst;
  return worst.total_gib;
}

const ChoiceFailure* failure_for(const StepParts& parts, const std::array<std::uint8_t, kChoiceCount>& choices) {
  for (const ChoiceFailure& f : parts.failures) {
    bool on = true;
    for (std::uint8_t i = 0; i < f.when.conditions && on; ++i) on = (f.when.allowed[i] >> choices[f.when.choice[i]]) & 1u;
    if (on) return &f;
  }
  return nullptr;
}

double oom_risk(double total_gib, double hbm_gib, double risk_share) {
  if (hbm_gib <= 0 || risk_share <= 0) return 0;
  const double start = risk_free_gib(hbm_gib, risk_share);
  if (total_gib <= start) return 0;
  return std::min(0.6, 0.6 * (total_gib - start) / (hbm_gib - start));
}

Prediction predict_from_parts(const Workload& w, const StepParts& parts, const Perturbation& pert, Detail detail) {
  Prediction out;
  out.hbm_gib = parts.hbm_gib;
  if (!parts.failure.empty()) {
    out.failure = parts.failure;
    out.error = parts.error;
    return out;
  }
  const TermValues f = factors_for(parts.effects, w.knobs.choices);
  out.step_time_s = combine_step(parts, f, &out.breakdown);
  out.tokens_per_s_per_gpu = parts.tokens_per_step / (out.step_time_s * parts.world);
  out.tflops_per_gpu = out.tokens_per_s_per_gpu * parts.flops_per_token / 1e12;
  out.mfu = out.tflops_per_gpu / parts.peak_tflops;
  const MemoryFactors m = memory_factors(parts, f);
  out.memory = worst_stage(w, parts.memory, m, parts.hbm_gib, detail == Detail::Full);
  if (const ChoiceFailure* fail = failure_for(parts, w.knobs.choices)) {
    out.failure = std::string(failure_kind_name(fail->kind));
    out.error = fail->message;
    out.fails_at_step = fail->kind == FailureKind::ImportError || fail->kind == FailureKind::InvalidArgument ? 0 : fail->at_step;
    return out;
  }
  if (out.memory.total_gib > parts.hbm_gib) {
    out.failure = "oom";
    // optimizer_gib carries the states factor already; the whole-memory scale applies on top.
    out.oom_at_optimizer = out.memory.total_gib - out.memory.optimizer_gib * m.memory <= parts.hbm_gib;
    if (detail == Detail::Full)
      out.error = fmt::format("CUDA out of memory: needs {:.1f} GiB of {:.1f} GiB", out.memory.total_gib, parts.hbm_gib);
    return out;
  }
  out.oom_risk = oom_risk(out.memory.total_gib, parts.hbm_gib, pert.memory_risk);
  out.ok = true;
  return out;
}

Prediction predict(const Workload& w, const Perturbation& pert, Detail detail) {
  return predict_from_parts(w, step_parts(w, pert, detail == Detail::Full), pert, detail);
}

nlohmann::json to_json(const Prediction& p) {
  const StepBreakdown& b = p.breakdown;
  return {{"ok", p.ok},
          {"failure", p.failure.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.failure)},
          {"error", p.error},
          {"fails_at_step", p.fails_at_step},
          {"step_time_s", p.step_time_s},
          {"tokens_per_s_per_gpu", p.tokens_per_s_per_gpu},
          {"tflops_per_gpu", p.tflops_per_gpu},
          {"mfu", p.mfu},
          {"oom_risk", p.oom_risk},
          {"breakdown",
           {{"compute_s", b.compute_s},
            {"recompute_s", b.recompute_s},
            {"memory_bound_s", b.memory_bound_s},
            {"tp_comm_s", b.tp_comm_s},
            {"cp_comm_s", b.cp_comm_s},
            {"ep_comm_s", b.ep_comm_s},
            {"dp_comm_s", b.dp_comm_s},
            {"pp_comm_s", b.pp_comm_s},
            {"bubble_s", b.bubble_s},
            {"optimizer_s", b.optimizer_s},
            {"offload_s", b.offload_s},
            {"data_s", b.data_s},
            {"other_s", b.other_s}}},
          {"memory",
           {{"weights_gib", p.memory.weights_gib},
            {"gradients_gib", p.memory.gradients_gib},
            {"optimizer_gib", p.memory.optimizer_gib},
            {"activations_gib", p.memory.activations_gib},
            {"overhead_gib", p.memory.overhead_gib},
            {"fragmentation_gib", p.memory.fragmentation_gib},
            {"peak_allocated_gib", p.memory.peak_allocated_gib},
            {"peak_reserved_gib", p.memory.peak_reserved_gib},
            {"total_gib", p.memory.total_gib},
            {"hbm_gib", p.hbm_gib},
            {"notes", p.memory.notes}}}};
}

}  // namespace attune::sim
