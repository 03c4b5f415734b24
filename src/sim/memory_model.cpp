// MemoryModel: the peak memory of the most loaded GPU for a Workload — model
// states under DP sharding, in-flight activations of the first and the last
// pipeline stage, and the consumers outside PyTorch's allocator. The terms are
// in memory_terms.h; what each counts: docs/simulator.md (memory).
#include "attune/sim/memory_model.h"
#include "attune/util/text.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>

#include "memory_terms.h"

namespace attune::sim {
namespace memory {
namespace {

int at_least_1(long long v) { return v > 0 ? static_cast<int>(v) : 1; }

// Per-token widths (elements) of the attention tensors kept for backward.
struct AttentionWidths {
  double q = 0, k = 0, v = 0, out = 0;
  double latent = 0;  // MLA compressed q and kv (0 for GQA)
};

AttentionWidths attention_widths(const recipe::ModelSpec& m) {
  if (m.is_mla()) {
    const double qk = static_cast<double>(m.heads) * (m.qk_nope_head_dim + m.qk_rope_head_dim);
    const double v = static_cast<double>(m.heads) * m.v_head_dim;
    return {qk, qk, v, v, static_cast<double>(m.q_lora_rank + m.kv_lora_rank)};
  }
  const double d = m.attention_head_dim();
  const int kv_heads = m.kv_heads > 0 ? m.kv_heads : m.heads;
  return {m.heads * d, kv_heads * d, kv_heads * d, m.heads * d, 0};
}

// Bytes per token of the FC1 output (gate + up when gated) for an
// intermediate width f: what the activation function's backward needs.
double fc1_output_bytes(const recipe::ModelSpec& m, double f) { return 2.0 * f * (m.mlp_matrices() - 1); }

// Loss on the last stage, bytes per (token x vocab entry / TP): bf16 logits
// from the output GEMM (2) + their fp32 copy / softmax (4) + the fp32 gradient
// the cross-entropy backward writes while that copy is alive (4). Megatron's
// memory estimator counts only the fp32 copy; torchtitan's measured peaks
// (PyTorch cross-entropy, PP=1; the anchors in memory_model_test) need all three.
constexpr double kLossBytesPerLogit = 10;
// Without the fp32 upcast: the bf16 logits and their bf16 gradient.
constexpr double kBf16LossBytesPerLogit = 4;

// §3.4: ~0.3-1 GiB CUDA context; ~0.55-0.7 GiB per NCCL communicator (nccl#964).
constexpr double kCudaContextGiB = 0.5;
constexpr double kNcclPerCommunicatorGiB = 0.7;
// NVLink SHARP buffers, part of a communicator's memory on NVSwitch nodes
// (Bridge performance guide: NCCL_NVLS_ENABLE=0 lowers memory); the size is
// an estimate.
constexpr double kNvlsPerCommunicatorGiB = 0.2;
// §3.4: CUDA graphs hold "a few gigabytes" of static buffers, >10 GB with PP>1.
constexpr double kCudaGraphGiB = 3;
constexpr double kCudaGraphPipelineGiB = 10;

}  // namespace

// ---- Parameters -------------------------------------------------------------

double attention_params(const recipe::ModelSpec& m) {
  const double h = m.hidden;
  if (m.is_mla()) {
    const double heads = m.heads;
    const double qk_head = m.qk_nope_head_dim + m.qk_rope_head_dim;
    const double q = m.q_lora_rank > 0 ? h * m.q_lora_rank + m.q_lora_rank * heads * qk_head : h * heads * qk_head;
    const double kv = h * (m.kv_lora_rank + m.qk_rope_head_dim) +
                      static_cast<double>(m.kv_lora_rank) * heads * (m.qk_nope_head_dim + m.v_head_dim);
    const double out = heads * m.v_head_dim * h;
    return q + kv + out;
  }
  const AttentionWidths a = attention_widths(m);
  return h * (a.q + a.k + a.v) + a.out * h;
}


StageLayers stage_layers(const recipe::ModelSpec& m, int pp, bool first_stage) {
  const int stages = at_least_1(pp);
  const int per_stage = (m.layers + stages - 1) / stages;
  const int dense_total = m.is_moe() ? std::min(m.dense_layers, m.layers) : m.layers;
  // The stage's layers: [0, per_stage) for the first, [L - per_stage, L) for the last.
  const int start = first_stage ? 0 : std::max(0, m.layers - per_stage);
  const int dense = std::clamp(dense_total - start, 0, per_stage);
  return {dense, per_stage - dense};
}

namespace {

struct LayerWeights {
  double attention = 0, dense_mlp = 0, shared = 0, routed = 0, replicated_dense = 0, replicated_moe = 0;
};

// One layer's weights, before sharding. Norms (and MLA latent norms) are
// replicated across TP; so is the MoE router.
LayerWeights layer_weights(const recipe::ModelSpec& m) {
  const double h = m.hidden;
  const double c = m.mlp_matrices();
  LayerWeights lw;
  lw.attention = attention_params(m);
  lw.dense_mlp = c * h * m.ffn;
  lw.shared = c * h * m.moe_ffn * m.shared_experts;
  lw.routed = c * h * m.moe_ffn * m.experts;
  lw.replicated_dense = 2 * h + m.q_lora_rank + m.kv_lora_rank;
  lw.replicated_moe = lw.replicated_dense + h * m.experts;
  return lw;
}

}  // namespace

GpuParams gpu_params(const recipe::ModelSpec& m, const recipe::Plan& p, bool first_stage, bool last_stage) {
  const double tp = at_least_1(p.tp);
  const double expert_split = static_cast<double>(at_least_1(p.ep)) * at_least_1(p.etp);
  const StageLayers layers = stage_layers(m, p.pp, first_stage);
  const LayerWeights lw = layer_weights(m);

  GpuParams g;
  const double tp_linear =
      (layers.total() * lw.attention + layers.dense * lw.dense_mlp + layers.moe * lw.shared) / tp;
  g.expert = layers.moe * lw.routed / expert_split;
  g.dense = tp_linear + layers.dense * lw.replicated_dense + layers.moe * lw.replicated_moe;
  g.linear = tp_linear + g.expert;

  // Embeddings are vocab-parallel (/TP) and not FP8 GEMMs: the input
  // embedding on the first stage; the output layer (and final norm) on the
  // last — a second copy there when tied but split over stages.
  const double embedding = static_cast<double>(m.vocab) * m.hidden / tp;
  const bool single_stage = at_least_1(p.pp) == 1;
  if (first_stage) g.dense += embedding;
  if (last_stage) {
    g.dense += m.hidden;
    if (!m.tied_embeddings || !single_stage) g.dense += embedding;
  }
  return g;
}

double largest_layer_params(const recipe::ModelSpec& m, const recipe::Plan& p) {
  const double tp = at_least_1(p.tp);
  const double expert_split = static_cast<double>(at_least_1(p.ep)) * at_least_1(p.etp);
  const LayerWeights lw = layer_weights(m);
  const double dense_layer = lw.attention / tp + lw.dense_mlp / tp + lw.replicated_dense;
  const double moe_layer = lw.attention / tp + lw.shared / tp + lw.routed / expert_split + lw.replicated_moe;
  return m.is_moe() ? std::max(dense_layer, moe_layer) : dense_layer;
}

// ---- Model states -----------------------------------------------------------

Sharding sharding_mode(const Knobs& k, const recipe::Plan& p) {
  // A plan's FSDP group means full sharding unless a stage below 3 says otherwise.
  if (k.zero_stage >= 3 || (k.zero_stage == 0 && p.dp_shard > 1)) return Sharding::kFull;
  if (k.zero_stage == 2) return Sharding::kOptimizerAndGrads;
  if (k.zero_stage == 1 || k.distributed_optimizer) return Sharding::kOptimizer;
  return Sharding::kNone;
}

ShardGroups shard_groups(const recipe::Plan& p) {
  const double cp = at_least_1(p.cp);
  // A stated shard group is the group, one rank included (Axolotl's expert
  // mesh with dp_shard_size 1 replicates the dense weights).
  const double dp = p.dp_shard > 0 ? p.dp_shard : at_least_1(p.dp);
  ShardGroups g;
  g.dense = dp * cp;
  // Expert-DP: the same ranks regrouped by EP x ETP instead of TP.
  g.expert = std::max(1.0, g.dense * at_least_1(p.tp) / (static_cast<double>(at_least_1(p.ep)) * at_least_1(p.etp)));
  return g;
}

StateBytes state_bytes(Sharding mode, double shard_ranks, double weight_bytes, bool fp32_weights, double grad_bytes) {
  const double d = std::max(1.0, shard_ranks);
  StateBytes b{weight_bytes, grad_bytes, fp32_weights ? 8.0 : 12.0};
  if (mode != Sharding::kNone) b.optimizer /= d;
  if (mode == Sharding::kOptimizerAndGrads || mode == Sharding::kFull) b.grads /= d;
  if (mode == Sharding::kFull) b.weights /= d;
  return b;
}

// ---- Activations ------------------------------------------------------------

Recompute recompute_mode(const Knobs& k, const recipe::Plan& p) {
  const std::string_view knob = k.recompute_granularity;
  // The simulator's own words first (searches ask millions of times).
  if (knob == "full") return Recompute::kFull;
  if (knob == "selective") return Recompute::kSelective;
  const std::string_view g = knob.empty() || knob == "none" ? std::string_view(p.recompute) : knob;
  if (contains_lower(g, "selective")) return Recompute::kSelective;
  if (contains_lower(g, "full") || contains_lower(g, "block") || contains_lower(g, "uniform") ||
      contains_lower(g, "true"))
    return Recompute::kFull;
  return Recompute::kNone;
}

unsigned dropped_by_recompute(const Knobs& k, Recompute mode) {
  if (mode != Recompute::kSelective) return 0;
  // torchtitan's per-op policy saves every other matmul output: about the
  // MLP intermediates' worth of what a layer keeps.
  if (k.per_op_selective) return recompute_module::kMlp | recompute_module::kMlaUpProj;
  return k.recompute_modules;
}

TokenBytes layer_token_bytes(const recipe::ModelSpec& m, bool moe_layer, unsigned dropped, bool fp8, int etp) {
  using namespace recompute_module;
  const double h = m.hidden;
  const double linear_in = fp8 ? 1.0 : 2.0;  // bytes per element of a stored linear-layer input
  const AttentionWidths a = attention_widths(m);
  TokenBytes t;
  // Norm-1 input, QKV-GEMM input, norm-2 input, FC1 input; MLA latents and
  // their norms. Recomputing the norms (layernorm) drops the two GEMM inputs
  // they produce: the GEMMs save the norm input instead.
  t.sequence_parallel_only = 2 * h + 2 * h + (2 + linear_in) * a.latent;
  if (!(dropped & kLayerNorm)) t.sequence_parallel_only += 2 * linear_in * h;
  // Q, K, V and the output O kept by flash attention for its backward. O is
  // also the out-projection input: under FP8 that GEMM stores its own FP8
  // copy beside the bf16 O, so FP8 adds a byte here instead of saving one.
  // Recomputing MLA's up-projections (mla_up_proj) rebuilds Q/K/V from the latents.
  t.tensor_parallel = (fp8 ? 3.0 : 2.0) * a.out;
  if (!((dropped & kMlaUpProj) && m.is_mla())) t.tensor_parallel += 2 * (a.q + a.k + a.v);
  const bool mlp = dropped & kMlp;
  if (!moe_layer) {
    if (!mlp) t.tensor_parallel += fc1_output_bytes(m, m.ffn) + linear_in * m.ffn;
    return t;
  }
  // MoE: each token reaches top_k experts. The dispatched copies are full
  // hidden width, gathered over the ETP group; intermediates are split by ETP.
  // Router probabilities are applied inside the activation, so the combine is
  // a plain sum that stores nothing. moe_act recomputes the activation
  // function: its output (the FC2 input) is not kept.
  const double k = std::max(1, m.top_k);
  const double e = std::max(1, etp);
  t.tensor_parallel += k * e * linear_in * h;
  const double shared_ffn = static_cast<double>(m.moe_ffn) * m.shared_experts;
  if (!mlp) {
    t.tensor_parallel += k * fc1_output_bytes(m, m.moe_ffn);
    if (!(dropped & kMoeAct)) t.tensor_parallel += k * linear_in * m.moe_ffn;
    t.tensor_parallel += fc1_output_bytes(m, shared_ffn) + linear_in * shared_ffn;
  }
  return t;
}

namespace {

bool fp8_enabled(const Workload& w) { return w.knobs.fp8 || contains_lower(w.plan.precision, "fp8"); }

bool sequence_parallel(const Workload& w) { return w.knobs.sequence_parallel && at_least_1(w.plan.tp) > 1; }

double sequence_length(const Workload& w) {
  return static_cast<double>(w.plan.seq_len > 0 ? w.plan.seq_len : w.model.max_seq);
}

// Tokens of one micro-batch on one GPU (CP splits the sequence).
double local_tokens(const Workload& w) {
  return sequence_length(w) * at_least_1(w.plan.mbs) / at_least_1(w.plan.cp);
}

}  // namespace

double layer_activation_bytes(const Workload& w, bool moe_layer, Recompute mode) {
  const double tp = at_least_1(w.plan.tp);
  const double sp_split = sequence_parallel(w) ? tp : 1.0;
  const double tokens = local_tokens(w);
  // Full recompute keeps only the layer input (§3.2 last row).
  if (mode == Recompute::kFull) return tokens * 2.0 * w.model.hidden / sp_split;
  const TokenBytes t =
      layer_token_bytes(w.model, moe_layer, dropped_by_recompute(w.knobs, mode), fp8_enabled(w), w.plan.etp);
  return tokens * (t.sequence_parallel_only / sp_split + t.tensor_parallel / tp);
}

double attention_score_bytes(const Workload& w, Recompute mode) {
  // An unfused kernel stores the softmax, dropout mask and dropout output:
  // 5 a s^2 b (Korthikanti Table 2); recomputing core attention drops them.
  if (mode == Recompute::kFull) return 0;
  if (mode == Recompute::kSelective && (dropped_by_recompute(w.knobs, mode) & recompute_module::kCoreAttn ||
                                        w.knobs.per_op_selective))
    return 0;
  const double s = sequence_length(w);
  return 5.0 * w.model.heads * s * (s / at_least_1(w.plan.cp)) * at_least_1(w.plan.mbs) / at_least_1(w.plan.tp);
}

double inflight_microbatches(int pp, int vp, long long micro_batches, bool first_stage) {
  const double p = at_least_1(pp);
  const double v = at_least_1(vp);
  const double m = std::max(1LL, micro_batches);
  if (p == 1) return 1;
  double held = 1;  // 1F1B last stage: one micro-batch between its forward and backward
  if (first_stage) {
    held = v > 1 ? p * (1 + (p - 1) / (p * v)) : p;
  } else if (v > 1) {
    held = p - (p - 1) / v;  // warm-up of (v-1) p chunks + 1, in stage units
  }
  return std::min(held, m);
}

long long micro_batches_per_step(const recipe::Plan& p) {
  if (p.gbs > 0 && p.mbs > 0 && p.dp > 0) return std::max(1LL, p.gbs / (static_cast<long long>(p.mbs) * p.dp));
  return std::max(1LL, p.grad_accum);
}

double logits_bytes(const Workload& w) {
  const double tokens = local_tokens(w);
  const double tp = at_least_1(w.plan.tp);
  // Output-layer input and final-norm input (Megatron's 4 s b h) + the loss.
  const double per_logit = w.knobs.loss_fp32 ? kLossBytesPerLogit : kBf16LossBytesPerLogit;
  return 4.0 * tokens * w.model.hidden / tp + per_logit * tokens * w.model.vocab / tp;
}

double embedding_stage_bytes(const Workload& w, double inflight) {
  const double tokens = local_tokens(w);
  // Input ids + positions (8 s b) and the embedding output (s b h) per
  // in-flight micro-batch (theoretical_memory_usage.py, §3.3).
  return inflight * (8.0 * tokens + tokens * w.model.hidden / at_least_1(w.plan.tp));
}

// ---- Other consumers --------------------------------------------------------

int communicator_count(const recipe::Plan& p) {
  int groups = 1;  // the default (world) group
  for (int size : {p.tp, p.pp, p.cp, p.ep, std::max(p.dp, p.dp_shard)}) groups += size > 1 ? 1 : 0;
  if (p.etp > 1 && p.etp != p.tp) ++groups;
  return groups;
}

int nvls_communicator_count(const recipe::Plan& p) {
  // NVLS serves groups of more than two GPUs inside one NVSwitch node.
  const int node = std::max(1, p.gpus_per_node);
  int groups = 0;
  if (p.tp > 2 && p.tp <= node) ++groups;
  const long long dp_inner = static_cast<long long>(p.dp) * p.cp;
  if (dp_inner > 2 && static_cast<long long>(p.tp) * dp_inner <= node) ++groups;
  return groups;
}

// Without NVLS: the context and the communicators (NVLS buffers are the
// choice's effect).
double fixed_overhead_bytes(const Workload& w) {
  const double gib = kCudaContextGiB + kNcclPerCommunicatorGiB * communicator_count(w.plan);
  return gib * kBytesPerGiB;
}

double nvls_buffer_bytes(const Workload& w) { return kNvlsPerCommunicatorGiB * nvls_communicator_count(w.plan) * kBytesPerGiB; }

double cuda_graph_bytes(const Workload& w) {
  return (at_least_1(w.plan.pp) > 1 ? kCudaGraphPipelineGiB : kCudaGraphGiB) * kBytesPerGiB;
}

double deepep_buffer_bytes(const Workload& w) {
  if (!w.model.is_moe() || w.plan.ep <= 1) return 0;
  // DeepEP's NVLink buffer, plus its RDMA buffer when the EP group leaves the node.
  const bool cross = static_cast<long long>(std::max(1, w.plan.etp)) * w.plan.ep > std::max(1, w.plan.gpus_per_node);
  return (cross ? 2.0 : 1.0) * kBytesPerGiB;
}

double fragmentation_fraction() {
  // Activations and transient buffers are freed and reallocated every
  // micro-batch in many sizes, so PyTorch's caching allocator keeps split
  // blocks reserved above what is allocated; model states live in buffers
  // allocated once and do not churn. 10% is a typical steady-state gap, not a
  // bound: the Llama3-70B SFT run of §3.4 OOM'd from fragmentation at 58.8 GB
  // allocated on an 80 GB GPU. Expandable segments (a choice's effect) grow
  // one mapped segment instead of splitting blocks, leaving a small remainder.
  return 0.10;
}

}  // namespace memory

namespace {

using memory::kBytesPerGiB;

const char* sharding_name(memory::Sharding s) {
  switch (s) {
    case memory::Sharding::kNone: return "no sharding (plain DDP)";
    case memory::Sharding::kOptimizer: return "distributed optimizer / ZeRO-1";
    case memory::Sharding::kOptimizerAndGrads: return "ZeRO-2";
    case memory::Sharding::kFull: return "ZeRO-3 / FSDP";
  }
  return "";
}

// Model states of one stage's GPU (§3.1), including FSDP's gathered weights
// and unsharded gradients and Transformer Engine's FP8 weight caches.
void add_model_states(const Workload& w, const memory::GpuParams& params, StageMemory& s) {
  using memory::Sharding;
  const Sharding mode = memory::sharding_mode(w.knobs, w.plan);
  const memory::ShardGroups groups = memory::shard_groups(w.plan);
  const bool fp32 = w.plan.precision.size() == 4 && contains_lower(w.plan.precision, "fp32");
  const bool fp8 = memory::fp8_enabled(w);
  const double wb = fp32 ? 4.0 : 2.0;
  // --fp8-param-gather keeps the GEMM weights in FP8 only (TE#1764).
  const bool fp8_weights = fp8 && w.knobs.fp8_param_gather && !fp32;
  const double dense_linear = params.linear - params.expert;
  const double dense_wb =
      params.dense > 0 && fp8_weights ? (params.dense * wb - dense_linear * (wb - 1)) / params.dense : wb;
  // Gradient buffers: fp32 when the recipe reduces in fp32, else the
  // parameters' bf16 (Megatron's grad_reduce_in_fp32=False in the
  // performance recipes).
  const double gb = fp32 || w.knobs.grads_fp32 ? 4.0 : 2.0;
  memory::StateBytes dense = memory::state_bytes(mode, groups.dense, dense_wb, fp32, gb);
  memory::StateBytes expert = memory::state_bytes(mode, groups.expert, fp8_weights ? 1.0 : wb, fp32, gb);
  // Megatron's precision-aware optimizer keeps m and v in bf16: 8 of Adam's 12 bytes become 4.
  if (w.knobs.bf16_moments && !fp32) {
    dense.optimizer *= 8.0 / 12.0;
    expert.optimizer *= 8.0 / 12.0;
  }

  s.weights = params.dense * dense.weights + params.expert * expert.weights;
  s.grads = params.dense * dense.grads + params.expert * expert.grads;
  s.optimizer = (params.dense * dense.optimizer + params.expert * expert.optimizer) *
                (1 - std::clamp(w.knobs.optimizer_cpu_offload, 0.0, 1.0));
  // FSDP CPU offload keeps parameters, gradients and optimizer state on the
  // host; only the units being computed are on the GPU.
  if (w.knobs.param_offload && mode == Sharding::kFull) s.weights = s.grads = s.optimizer = 0;

  if (mode == Sharding::kFull) {
    if (memory::at_least_1(w.plan.pp) > 1 || !w.knobs.reshard_after_forward) {
      // With PP, FSDP keeps the stage's weights gathered across
      // micro-batches and accumulates unsharded gradients, upcast to the fp32
      // reduce dtype, until the last one (torchtitan + FSDP2). Without
      // resharding after forward every unit stays gathered from its forward
      // to its backward: the stage's weights at the peak.
      s.weights += params.total() * wb;
      s.grads += memory::at_least_1(w.plan.pp) > 1 ? params.total() * 4 : 0;
    } else {
      // Two FSDP units gathered at the peak (the one running + the one
      // prefetched): at the loss, the output layer and the last block.
      // Gathered weights + unsharded grads before the fp32 reduce-scatter.
      const double layer = memory::largest_layer_params(w.model, w.plan);
      const double output_layer = static_cast<double>(w.model.vocab) * w.model.hidden / memory::at_least_1(w.plan.tp);
      const double gathered = layer + std::max(layer, output_layer);
      s.weights += gathered * wb;
      s.grads += gathered * 4;
      s.transient = gathered * (wb + 4);
    }
  } else if (fp8 && !w.knobs.fp8_param_gather) {
    // FP8 weight + transpose caches beside the bf16 weights (TE#1261, TE#1429).
    s.weights += params.linear * 2;
  }
}

// Layers of a stage whose saved activations stay on the GPU under activation
// offload: the offloaded ones leave, except the two being moved (the loading
// horizon of Megatron's and SMP's offload).
double kept_layers(int layers, int offload_layers) {
  if (offload_layers == 0) return layers;
  const int off = offload_layers < 0 ? layers : std::min(offload_layers, layers);
  return layers - off + std::min(off, 2);
}

// In-flight activations of one stage (§3.2-3.3).
void add_activations(const Workload& w, bool first_stage, bool last_stage, StageMemory& s) {
  using memory::Recompute;
  const Recompute mode = memory::recompute_mode(w.knobs, w.plan);
  const memory::StageLayers layers = memory::stage_layers(w.model, w.plan.pp, first_stage);
  const double dense_kept = memory::layer_activation_bytes(w, false, mode == Recompute::kFull ? Recompute::kNone : mode);
  const double moe_kept = memory::layer_activation_bytes(w, true, mode == Recompute::kFull ? Recompute::kNone : mode);
  const double scores_kept = memory::attention_score_bytes(w, mode == Recompute::kFull ? Recompute::kNone : mode);

  const double keep = layers.total() > 0 ? kept_layers(layers.total(), w.knobs.offload_layers) / layers.total() : 1;
  double per_microbatch = (layers.dense * dense_kept + layers.moe * moe_kept) * keep;
  double scores = layers.total() * scores_kept * keep;
  double working_set = 0, working_scores = 0;
  if (mode == Recompute::kFull) {
    // Recompute the first r layers of the stage (block method); each keeps
    // only its input; one layer's activations are rebuilt at a time.
    const int n = w.knobs.recompute_num_layers;
    const int recomputed = n <= 0 ? layers.total() : std::min(n, layers.total());
    const int dense_re = std::min(recomputed, layers.dense);
    const int moe_re = recomputed - dense_re;
    const double input = memory::layer_activation_bytes(w, false, Recompute::kFull);
    per_microbatch -= (dense_re * dense_kept + moe_re * moe_kept) * keep;
    per_microbatch += recomputed * input;
    scores -= recomputed * scores_kept * keep;
    working_set = recomputed > 0 ? (layers.moe > 0 ? std::max(dense_kept, moe_kept) : dense_kept) : 0;
    working_scores = recomputed > 0 ? scores_kept : 0;
  }
  s.inflight = memory::inflight_microbatches(w.plan.pp, w.plan.vp, memory::micro_batches_per_step(w.plan), first_stage);
  s.activations = s.inflight * per_microbatch + working_set;
  s.scores = s.inflight * scores + working_scores;
  if (first_stage) s.activations += memory::embedding_stage_bytes(w, s.inflight);
  if (last_stage) s.activations += memory::logits_bytes(w);
}

StageMemory stage_memory(const Workload& w, bool first_stage, bool last_stage) {
  StageMemory s;
  add_model_states(w, memory::gpu_params(w.model, w.plan, first_stage, last_stage), s);
  add_activations(w, first_stage, last_stage, s);
  s.overhead = memory::fixed_overhead_bytes(w);
  s.graphs = memory::cuda_graph_bytes(w);
  s.buffers = memory::deepep_buffer_bytes(w);
  s.fragmentation = memory::fragmentation_fraction();
  return s;
}

const char* recompute_name(memory::Recompute r) {
  switch (r) {
    case memory::Recompute::kNone: return "none";
    case memory::Recompute::kSelective: return "selective";
    case memory::Recompute::kFull: return "full (only layer inputs kept)";
  }
  return "";
}

std::string module_names(unsigned modules) {
  const std::string out = recompute_module::text_of(modules, ", ");
  return out.empty() ? "nothing" : out;
}

// printf into a std::string (notes are short).
template <typename... Args>
std::string printf_string(const char* pattern, Args... args) {
  char buf[320];
  std::snprintf(buf, sizeof buf, pattern, args...);
  return buf;
}

}  // namespace

MemoryParts memory_parts(const Workload& w) {
  MemoryParts m;
  m.pipelined = memory::at_least_1(w.plan.pp) > 1;
  m.first = stage_memory(w, true, !m.pipelined);
  m.last = m.pipelined ? stage_memory(w, false, true) : m.first;
  return m;
}

MemoryBreakdown memory_breakdown(const StageMemory& s, const MemoryFactors& f) {
  MemoryBreakdown b;
  b.weights_gib = s.weights * f.states / kBytesPerGiB;
  b.gradients_gib = s.grads * f.states / kBytesPerGiB;
  b.optimizer_gib = s.optimizer * f.states / kBytesPerGiB;
  const double churn = s.activations * f.activations + s.transient * f.transient + s.scores * f.scores;
  b.activations_gib = (s.activations * f.activations + s.scores * f.scores) / kBytesPerGiB;
  // The gathered FSDP units are counted in weights and gradients; as
  // transient buffers they add only to what churns.
  b.peak_allocated_gib = b.weights_gib + b.gradients_gib + b.optimizer_gib + b.activations_gib;
  b.fragmentation_gib = s.fragmentation * f.fragmentation * churn / kBytesPerGiB;
  b.peak_reserved_gib = b.peak_allocated_gib + b.fragmentation_gib;
  b.overhead_gib = (s.overhead * f.overhead + s.graphs * f.graphs + s.buffers * f.buffers) / kBytesPerGiB;
  b.total_gib = (b.peak_reserved_gib + b.overhead_gib) * f.memory;
  return b;
}

void add_memory_notes(const Workload& w, const MemoryParts& parts, bool first_wins, double other_total,
                      const MemoryFactors& f, double hbm_gib, MemoryBreakdown& b) {
  const StageMemory& s = first_wins ? parts.first : parts.last;
  const memory::ShardGroups groups = memory::shard_groups(w.plan);
  const memory::Sharding mode = memory::sharding_mode(w.knobs, w.plan);
  std::string states = printf_string("model states: %s over %g ranks", sharding_name(mode), groups.dense);
  if (w.model.is_moe()) states += printf_string("; routed experts over %g expert-DP ranks", groups.expert);
  const bool fp32 = w.plan.precision.size() == 4 && contains_lower(w.plan.precision, "fp32");
  b.notes.push_back(states + (fp32                   ? "; fp32 weights and grads, Adam m + v"
                               : w.knobs.grads_fp32 ? "; fp32 gradient buffers, Adam master + m + v"
                                                    : "; bf16 gradient buffers, Adam master + m + v"));
  if (mode == memory::Sharding::kFull && !w.knobs.reshard_after_forward && w.plan.pp <= 1)
    b.notes.push_back("fsdp: units stay gathered from forward to backward (no reshard after forward)");
  if (w.knobs.param_offload) b.notes.push_back("fsdp: parameters, gradients and optimizer state offloaded to the CPU");
  const memory::Recompute rc = memory::recompute_mode(w.knobs, w.plan);
  std::string recompute = recompute_name(rc);
  if (rc == memory::Recompute::kSelective)
    recompute += w.knobs.per_op_selective ? " (per-op: every other matmul output)"
                                          : " (" + module_names(w.knobs.recompute_modules) + ")";
  b.notes.push_back(printf_string("recompute: %s; %s", recompute.c_str(),
                                  w.knobs.flash_attention() ? "flash attention (no s^2 scores)"
                                                            : "s^2 attention scores stored"));
  if (w.knobs.offload_layers != 0)
    b.notes.push_back(printf_string("activation offload: %s of the stage's layers to the CPU",
                                    w.knobs.offload_layers < 0 ? "all" : std::to_string(w.knobs.offload_layers).c_str()));
  if (parts.pipelined) {
    b.notes.push_back(printf_string("activations: %s: this stage holds %.2f micro-batches' worth of its layers",
                                    w.plan.vp > 1 ? "interleaved 1F1B" : "1F1B", s.inflight));
    b.notes.push_back(printf_string("most loaded GPU: %s (%.1f GiB; the other end of the pipeline needs %.1f GiB)",
                                    first_wins ? "first stage, with the embedding" : "last stage, with the logits",
                                    b.total_gib, other_total));
  }
  if (!first_wins || !parts.pipelined) {
    b.notes.push_back(w.knobs.loss_fp32 ? "loss: bf16 logits + fp32 copy + fp32 gradient (10 B per token and vocab entry / TP)"
                                        : "loss: bf16 logits and their bf16 gradient (4 B per token and vocab entry / TP)");
  }
  if (memory::fp8_enabled(w)) {
    const char* weights = "bf16 weights, FP8 casts made per layer";
    if (w.knobs.fp8_param_gather) weights = "GEMM weights kept in FP8 only";
    else if (mode != memory::Sharding::kFull) weights = "FP8 weight + transpose caches beside the bf16 weights";
    b.notes.push_back(printf_string("fp8: %s; linear-layer inputs stored in FP8", weights));
  }
  if (w.knobs.optimizer_cpu_offload > 0) {
    b.notes.push_back(printf_string("optimizer: %.0f%% of the state on the CPU", 100 * w.knobs.optimizer_cpu_offload));
  }
  if (s.graphs * f.graphs > 0) b.notes.push_back(printf_string("cuda graphs: %.1f GiB of graph pools", s.graphs * f.graphs / kBytesPerGiB));
  if (s.buffers * f.buffers > 0) b.notes.push_back(printf_string("deepep: %.1f GiB of dispatch buffers", s.buffers * f.buffers / kBytesPerGiB));
  b.notes.push_back(printf_string("fragmentation: %.0f%% of activations and transient buffers%s",
                                  100 * s.fragmentation * f.fragmentation,
                                  w.knobs.expandable_segments() ? " (expandable segments)" : ""));
  if (f.memory != 1) b.notes.push_back(printf_string("memory: x%.2f on this cluster", f.memory));
  if (hbm_gib > 0 && b.total_gib > hbm_gib)
    b.notes.push_back(printf_string("exceeds HBM: %.1f GiB needed, %.1f GiB available", b.total_gib, hbm_gib));
}

MemoryBreakdown worst_stage(const Workload& w, const MemoryParts& parts, const MemoryFactors& f, double hbm_gib,
                            bool with_notes) {
  if (w.model.hidden <= 0 || w.model.layers <= 0) {
    MemoryBreakdown b;
    b.notes.push_back("model dimensions unknown: no memory estimate");
    return b;
  }
  // The first stage holds the most in-flight micro-batches and the embedding;
  // the last holds the logits. Report whichever needs more (§3.3).
  MemoryBreakdown first = memory_breakdown(parts.first, f);
  MemoryBreakdown last = parts.pipelined ? memory_breakdown(parts.last, f) : first;
  const bool first_wins = !parts.pipelined || first.total_gib >= last.total_gib;
  MemoryBreakdown& worst = first_wins ? first : last;
  if (with_notes) add_memory_notes(w, parts, first_wins, first_wins ? last.total_gib : first.total_gib, f, hbm_gib, worst);
  return worst;
}

MemoryFactors memory_factors_of(const Knobs& k) {
  // The simulator's own effects of the choices on memory (the same as the
  // step model applies: nominal_effects in step_model.cpp).
  MemoryFactors f;
  f.graphs = k.cuda_graphs() ? (k.is(Choice::CudaGraphs, cuda_graphs::kFull) ? 1.3 : 1.0) : 0.0;
  f.buffers = k.deepep() ? 1.0 : 0.0;
  f.scores = k.flash_attention() ? 0.0 : 1.0;
  f.fragmentation = k.expandable_segments() ? 0.3 : 1.0;
  return f;
}

MemoryBreakdown estimate_memory(const Workload& w, double hbm_gib, bool with_notes) {
  const MemoryParts parts = memory_parts(w);
  MemoryFactors f = memory_factors_of(w.knobs);
  if (w.knobs.is(Choice::Nvls, 0) && parts.first.overhead > 0)
    f.overhead = 1 + memory::nvls_buffer_bytes(w) / parts.first.overhead;
  return worst_stage(w, parts, f, hbm_gib, with_notes);
}

}  // namespace attune::sim
