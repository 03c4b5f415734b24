// Memory-model terms: the pieces estimate_memory adds up (parameters per GPU,
// bytes per parameter under each sharding mode, activations per layer and per
// pipeline stage, fixed consumers), exposed so tests can check each one
// against a hand calculation. Internal to src/sim. What each term counts and
// why: docs/simulator.md (memory).
#pragma once

#include "attune/sim/workload.h"

namespace attune::sim::memory {

inline constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

// ---- Parameters (§3.1) ------------------------------------------------------

// Weights of one layer's attention block: QKV and output projections (GQA), or
// the MLA down/up projections when the model uses latent attention.
double attention_params(const recipe::ModelSpec& m);

// Transformer layers of each kind on one pipeline stage. Stages hold
// ceil(L / pp) layers (the most loaded split); DeepSeek-style leading dense
// layers land on the first stage.
struct StageLayers {
  int dense = 0;
  int moe = 0;
  int total() const { return dense + moe; }
};
StageLayers stage_layers(const recipe::ModelSpec& m, int pp, bool first_stage);

// Parameters one GPU of a stage holds after TP / EP / ETP sharding (§3.1
// "Sharding of model states per GPU"), split by the group that shards their
// optimizer state.
struct GpuParams {
  double dense = 0;   // attention, dense MLP, shared experts, norms, routers, embeddings
  double expert = 0;  // routed experts (sharded over expert-DP)
  double linear = 0;  // GEMM weights among both: what FP8 casts and caches
  double total() const { return dense + expert; }
};
GpuParams gpu_params(const recipe::ModelSpec& m, const recipe::Plan& p, bool first_stage, bool last_stage);

// Largest transformer layer's parameters on one GPU (FSDP gathers layer by layer).
double largest_layer_params(const recipe::ModelSpec& m, const recipe::Plan& p);

// ---- Model states (§3.1) ----------------------------------------------------

enum class Sharding {
  kNone,               // plain DDP: every state on every DP rank
  kOptimizer,          // distributed optimizer / ZeRO-1
  kOptimizerAndGrads,  // ZeRO-2
  kFull,               // ZeRO-3 / FSDP full shard
};
Sharding sharding_mode(const Knobs& k, const recipe::Plan& p);

// Ranks the model states of dense and of expert parameters are sharded over:
// DP x CP for dense weights (CP ranks hold the same weights), or the FSDP
// group (dp_shard x CP) when one is set; world / (PP x EP x ETP) for experts.
struct ShardGroups {
  double dense = 1;
  double expert = 1;
};
ShardGroups shard_groups(const recipe::Plan& p);

// Bytes per parameter on one GPU. weight_bytes is 2 (bf16), 1 (FP8 primary
// weights) or 4 (fp32 training); grads are fp32 main grads; Adam keeps fp32
// master weights + m + v (12 B) — or m + v only (8 B) when weights are fp32.
struct StateBytes {
  double weights = 0;
  double grads = 0;
  double optimizer = 0;
  double total() const { return weights + grads + optimizer; }
};
StateBytes state_bytes(Sharding mode, double shard_ranks, double weight_bytes, bool fp32_weights,
                       double grad_bytes = 4.0);

// ---- Activations (§3.2, §3.3) -----------------------------------------------

enum class Recompute { kNone, kSelective, kFull };
Recompute recompute_mode(const Knobs& k, const recipe::Plan& p);

// Bytes one token leaves stored in one layer for its backward pass, before TP.
// `sequence_parallel_only`: layer inputs and norm outputs, which only sequence
// parallelism splits between TP ranks; `tensor_parallel`: Q/K/V, the attention
// output and MLP intermediates, split by head/column between TP ranks.
struct TokenBytes {
  double sequence_parallel_only = 0;
  double tensor_parallel = 0;
  double total() const { return sequence_parallel_only + tensor_parallel; }
};
// What selective recompute drops (recompute_module bits): the modules it
// re-runs, or for torchtitan's per-op policy the MLP intermediates.
unsigned dropped_by_recompute(const Knobs& k, Recompute mode);

// Flash-attention layer ("modern layer", §3.2): 8h + 4q + 4kv + 6f for a
// bf16 SwiGLU GQA layer. `dropped` (recompute_module bits) leaves out what is
// recomputed: the MLP intermediates (mlp), the experts' FC2 input (moe_act),
// the norm outputs (layernorm), MLA's Q/K/V (mla_up_proj). FP8 halves the
// stored inputs of the linear layers.
TokenBytes layer_token_bytes(const recipe::ModelSpec& m, bool moe_layer, unsigned dropped, bool fp8, int etp);

// Bytes one GPU stores for one layer and one micro-batch.
// kNone / kSelective: the layer's activations; kFull: only the layer input.
double layer_activation_bytes(const Workload& w, bool moe_layer, Recompute mode);
// The s^2 scores an unfused attention kernel would store for one layer and
// one micro-batch (0 when core attention is recomputed).
double attention_score_bytes(const Workload& w, Recompute mode);

// Stage-equivalents of micro-batches a stage holds at its peak (§3.3): the
// first stage min(p, m) under 1F1B, times 1 + (p-1)/(p v) when interleaved;
// the last stage one (1F1B) or p - (p-1)/v (interleaved).
double inflight_microbatches(int pp, int vp, long long micro_batches, bool first_stage);

// Micro-batches per optimizer step per DP rank (grad_accum, or gbs / (mbs dp)).
long long micro_batches_per_step(const recipe::Plan& p);

// Bytes of the loss on the last stage for one micro-batch: the logits and the
// embedding-stage extras (§3.3).
double logits_bytes(const Workload& w);
double embedding_stage_bytes(const Workload& w, double inflight);

// ---- Other consumers (§3.4) -------------------------------------------------

// CUDA context + NCCL communicators, in bytes.
double fixed_overhead_bytes(const Workload& w);
// Process groups with more than one rank that a run communicates over.
int communicator_count(const recipe::Plan& p);
// Of those, the groups of more than two GPUs inside one node NVLS serves.
int nvls_communicator_count(const recipe::Plan& p);
// What turning NVLS off saves (part of the communicators' memory), in bytes.
double nvls_buffer_bytes(const Workload& w);
// CUDA-graph pools when graphs are on: a few GiB, over 10 with PP (§3.4).
double cuda_graph_bytes(const Workload& w);
// DeepEP's dispatch buffers when it dispatches.
double deepep_buffer_bytes(const Workload& w);
// Fraction of allocator-churned memory (activations, transient buffers) held
// as reserved-but-unallocated blocks (without expandable segments).
double fragmentation_fraction();

}  // namespace attune::sim::memory
