#include "attune/sim/step_model.h"

#include <algorithm>
#include <cmath>

#include "attune/diagnose/flops.h"
#include "memory_terms.h"

namespace attune::sim {

namespace {

constexpr double kBf16Bytes = 2;
// Flash attention kernels reach about 55% of the BF16 peak over forward and
// backward (FA3: 75% forward; backward lower) — perfmodel.md §1.2.
constexpr double kAttentionEfficiency = 0.5;
// Training GEMMs (dgrad/wgrad transposes, epilogues) reach less than the
// best-shape MAMF; narrow ones less still (half of MAMF at an inner
// dimension of kHalfEfficiencyDim). Calibrated on the Megatron-LM rows.
constexpr double kTrainingGemmFactor = 0.85;
constexpr double kHalfEfficiencyDim = 512;
// Grouped expert GEMMs (many small, unevenly filled) and the permutation
// around them, calibrated on the MoE rows.
constexpr double kExpertGemmFactor = 0.6;
constexpr double kPermuteBytesPerH = 12;  // per routed token copy: permute, unpermute, forward and back
// FP8 GEMMs gain this share of the MAMF ratio over BF16 end to end (scaling
// and amax bookkeeping; perfmodel.md §1.2: 1.2-1.5x measured).
constexpr double kFp8GainShare = 0.6;
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
  double params = 0;      // parameters on the busiest GPU, before DP sharding (the memory model's count)
};

// Forward linear FLOPs of one layer for one token on one GPU, and the size of
// its largest GEMM (GFLOP) for the efficiency curve.
struct LayerWork {
  double linear_flops = 0;     // forward, per token
  double attention_flops = 0;  // forward, per token (causal: half the s^2 work)
  double dense_gemm_gflop = 0;
  double expert_gemm_gflop = 0;
  double expert_flops = 0;     // forward, per token, part of linear_flops
};

LayerWork layer_work(const Shape& sh, bool moe_layer) {
  const auto& m = sh.m;
  const double h = m.hidden, tp = sh.p.tp;
  LayerWork w;
  const double attn_proj = 2 * (h * (sh.q + sh.kv) + sh.q * h) / tp;
  double mlp = 0;
  if (moe_layer) {
    const double etp = std::max(1, sh.p.etp);
    const double expert = 2 * h * m.moe_ffn * sh.ffn_gemms / etp;
    w.expert_flops = expert * m.top_k;
    mlp = w.expert_flops + 2 * h * m.moe_ffn * sh.ffn_gemms * m.shared_experts / tp;
    // Tokens each local expert sees per micro-batch with balanced routing.
    const double tokens_per_expert = sh.tok_mb * m.top_k * sh.p.ep / std::max(1, m.experts);
    w.expert_gemm_gflop = 2 * tokens_per_expert * h * m.moe_ffn / etp / 1e9;
  } else {
    mlp = 2 * h * m.ffn * sh.ffn_gemms / tp;
  }
  w.linear_flops = attn_proj + mlp;
  w.attention_flops = 2 * sh.s * sh.q / tp;  // QK^T and AV, causal half of 2*2*s*q
  w.dense_gemm_gflop = 2 * sh.tok_mb * h * std::max<double>(m.ffn, sh.q) / tp / 1e9;
  return w;
}

double gemm_tflops(const Shape& sh, double gflop, const Perturbation& pert, double inner_dim = 0) {
  double peak = sh.g.mamf_bf16;
  if (sh.k.fp8 && sh.g.mamf_fp8 > 0) peak *= 1 + kFp8GainShare * (sh.g.mamf_fp8 / sh.g.mamf_bf16 - 1);
  const double narrow = inner_dim > 0 ? inner_dim / (inner_dim + kHalfEfficiencyDim) : 1.0;
  return peak * kTrainingGemmFactor * narrow * gemm_efficiency(gflop) * pert.gemm;
}

// Seconds of one transformer layer, one micro-batch, forward + backward.
struct LayerTime {
  double compute = 0, recompute = 0, memory_bound = 0;
};

LayerTime layer_time(const Shape& sh, bool moe_layer, double recompute_share, const Perturbation& pert) {
  const LayerWork w = layer_work(sh, moe_layer);
  const double dense_flops = (w.linear_flops - w.expert_flops) * sh.tok_mb;
  const double expert_flops = w.expert_flops * sh.tok_mb;
  const double attn_flops = w.attention_flops * sh.tok_mb;
  const double inner = static_cast<double>(sh.m.hidden);
  const double fwd_gemm =
      dense_flops / (gemm_tflops(sh, w.dense_gemm_gflop, pert, inner) * 1e12) +
      (expert_flops > 0
           ? expert_flops / (gemm_tflops(sh, w.expert_gemm_gflop, pert, inner) * kExpertGemmFactor * 1e12)
           : 0);
  const double fwd_attn = attn_flops / (sh.g.bf16_tflops * kAttentionEfficiency * pert.attention * 1e12);
  LayerTime t;
  t.compute = 3 * (fwd_gemm + fwd_attn);  // backward is twice the forward
  t.recompute = recompute_share * (fwd_gemm + fwd_attn);
  if (sh.k.recompute_granularity == "selective") t.recompute += fwd_attn;  // core attention again
  const double tokens = sh.tok_mb / (sh.k.sequence_parallel ? sh.p.tp : 1);
  const double ffn = moe_layer ? static_cast<double>(sh.m.moe_ffn) * sh.m.top_k : sh.m.ffn;
  double bytes = (kElementwiseBytesPerH * sh.m.hidden + kElementwiseBytesPerFfn * ffn / sh.p.tp) * tokens;
  if (moe_layer) bytes += kPermuteBytesPerH * sh.m.hidden * sh.m.top_k * sh.tok_mb;
  if (sh.k.fp8) bytes *= 1.3;  // quantise / transpose casts around every GEMM
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

double tp_comm(const Shape& sh, const Perturbation& pert) {
  if (sh.p.tp <= 1) return 0;
  const double bytes = sh.tok_mb * sh.m.hidden * kBf16Bytes;
  const bool cross = crosses_nodes(sh, 1, sh.p.tp);
  const double link = cross ? pert.network : pert.nvlink;
  // SP: 2 all-gathers + 2 reduce-scatters forward, the same backward; without
  // SP 2 all-reduces each way (same bytes).
  const double per = sh.k.sequence_parallel
                         ? 8 * collective_seconds(sh.g, Collective::AllGather, bytes, sh.p.tp, cross)
                         : 4 * collective_seconds(sh.g, Collective::AllReduce, bytes, sh.p.tp, cross);
  const double exposed = sh.k.tp_comm_overlap ? 0.35 : 1.0;
  return per / link * exposed;
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

double ep_comm(const Shape& sh, const Perturbation& pert) {
  if (!sh.m.is_moe() || sh.p.ep <= 1) return 0;
  double bytes = sh.tok_mb * sh.m.top_k * sh.m.hidden * kBf16Bytes / (sh.k.sequence_parallel ? sh.p.tp : 1);
  if (sh.k.fp8) bytes *= 0.75;  // FP8 dispatch, BF16 combine
  const bool cross = crosses_nodes(sh, sh.p.tp * sh.p.cp, sh.p.ep);
  double t = 4 * collective_seconds(sh.g, Collective::AllToAll, bytes, sh.p.ep, cross);
  t /= (cross ? pert.network : pert.nvlink) * pert.alltoall;
  return sh.k.moe_dispatcher == "deepep" ? t * 0.7 : t;
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
  rs = sh.k.overlap_grad_reduce ? std::max(rs * 0.1, rs - 0.8 * backward_s) : rs;
  ag = sh.k.overlap_param_gather ? std::max(ag * 0.1, ag - 0.8 * forward_s) : ag;
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

Prediction predict(const Workload& w, const Perturbation& pert) {
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
  const double attn_s = sh.layers_stage * 3 * (2 * sh.s * sh.q / p.tp * sh.tok_mb) /
                        (g->bf16_tflops * kAttentionEfficiency * pert.attention * 1e12);

  StepBreakdown& b = out.breakdown;
  const double per_mb_compute = mix(dense.compute, moe.compute) + logits_s;
  const double per_mb_recompute = mix(dense.recompute, moe.recompute);
  const double per_mb_memory = mix(dense.memory_bound, moe.memory_bound) +
                               (w.knobs.cuda_graphs ? 0 : sh.layers_stage * kLaunchPerLayerS);
  const double per_mb_tp = sh.layers_stage * tp_comm(sh, pert);
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

  out.memory = estimate_memory(w, g->hbm_gib);
  out.memory.total_gib *= pert.memory;
  if (out.memory.total_gib > g->hbm_gib) {
    out.failure = "oom";
    out.error = "CUDA out of memory: needs " + std::to_string(out.memory.total_gib) + " GiB of " +
                std::to_string(g->hbm_gib) + " GiB";
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
