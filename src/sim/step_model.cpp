#include "attune/sim/step_model.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attune/diagnose/flops.h"
#include "memory_terms.h"

namespace attune::sim {

namespace {

constexpr double kBf16Bytes = 2;
// Flash attention kernels reach about 55% of the BF16 peak over forward and
// backward (FA3: 75% forward; backward lower) — perfmodel.md §1.2.
constexpr double kAttentionEfficiency = 0.5;
// FlashAttention-2 (PyTorch SDPA's kernel on Hopper) reaches 35% forward and
// less backward (FA3 paper, Table 2).
constexpr double kSdpaAttentionEfficiency = 0.3;
// Context parallelism splits attention into per-chunk kernels with a
// softmax correction between them, each a fraction of the size (fitted on
// the four CP rows: Llama 3 8B/70B/405B CP2 and torchtitan's CP8 at 262K).
constexpr double kCpAttentionEfficiency = 0.6;
// Eager PyTorch runs norms, activations and residual adds as separate kernels:
// about twice the HBM traffic of fused ones (torchtitan: compile +16%).
constexpr double kEagerTrafficFactor = 2.0;
// Training GEMMs (dgrad/wgrad transposes, epilogues) reach less than the
// best-shape MAMF; narrow ones less still (half of MAMF at an inner
// dimension of kHalfEfficiencyDim). Calibrated on the Megatron-LM rows.
constexpr double kTrainingGemmFactor = 0.85;
constexpr double kHalfEfficiencyDim = 512;
// TP overlap (userbuffers, async TP) hides collectives under at most this
// share of the layer's GEMM time (Bridge Llama 3 70B SFT: TP8 stays 28%
// slower than TP4 with overlap on).
constexpr double kTpOverlapGemmShare = 0.2;
constexpr double kReferenceMamf = 794.5;  // H100 BF16, where the GEMM size curve comes from
// Grouped expert GEMMs (many small, unevenly filled) and the permutation
// around them, calibrated on the MoE rows.
constexpr double kExpertGemmFactor = 0.6;
constexpr double kPermuteBytesPerH = 12;  // per routed token copy: permute, unpermute, forward and back
// FP8 GEMMs gain this share of the MAMF ratio over BF16 end to end (scaling
// and amax bookkeeping; perfmodel.md §1.2: 1.2-1.5x measured).
constexpr double kFp8GainShare = 0.6;
// MXFP8's 1x32 block scales cost more (torchtitan on B200: MXFP8 +16-20%
// end to end where per-tensor FP8 gains +25%; perfmodel.md §1.2).
constexpr double kMxfp8GainShare = 0.3;
// Norms, residual adds, activation functions, rotary: HBM traffic per token
// and layer, forward + backward: about 40 bytes per hidden unit and 16 per
// FFN unit (SwiGLU reads two FFN-wide tensors and writes one, and back).
constexpr double kElementwiseBytesPerH = 40;
constexpr double kElementwiseBytesPerFfn = 16;
// Logits and cross entropy in fp32: written, read, and their gradient, per vocab entry.
constexpr double kLogitBytesPerVocab = 16;
constexpr double kLaunchPerLayerS = 30e-6;  // kernel launches of one layer, one micro-batch (no CUDA graphs)
constexpr double kFixedPerStepS = 0.01;     // data loader, logging, synchronisation

// The shape of one run on one GPU.
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

// Narrow models reach less of MAMF: hidden size d costs (d + k) / d. (Costing
// each GEMM by its own inner dimension, TP shards included, fitted the
// measurements worse: small models came out faster still.)
double narrow_cost(double hidden) { return hidden > 0 ? (hidden + kHalfEfficiencyDim) / hidden : 1.0; }

// Forward linear FLOPs of one layer for one token on one GPU, weighted by
// their narrowness, and the size of the largest GEMMs (GFLOP) for the
// efficiency curve.
struct LayerWork {
  double dense_flops = 0;      // forward, per token, attention projections + dense MLP / shared experts
  double expert_flops = 0;     // forward, per token, routed experts
  double attention_flops = 0;  // forward, per token (causal: half the s^2 work)
  double dense_gemm_gflop = 0;
  double expert_gemm_gflop = 0;
};

LayerWork layer_work(const Shape& sh, bool moe_layer) {
  const auto& m = sh.m;
  const double h = m.hidden, tp = sh.p.tp, tok = sh.tok_mb;
  const double up = sh.ffn_gemms - 1;  // gate + up, or up
  LayerWork w;
  // QKV (h -> q+kv) and the output projection (q -> h), split over TP.
  const double narrow = narrow_cost(h);
  // QKV and output projections (GQA, or MLA's low-rank down/up projections).
  w.dense_flops = 2 * memory::attention_params(m) / tp * narrow;
  auto mlp = [&](double ffn, double split) { return 2 * h * ffn * (up + 1) / split * narrow; };
  if (moe_layer) {
    // With SP each TP rank routes its own 1/tp of the tokens; ETP ranks
    // gather theirs and each computes 1/etp of every expert, so a GPU does
    // 1/tp of the micro-batch's expert work either way.
    const double etp = std::max(1, sh.p.etp);
    // Token copies each local expert sees per micro-batch with balanced routing.
    const double tokens_per_expert = tok * etp / tp * m.top_k * sh.p.ep / std::max(1, m.experts);
    w.expert_flops = mlp(m.moe_ffn, etp) * m.top_k * etp / tp;
    if (m.shared_experts > 0) w.dense_flops += mlp(static_cast<double>(m.moe_ffn) * m.shared_experts, tp);
    w.expert_gemm_gflop = 2 * tokens_per_expert * h * m.moe_ffn / etp / 1e9;
  } else {
    w.dense_flops += mlp(m.ffn, tp);
  }
  w.attention_flops = sh.s * sh.qk_av / tp;  // QK^T and AV, causal half of 2*s*(qk + v) per head
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

double attention_tflops(const Shape& sh, const Perturbation& pert) {
  const double kernel = sh.k.sdpa_attention ? kSdpaAttentionEfficiency : kAttentionEfficiency;
  const double ring = sh.p.cp > 1 ? kCpAttentionEfficiency : 1.0;
  return sh.g.bf16_tflops * kernel * ring * pert.attention;
}

// Seconds of one transformer layer, one micro-batch, forward + backward.
struct LayerTime {
  double compute = 0, recompute = 0, memory_bound = 0;
};

LayerTime layer_time(const Shape& sh, bool moe_layer, double recompute_share, const Perturbation& pert) {
  const LayerWork w = layer_work(sh, moe_layer);
  const double dense_flops = w.dense_flops * sh.tok_mb;
  const double expert_flops = w.expert_flops * sh.tok_mb;
  const double attn_flops = w.attention_flops * sh.tok_mb;
  const double fwd_gemm =
      dense_flops / (gemm_tflops(sh, w.dense_gemm_gflop, pert) * 1e12) +
      (expert_flops > 0 ? expert_flops / (gemm_tflops(sh, w.expert_gemm_gflop, pert) * kExpertGemmFactor * 1e12)
                        : 0);
  const double fwd_attn = attn_flops / (attention_tflops(sh, pert) * 1e12);
  LayerTime t;
  t.compute = 3 * (fwd_gemm + fwd_attn);  // backward is twice the forward
  t.recompute = recompute_share * (fwd_gemm + fwd_attn);
  // Megatron's selective recompute re-runs core attention, which the fused
  // flash kernels make free in practice (Bridge's Llama 3 70B SFT: 1638
  // tokens/s with core_attn recompute, 1625 without); torchtitan's per-op
  // policy recomputes every other matmul.
  if (sh.k.recompute_granularity == "selective") {
    if (sh.k.per_op_selective) t.recompute += 0.5 * fwd_gemm;
    else if (!sh.k.flash_attention) t.recompute += fwd_attn;
  }
  t.recompute *= pert.recompute;
  const double tokens = sh.tok_mb / (sh.k.sequence_parallel ? sh.p.tp : 1);
  const double ffn = moe_layer ? static_cast<double>(sh.m.moe_ffn) * sh.m.top_k : sh.m.ffn;
  double bytes = (kElementwiseBytesPerH * sh.m.hidden + kElementwiseBytesPerFfn * ffn / sh.p.tp) * tokens;
  if (moe_layer) bytes += kPermuteBytesPerH * sh.m.hidden * sh.m.top_k * sh.tok_mb;
  if (sh.k.fp8) bytes *= 1.3;  // quantise / transpose casts around every GEMM
  if (!sh.k.compiled) bytes *= kEagerTrafficFactor;
  t.memory_bound = bytes / (sh.g.hbm_tbps * 1e12);
  return t;
}

bool crosses_nodes(const Shape& sh, int inner, int ranks) {
  return static_cast<long long>(inner) * ranks > sh.g.nvlink_domain;
}

// Bus bandwidth scale for a collective whose group has `per_node` members in
// each node: they share the node's NICs, so fewer members get less of the
// hierarchical bandwidth (one NIC each).
double network_share(const Shape& sh, int per_node) {
  const double full = sh.g.gpus_per_node;
  return std::clamp(per_node / full, 1.0 / full, 1.0);
}

// gemm_s: the layer's GEMM time (forward + backward), which the overlapped
// collectives run under.
double tp_comm(const Shape& sh, double gemm_s, const Perturbation& pert) {
  if (sh.p.tp <= 1) return 0;
  const double bytes = sh.tok_mb * sh.m.hidden * kBf16Bytes;
  const bool cross = crosses_nodes(sh, 1, sh.p.tp);
  const double link = cross ? pert.network : pert.nvlink;
  // SP: 2 all-gathers + 2 reduce-scatters forward, the same backward; without
  // SP 2 all-reduces each way (same bytes).
  const double per = sh.k.sequence_parallel
                         ? 8 * collective_seconds(sh.g, Collective::AllGather, bytes, sh.p.tp, cross)
                         : 4 * collective_seconds(sh.g, Collective::AllReduce, bytes, sh.p.tp, cross);
  const double t = per / link;
  if (!sh.k.tp_comm_overlap) return t;
  // Userbuffers / async TP hide up to two thirds (one chunk stays exposed),
  // and no more than a share of the GEMMs they split: at high TP the GEMMs
  // shrink while the collectives do not.
  const double hidden = std::min(0.65 * t, kTpOverlapGemmShare * gemm_s) * pert.tp_comm_overlap;
  return std::max(0.0, t - hidden);
}

double cp_comm(const Shape& sh, double attn_time, const Perturbation& pert) {
  if (sh.p.cp <= 1) return 0;
  const double kv_bytes = sh.tok_mb * sh.kv * kBf16Bytes / sh.p.tp;
  const bool cross = crosses_nodes(sh, sh.p.tp, sh.p.cp);
  // Ring: cp-1 hops of K,V forward, twice that backward (dK, dV).
  const double t = 3 * (sh.p.cp - 1) * collective_seconds(sh.g, Collective::SendRecv, kv_bytes, 2, cross) /
                   (cross ? pert.network : pert.nvlink);
  return std::max(0.0, t - attn_time * 0.8);  // overlapped with the attention blocks
}

// Expected number of distinct nodes, other than its own, that a token's
// top-k experts live on when the EP group spans `nodes` nodes (uniform routing).
double remote_nodes_per_token(double nodes, double top_k) {
  if (nodes <= 1) return 0;
  return nodes * (1 - std::pow(1 - 1 / nodes, top_k)) * (nodes - 1) / nodes;
}

// Dispatch and combine, forward and backward. Inside a node the all-to-all
// runs over NVLink; across nodes only the copies bound for other nodes use
// the network, and DeepEP sends a token once per remote node (forwarding to
// its experts there over NVLink) instead of once per expert.
double ep_comm(const Shape& sh, const Perturbation& pert) {
  if (!sh.m.is_moe() || sh.p.ep <= 1) return 0;
  const double tokens = sh.tok_mb / (sh.k.sequence_parallel ? sh.p.tp : 1);
  const double token_bytes = sh.m.hidden * kBf16Bytes * (sh.k.fp8 ? 0.75 : 1.0);  // FP8 dispatch, BF16 combine
  const double k = sh.m.top_k;
  const bool deepep = sh.k.moe_dispatcher == "deepep";
  const int inner = std::max(1, sh.p.etp);  // EP ranks are adjacent (Megatron orders expert ranks etp-ep-dp)
  const double span = static_cast<double>(inner) * sh.p.ep;
  const double per_node = std::min<double>(sh.p.ep, std::max(1.0, sh.g.gpus_per_node / double(inner)));
  const double nodes = span > sh.g.nvlink_domain ? std::ceil(sh.p.ep / per_node) : 1;
  // collective_seconds moves (n-1)/n of its message: pass the message whose
  // moved part is what goes over each link.
  const double local_bytes = tokens * k * token_bytes * (per_node - 1) / sh.p.ep;
  double t = per_node > 1 ? collective_seconds(sh.g, Collective::AllToAll, local_bytes * per_node / (per_node - 1),
                                               static_cast<int>(per_node), false) /
                                pert.nvlink
                          : 0;
  if (nodes > 1) {
    const double remote_copies = deepep ? remote_nodes_per_token(nodes, k) : k * (nodes - 1) / nodes;
    const double bytes = tokens * remote_copies * token_bytes;
    const double net =
        collective_seconds(sh.g, Collective::AllToAll, bytes * sh.p.ep / (sh.p.ep - 1), sh.p.ep, true) / pert.network;
    t = std::max(t, net);  // NVLink and network phases run concurrently
  }
  t = 4 * t / pert.alltoall;
  return deepep ? t * std::max(0.1, 1 - 0.15 * pert.deepep) : t;
}

double dp_comm(const Shape& sh, double backward_s, double forward_s, const Perturbation& pert) {
  const int dp = sh.p.dp * sh.p.cp;  // gradients are reduced over DP x CP
  if (dp <= 1) return 0;
  const double bytes = sh.params * kBf16Bytes;
  const int inner = sh.p.tp;
  const bool cross = crosses_nodes(sh, inner, dp);
  const int per_node = std::max(1, sh.g.gpus_per_node / std::max(1, inner));
  const double share = cross ? network_share(sh, std::min(per_node, dp)) : 1.0;
  const double link = (cross ? pert.network : pert.nvlink) * share;
  const bool sharded = sh.k.distributed_optimizer || sh.k.zero_stage > 0;
  double rs = sharded ? collective_seconds(sh.g, Collective::ReduceScatter, bytes, dp, cross) / link
                      : collective_seconds(sh.g, Collective::AllReduce, bytes, dp, cross) / link;
  double ag = sharded ? collective_seconds(sh.g, Collective::AllGather, bytes, dp, cross) / link : 0;
  if (sh.k.zero_stage >= 3) ag *= 2;  // FSDP gathers again for the backward
  // Overlapped buckets hide behind the backward (reduce) and forward (gather)
  // of the last micro-batch, except the last bucket.
  const double hide = std::min(0.95, 0.8 * pert.dp_overlap);
  rs = sh.k.overlap_grad_reduce ? std::max(rs * 0.1, rs - hide * backward_s) : rs;
  ag = sh.k.overlap_param_gather ? std::max(ag * 0.1, ag - hide * forward_s) : ag;
  return rs + ag;
}

double optimizer_time(const Shape& sh) {
  const double shard = sh.k.distributed_optimizer || sh.k.zero_stage > 0 ? sh.p.dp * sh.p.cp : 1;
  const double params = sh.params / shard;
  // Adam reads and writes fp32 master, m, v and reads the gradient: ~32 B/param.
  const double hbm = params * 32 / (sh.g.hbm_tbps * 1e12 * 0.7);
  const double offload = sh.k.optimizer_cpu_offload * params * 16 / (sh.g.pcie_gbps * 1e9);
  return hbm + offload;
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

}  // namespace

Prediction predict(const Workload& w, const Perturbation& pert, Detail detail) {
  Prediction out;
  const GpuSystem* g = find_gpu_system(w.plan.gpu);
  if (!g) {
    out.failure = "invalid_argument";
    out.error = "no GPU type '" + w.plan.gpu + "' in the simulator's catalog";
    return out;
  }
  out.hbm_gib = g->hbm_gib;
  if (std::string e = layout_error(w); !e.empty()) {
    out.failure = "invalid_argument";
    out.error = e;
    return out;
  }
  const auto& m = w.model;
  const auto& p = w.plan;
  Shape sh{m, p, w.knobs, *g};
  sh.s = static_cast<double>(p.seq_len);
  sh.tok_mb = p.mbs * sh.s / p.cp;
  sh.micro = static_cast<double>(p.gbs) / (static_cast<double>(p.mbs) * p.dp);
  sh.layers_stage = (m.layers + p.pp - 1) / p.pp;  // the busiest stage of an uneven split
  sh.q = m.heads * m.attention_head_dim();
  sh.kv = 2.0 * (m.kv_heads > 0 ? m.kv_heads : m.heads) * m.attention_head_dim();
  sh.ffn_gemms = m.mlp_matrices();
  sh.qk_av = m.is_mla() ? m.heads * double(m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim) : 2 * sh.q;
  sh.gemm_factor = pert.gemm_for(g->id);
  sh.params = std::max(memory::gpu_params(m, p, true, p.pp == 1).total(), memory::gpu_params(m, p, p.pp == 1, true).total());

  // Busiest stage: its layers (MoE share as in the model) and, at the end,
  // the output layer.
  const int moe_layers = m.is_moe() ? m.layers - m.dense_layers : 0;
  const double moe_share = m.layers > 0 ? static_cast<double>(moe_layers) / m.layers : 0;
  const double recompute_share =
      w.knobs.recompute_granularity == "full"
          ? (w.knobs.recompute_num_layers > 0 ? std::min(1.0, w.knobs.recompute_num_layers / double(sh.layers_stage)) : 1.0)
          : 0.0;
  const LayerTime dense = layer_time(sh, false, recompute_share, pert);
  const LayerTime moe = m.is_moe() ? layer_time(sh, true, recompute_share, pert) : dense;
  auto mix = [&](double a, double b) { return sh.layers_stage * ((1 - moe_share) * a + moe_share * b); };
  const double logits_flops = 6.0 * m.hidden * m.vocab / p.tp * sh.tok_mb;
  const double logits_s = logits_flops / (gemm_tflops(sh, 2 * sh.tok_mb * m.hidden * m.vocab / p.tp / 1e9, pert) * 1e12) +
                          kLogitBytesPerVocab * m.vocab / p.tp * sh.tok_mb / (g->hbm_tbps * 1e12);
  const double attn_s = sh.layers_stage * 3 * (sh.s * sh.qk_av / p.tp * sh.tok_mb) / (attention_tflops(sh, pert) * 1e12);

  StepBreakdown& b = out.breakdown;
  const double per_mb_compute = mix(dense.compute, moe.compute) + logits_s;
  const double per_mb_recompute = mix(dense.recompute, moe.recompute);
  const double per_mb_memory = mix(dense.memory_bound, moe.memory_bound) +
                               sh.layers_stage * kLaunchPerLayerS *
                                   (w.knobs.cuda_graphs ? std::max(0.0, 1 - pert.cuda_graphs) : 1.0);
  const double per_mb_tp = sh.layers_stage * tp_comm(sh, dense.compute, pert);
  const double per_mb_cp = cp_comm(sh, attn_s, pert);
  const double per_mb_ep = moe_share * sh.layers_stage * ep_comm(sh, pert);
  const double per_mb = per_mb_compute + per_mb_recompute + per_mb_memory + per_mb_tp + per_mb_cp + per_mb_ep;

  b.compute_s = sh.micro * per_mb_compute;
  b.recompute_s = sh.micro * per_mb_recompute;
  b.memory_bound_s = sh.micro * per_mb_memory;
  b.tp_comm_s = sh.micro * per_mb_tp;
  b.cp_comm_s = sh.micro * per_mb_cp;
  b.ep_comm_s = sh.micro * per_mb_ep;
  // 1F1B: (p-1)/v micro-batch times of fill and drain.
  b.bubble_s = p.pp > 1 ? (p.pp - 1.0) / std::max(1, p.vp) * per_mb : 0;
  if (p.pp > 1) {
    const double act = sh.tok_mb * m.hidden * kBf16Bytes / (w.knobs.sequence_parallel ? p.tp : 1);
    const double hop = collective_seconds(*g, Collective::SendRecv, act, 2, p.world > g->nvlink_domain);
    b.pp_comm_s = sh.micro * 2 * std::max(1, p.vp) * hop * 0.5;  // half hidden behind compute
  }
  b.dp_comm_s = dp_comm(sh, per_mb_compute * 2 / 3, per_mb_compute / 3, pert);
  b.optimizer_s = optimizer_time(sh);
  b.other_s = kFixedPerStepS;
  out.step_time_s = b.compute_s + b.recompute_s + b.memory_bound_s + b.tp_comm_s + b.cp_comm_s + b.ep_comm_s +
                    b.dp_comm_s + b.pp_comm_s + b.bubble_s + b.optimizer_s + b.other_s;

  const double tokens = static_cast<double>(p.gbs) * sh.s;
  out.tokens_per_s_per_gpu = tokens / (out.step_time_s * p.world);
  out.tflops_per_gpu = out.tokens_per_s_per_gpu *
                       diagnose::flops_per_token(m, p.seq_len, diagnose::FlopsConvention::CausalHalved) / 1e12;
  out.mfu = out.tflops_per_gpu / g->bf16_tflops;

  out.memory = estimate_memory(w, g->hbm_gib, detail == Detail::Full);
  out.memory.total_gib *= pert.memory;
  if (out.memory.total_gib > g->hbm_gib) {
    out.failure = "oom";
    if (detail == Detail::Full)
      out.error = fmt::format("CUDA out of memory: needs {:.1f} GiB of {:.1f} GiB", out.memory.total_gib, g->hbm_gib);
    return out;
  }
  out.ok = true;
  return out;
}

nlohmann::json to_json(const Prediction& p) {
  const StepBreakdown& b = p.breakdown;
  return {{"ok", p.ok},
          {"failure", p.failure.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.failure)},
          {"error", p.error},
          {"step_time_s", p.step_time_s},
          {"tokens_per_s_per_gpu", p.tokens_per_s_per_gpu},
          {"tflops_per_gpu", p.tflops_per_gpu},
          {"mfu", p.mfu},
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
            {"other_s", b.other_s}}},
          {"memory",
           {{"weights_gib", p.memory.weights_gib},
            {"gradients_gib", p.memory.gradients_gib},
            {"optimizer_gib", p.memory.optimizer_gib},
            {"activations_gib", p.memory.activations_gib},
            {"overhead_gib", p.memory.overhead_gib},
            {"peak_allocated_gib", p.memory.peak_allocated_gib},
            {"peak_reserved_gib", p.memory.peak_reserved_gib},
            {"total_gib", p.memory.total_gib},
            {"hbm_gib", p.hbm_gib},
            {"notes", p.memory.notes}}}};
}

}  // namespace attune::sim
