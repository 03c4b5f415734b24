// Tests of the MemoryModel: each term against a hand calculation on toy
// models, and the whole estimate against published measured peaks (Llama 3
// 8B / 70B / 405B under Megatron-Bridge and torchtitan).
#include "attune/sim/memory_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "../../src/sim/memory_terms.h"

namespace attune::sim {
namespace {

using namespace memory;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kH100Gib = 80e9 / kGiB;         // 80 GB H100
constexpr double kH100Of96GbGib = 96e9 / kGiB;  // Meta's 96 GB H100 (torchtitan benchmarks)

void expect_close(double actual, double expected) {
  EXPECT_NEAR(actual, expected, 1e-9 * std::max(1.0, std::abs(expected)));
}

// ---- Models and layouts ------------------------------------------------------

recipe::ModelSpec llama(int hidden, int layers, int heads, int ffn) {
  recipe::ModelSpec m;
  m.hidden = hidden;
  m.layers = layers;
  m.heads = heads;
  m.kv_heads = 8;
  m.ffn = ffn;
  m.vocab = 128256;
  return m;
}
recipe::ModelSpec llama3_8b() { return llama(4096, 32, 32, 14336); }
recipe::ModelSpec llama3_70b() { return llama(8192, 80, 64, 28672); }
recipe::ModelSpec llama3_405b() { return llama(16384, 126, 128, 53248); }

// h 64, 4 heads of 16 (q 64), 2 KV heads (kv 32), SwiGLU ffn 128, vocab 1000.
recipe::ModelSpec toy_dense() {
  recipe::ModelSpec m;
  m.layers = 4;
  m.hidden = 64;
  m.heads = 4;
  m.kv_heads = 2;
  m.ffn = 128;
  m.vocab = 1000;
  return m;
}

// The toy with 8 routed experts of width 32 (top 2), one shared expert, and
// a leading dense layer.
recipe::ModelSpec toy_moe() {
  recipe::ModelSpec m = toy_dense();
  m.experts = 8;
  m.top_k = 2;
  m.moe_ffn = 32;
  m.shared_experts = 1;
  m.dense_layers = 1;
  return m;
}

struct Layout {
  int tp = 1, pp = 1, vp = 1, cp = 1, ep = 1, dp = 1, mbs = 1;
  long long gbs = 0, seq = 0;
};

Workload workload(const recipe::ModelSpec& m, const Layout& l) {
  Workload w;
  w.model = m;
  recipe::Plan& p = w.plan;
  p.tp = l.tp;
  p.pp = l.pp;
  p.vp = l.vp;
  p.cp = l.cp;
  p.ep = l.ep;
  p.dp = l.dp;
  p.mbs = l.mbs;
  p.gbs = l.gbs > 0 ? l.gbs : static_cast<long long>(l.mbs) * l.dp;
  p.grad_accum = p.gbs / (static_cast<long long>(l.mbs) * l.dp);
  p.seq_len = l.seq;
  p.world = l.tp * l.pp * l.cp * l.dp;
  return w;
}

// Toy attention, MLP and per-layer norm weights, by hand.
constexpr double kToyAttention = 64.0 * (64 + 32 + 32) + 64.0 * 64;  // QKV + output projection
constexpr double kToyMlp = 3.0 * 64 * 128;                           // gate, up, down
constexpr double kToyNorms = 2.0 * 64;
constexpr double kToyEmbedding = 1000.0 * 64;

// ---- Parameters ---------------------------------------------------------------

TEST(MemoryParams, AttentionAndMlpOfAGqaLayer) {
  expect_close(attention_params(toy_dense()), kToyAttention);
  EXPECT_EQ(toy_dense().mlp_matrices(), 3);
  recipe::ModelSpec gelu = toy_dense();
  gelu.activation = "gelu";
  EXPECT_EQ(gelu.mlp_matrices(), 2);
}

TEST(MemoryParams, MlaAttentionUsesLatentDims) {
  recipe::ModelSpec m = toy_dense();
  m.q_lora_rank = 16;
  m.kv_lora_rank = 8;
  m.qk_nope_head_dim = 12;
  m.qk_rope_head_dim = 4;
  m.v_head_dim = 10;
  const double q = 64.0 * 16 + 16.0 * 4 * (12 + 4);       // down + up
  const double kv = 64.0 * (8 + 4) + 8.0 * 4 * (12 + 10);  // down (+ shared rope key) + up to K_nope and V
  const double out = 4.0 * 10 * 64;
  expect_close(attention_params(m), q + kv + out);
}

TEST(MemoryParams, TpAndPpShardLayersEmbeddingsSitAtTheEnds) {
  recipe::Plan p;
  p.tp = 2;
  p.pp = 2;
  const GpuParams first = gpu_params(toy_dense(), p, true, false);
  const GpuParams last = gpu_params(toy_dense(), p, false, true);
  const double two_layers_tp = 2 * (kToyAttention + kToyMlp) / 2;
  expect_close(first.linear, two_layers_tp);
  expect_close(first.dense, two_layers_tp + 2 * kToyNorms + kToyEmbedding / 2);
  expect_close(last.dense, two_layers_tp + 2 * kToyNorms + 64 + kToyEmbedding / 2);  // + final norm, output layer
  EXPECT_EQ(first.expert, 0);
}

TEST(MemoryParams, TiedEmbeddingsAreOneCopyOnASingleStage) {
  recipe::ModelSpec m = toy_dense();
  m.tied_embeddings = true;
  recipe::Plan p;
  const GpuParams all = gpu_params(m, p, true, true);
  expect_close(all.dense, 4 * (kToyAttention + kToyMlp + kToyNorms) + 64 + kToyEmbedding);
  p.pp = 2;  // split: the last stage keeps its own copy for the output layer
  expect_close(gpu_params(m, p, false, true).dense, 2 * (kToyAttention + kToyMlp + kToyNorms) + 64 + kToyEmbedding);
}

TEST(MemoryParams, RoutedExpertsAreShardedByEpAndEtp) {
  const recipe::ModelSpec m = toy_moe();
  recipe::Plan p;
  p.ep = 4;
  const double routed_per_layer = 8 * 3.0 * 64 * 32;
  const double shared_per_layer = 3.0 * 64 * 32;
  const double router = 64.0 * 8;
  const GpuParams g = gpu_params(m, p, true, true);
  // Layer 0 is dense; layers 1-3 are MoE.
  expect_close(g.expert, 3 * routed_per_layer / 4);
  expect_close(g.dense, 4 * kToyAttention + kToyMlp + 3 * shared_per_layer + 4 * kToyNorms + 3 * router + 64 +
                            2 * kToyEmbedding);
  p.etp = 2;
  expect_close(gpu_params(m, p, true, true).expert, 3 * routed_per_layer / 8);
}

TEST(MemoryParams, LeadingDenseLayersLandOnTheFirstStage) {
  recipe::ModelSpec m = toy_moe();
  m.dense_layers = 3;
  const StageLayers first = stage_layers(m, 2, true);
  const StageLayers last = stage_layers(m, 2, false);
  EXPECT_EQ(first.dense, 2);
  EXPECT_EQ(first.moe, 0);
  EXPECT_EQ(last.dense, 1);
  EXPECT_EQ(last.moe, 1);
  EXPECT_EQ(stage_layers(llama3_405b(), 8, true).total(), 16);  // ceil(126 / 8)
}

// ---- Model states ----------------------------------------------------------------

TEST(MemoryStates, BytesPerParamUnderEachSharding) {
  // d = 4: 18 B plain; 6 + 12/d distributed optimizer; ZeRO-2 2 + 16/d; ZeRO-3 18/d.
  EXPECT_DOUBLE_EQ(state_bytes(Sharding::kNone, 4, 2, false).total(), 18);
  EXPECT_DOUBLE_EQ(state_bytes(Sharding::kOptimizer, 4, 2, false).total(), 6 + 12.0 / 4);
  EXPECT_DOUBLE_EQ(state_bytes(Sharding::kOptimizerAndGrads, 4, 2, false).total(), 2 + 16.0 / 4);
  EXPECT_DOUBLE_EQ(state_bytes(Sharding::kFull, 4, 2, false).total(), 18.0 / 4);
  // fp32 training: 4 + 4 + Adam m, v (no master copy) = 16 (§3.1 table).
  EXPECT_DOUBLE_EQ(state_bytes(Sharding::kNone, 4, 4, true).total(), 16);
  EXPECT_DOUBLE_EQ(state_bytes(Sharding::kOptimizer, 4, 4, true).total(), 8 + 8.0 / 4);
}

TEST(MemoryStates, ShardingModeFromKnobsAndPlan) {
  Knobs k;
  recipe::Plan p;
  EXPECT_EQ(sharding_mode(k, p), Sharding::kOptimizer);  // distributed optimizer by default
  k.distributed_optimizer = false;
  EXPECT_EQ(sharding_mode(k, p), Sharding::kNone);
  k.zero_stage = 2;
  EXPECT_EQ(sharding_mode(k, p), Sharding::kOptimizerAndGrads);
  k.zero_stage = 3;
  EXPECT_EQ(sharding_mode(k, p), Sharding::kFull);
  k.zero_stage = 0;
  p.dp_shard = 8;
  EXPECT_EQ(sharding_mode(k, p), Sharding::kFull);
}

TEST(MemoryStates, ShardGroupsCountCpAndRegroupExperts) {
  recipe::Plan p;
  p.tp = 2;
  p.cp = 2;
  p.dp = 4;
  p.ep = 4;
  EXPECT_DOUBLE_EQ(shard_groups(p).dense, 8);   // DP x CP
  EXPECT_DOUBLE_EQ(shard_groups(p).expert, 4);  // (TP x CP x DP) / (EP x ETP)
  p.dp_shard = 2;  // HSDP: the FSDP group, not all replicas
  EXPECT_DOUBLE_EQ(shard_groups(p).dense, 4);
}

// Every parameter of the toy on a single stage (untied embeddings).
constexpr double kToyParams = 4 * (kToyAttention + kToyMlp + kToyNorms) + 64 + 2 * kToyEmbedding;

TEST(MemoryStates, ToyModelStatesUnderEachMode) {
  Workload w = workload(toy_dense(), {.dp = 4, .seq = 16});
  // Default: bf16 gradient buffers, as the performance recipes run.
  expect_close(estimate_memory(w, 0).gradients_gib * kGiB, 2 * kToyParams);
  w.knobs.grads_fp32 = true;  // grad_reduce_in_fp32: the 6 + 12/d rule
  MemoryBreakdown b = estimate_memory(w, 0);
  expect_close(b.weights_gib * kGiB, 2 * kToyParams);
  expect_close(b.gradients_gib * kGiB, 4 * kToyParams);
  expect_close(b.optimizer_gib * kGiB, 12 * kToyParams / 4);

  w.knobs.distributed_optimizer = false;
  expect_close(estimate_memory(w, 0).optimizer_gib * kGiB, 12 * kToyParams);

  w.knobs.zero_stage = 2;
  b = estimate_memory(w, 0);
  expect_close(b.gradients_gib * kGiB, 4 * kToyParams / 4);
  expect_close(b.optimizer_gib * kGiB, 12 * kToyParams / 4);

  // FSDP: everything / 4, plus two gathered units at the peak: a layer and
  // the (larger) output layer, as bf16 weights and fp32 unsharded grads.
  w.knobs.zero_stage = 3;
  b = estimate_memory(w, 0);
  const double gathered = (kToyAttention + kToyMlp + kToyNorms) + kToyEmbedding;
  expect_close(b.weights_gib * kGiB, 2 * kToyParams / 4 + 2 * gathered);
  expect_close(b.gradients_gib * kGiB, 4 * kToyParams / 4 + 4 * gathered);
  expect_close(b.optimizer_gib * kGiB, 12 * kToyParams / 4);
}

TEST(MemoryStates, OptimizerOffloadAndFp8Weights) {
  Workload w = workload(toy_dense(), {.dp = 4, .seq = 16});
  w.knobs.optimizer_cpu_offload = 0.25;
  expect_close(estimate_memory(w, 0).optimizer_gib * kGiB, 0.75 * 12 * kToyParams / 4);

  w.knobs.optimizer_cpu_offload = 0;
  w.knobs.fp8 = true;  // TE caches an FP8 weight and its transpose per GEMM weight
  const double linear = 4 * (kToyAttention + kToyMlp);
  expect_close(estimate_memory(w, 0).weights_gib * kGiB, 2 * kToyParams + 2 * linear);
  w.knobs.fp8_param_gather = true;  // GEMM weights stored in FP8 only
  expect_close(estimate_memory(w, 0).weights_gib * kGiB, 2 * kToyParams - linear);
}

TEST(MemoryStates, ExpertOptimizerShardsOverExpertDp) {
  Workload w = workload(toy_moe(), {.ep = 4, .dp = 8, .seq = 16});
  const GpuParams g = gpu_params(w.model, w.plan, true, true);
  const MemoryBreakdown b = estimate_memory(w, 0);
  // Dense state over DP = 8; experts over (1 x 1 x 8) / 4 = 2 expert-DP ranks.
  expect_close(b.optimizer_gib * kGiB, 12 * g.dense / 8 + 12 * g.expert / 2);
}

// ---- Activations ---------------------------------------------------------------

TEST(MemoryActivations, ModernLayerIs34hForLlama3_8b) {
  // 8h + 4q + 4kv + 6f = 139,264 B = 34 h (§3.2).
  const TokenBytes t = layer_token_bytes(llama3_8b(), false, 0u, false, 1);
  EXPECT_DOUBLE_EQ(t.total(), 8 * 4096 + 4 * 4096 + 4 * 1024 + 6 * 14336);
  EXPECT_DOUBLE_EQ(t.total(), 34 * 4096);
  EXPECT_DOUBLE_EQ(t.sequence_parallel_only, 8 * 4096);
}

TEST(MemoryActivations, SelectiveDropsMlpIntermediatesFp8StoresLinearInputs) {
  constexpr unsigned kMlpDropped = recompute_module::kMlp;
  const recipe::ModelSpec m = llama3_8b();
  // Recomputing the MLP (Megatron's `mlp` module, most of torchtitan's
  // per-op policy) drops its input and intermediates.
  EXPECT_DOUBLE_EQ(layer_token_bytes(m, false, kMlpDropped, false, 1).total(), 8 * 4096 + 4 * 4096 + 4 * 1024);
  // FP8: QKV, FC1 and FC2 inputs at 1 B; the out-projection's FP8 input is a
  // copy beside flash attention's bf16 output.
  EXPECT_DOUBLE_EQ(layer_token_bytes(m, false, 0u, true, 1).total(),
                   34 * 4096 - 4096 - 4096 - 14336 + 4096);
}

TEST(MemoryActivations, SelectiveMlaRebuildsQkvFromLatents) {
  constexpr unsigned kMlpDropped = recompute_module::kMlp | recompute_module::kMlaUpProj;
  recipe::ModelSpec m = toy_dense();
  m.q_lora_rank = 16;
  m.kv_lora_rank = 8;
  m.qk_nope_head_dim = 12;
  m.qk_rope_head_dim = 4;
  m.v_head_dim = 10;
  const double qkv = 2 * (4 * 16.0 + 4 * 16.0 + 4 * 10.0);
  const double mlp = 4 * 128.0 + 2 * 128.0;
  EXPECT_DOUBLE_EQ(layer_token_bytes(m, false, 0u, false, 1).total() -
                       layer_token_bytes(m, false, kMlpDropped, false, 1).total(),
                   qkv + mlp);
}

TEST(MemoryActivations, ScalesWithTpSpCpAndMicroBatch) {
  Workload w = workload(llama3_8b(), {.seq = 8192});
  const double one = layer_activation_bytes(w, false, Recompute::kNone);
  expect_close(one, 8192 * 34.0 * 4096);

  w.plan.tp = 4;  // TP with SP: everything / t
  expect_close(layer_activation_bytes(w, false, Recompute::kNone), one / 4);
  w.knobs.sequence_parallel = false;  // TP alone: norms and layer inputs stay whole
  expect_close(layer_activation_bytes(w, false, Recompute::kNone), 8192 * (8 * 4096 + 26.0 * 4096 / 4));
  w.knobs.sequence_parallel = true;
  w.plan.cp = 2;
  expect_close(layer_activation_bytes(w, false, Recompute::kNone), one / 8);
  w.plan.mbs = 3;
  expect_close(layer_activation_bytes(w, false, Recompute::kNone), 3 * one / 8);
}

TEST(MemoryActivations, FullRecomputeKeepsTheLayerInput) {
  Workload w = workload(llama3_8b(), {.tp = 2, .seq = 8192});
  expect_close(layer_activation_bytes(w, false, Recompute::kFull), 2.0 * 8192 * 4096 / 2);
  w.knobs.sequence_parallel = false;
  expect_close(layer_activation_bytes(w, false, Recompute::kFull), 2.0 * 8192 * 4096);
}

TEST(MemoryActivations, WithoutFlashAttentionTheScoresAreStored) {
  Workload w = workload(llama3_8b(), {.tp = 2, .mbs = 2, .seq = 4096});
  w.knobs.set(Choice::Attention, attention::kUnfused);
  // 5 a s^2 b / t (Korthikanti Table 2); recomputing core attention drops it,
  // recomputing only the MLP does not.
  expect_close(attention_score_bytes(w, Recompute::kNone), 5.0 * 32 * 4096 * 4096 * 2 / 2);
  w.knobs.recompute_modules = recompute_module::kCoreAttn;
  EXPECT_EQ(attention_score_bytes(w, Recompute::kSelective), 0);
  w.knobs.recompute_modules = recompute_module::kMlp;
  expect_close(attention_score_bytes(w, Recompute::kSelective), 5.0 * 32 * 4096 * 4096 * 2 / 2);
  EXPECT_EQ(attention_score_bytes(w, Recompute::kFull), 0);
}

TEST(MemoryActivations, MoeTokensScaleWithTopK) {
  recipe::ModelSpec m = toy_moe();
  const double k2 = layer_token_bytes(m, true, 0u, false, 1).total();
  m.top_k = 4;
  const double k4 = layer_token_bytes(m, true, 0u, false, 1).total();
  // Per extra routed copy: dispatched input 2h + gate/up 4f + FC2 input 2f.
  EXPECT_DOUBLE_EQ(k4 - k2, 2 * (2 * 64.0 + 4 * 32 + 2 * 32));
}

TEST(MemoryActivations, RecomputeModeFromKnobsOrPlan) {
  Knobs k;
  recipe::Plan p;
  EXPECT_EQ(recompute_mode(k, p), Recompute::kNone);
  p.recompute = "full";
  EXPECT_EQ(recompute_mode(k, p), Recompute::kFull);
  k.recompute_granularity = "selective";
  EXPECT_EQ(recompute_mode(k, p), Recompute::kSelective);
}

// ---- Pipeline ------------------------------------------------------------------

TEST(MemoryPipeline, InFlightMicroBatches) {
  EXPECT_DOUBLE_EQ(inflight_microbatches(1, 1, 64, true), 1);
  EXPECT_DOUBLE_EQ(inflight_microbatches(4, 1, 64, true), 4);  // 1F1B: p
  EXPECT_DOUBLE_EQ(inflight_microbatches(4, 1, 2, true), 2);   // fewer micro-batches than stages
  EXPECT_DOUBLE_EQ(inflight_microbatches(4, 1, 64, false), 1);
  EXPECT_DOUBLE_EQ(inflight_microbatches(4, 5, 64, true), 4 * (1 + 3.0 / 20));  // interleaved penalty
  EXPECT_DOUBLE_EQ(inflight_microbatches(4, 5, 64, false), 4 - 3.0 / 5);
  recipe::Plan p;
  p.gbs = 256;
  p.mbs = 2;
  p.dp = 8;
  EXPECT_EQ(micro_batches_per_step(p), 16);
}

TEST(MemoryPipeline, FirstStageHoldsOneModelOfActivations) {
  recipe::ModelSpec m = toy_dense();
  m.vocab = 8;  // small logits: the first stage is the most loaded
  Workload w = workload(m, {.pp = 4, .dp = 1, .gbs = 16, .seq = 32});
  const MemoryBreakdown b = estimate_memory(w, 0);
  // 4 micro-batches x 1 layer, + input ids / positions and embedding output.
  const double layer = 32 * layer_token_bytes(w.model, false, 0u, false, 1).total();
  expect_close(b.activations_gib * kGiB, 4 * layer + 4 * (8.0 * 32 + 32 * 64));
}

TEST(MemoryPipeline, LastStageWinsWhenTheLogitsDominate) {
  recipe::ModelSpec m = toy_dense();
  m.vocab = 2'000'000;
  Workload w = workload(m, {.pp = 2, .dp = 1, .gbs = 8, .seq = 256});
  StageLayers last = stage_layers(m, 2, false);
  const MemoryBreakdown b = estimate_memory(w, 0);
  const double layers = last.total() * 256 * layer_token_bytes(m, false, 0u, false, 1).total();
  const double logits = 4.0 * 256 * 64 + 10.0 * 256 * m.vocab;
  expect_close(b.activations_gib * kGiB, layers + logits);  // one micro-batch in flight on the last stage
  bool named = false;
  for (const auto& n : b.notes) named = named || n.find("last stage") != std::string::npos;
  EXPECT_TRUE(named);
}

TEST(MemoryPipeline, PartialFullRecomputePerStage) {
  Workload w = workload(llama3_8b(), {.pp = 2, .dp = 1, .gbs = 8, .seq = 4096});
  w.knobs.recompute_granularity = "full";
  w.knobs.recompute_num_layers = 4;  // 4 of the stage's 16 layers keep only their input
  const MemoryBreakdown b = estimate_memory(w, 0);
  const double kept = layer_activation_bytes(w, false, Recompute::kNone);
  const double input = layer_activation_bytes(w, false, Recompute::kFull);
  const double embedding = 2 * (8.0 * 4096 + 4096.0 * 4096);
  expect_close(b.activations_gib * kGiB, 2 * (12 * kept + 4 * input) + kept + embedding);
}

// ---- Other consumers -----------------------------------------------------------

TEST(MemoryOverhead, ContextNcclGraphsAndFragmentation) {
  Workload w = workload(toy_dense(), {.tp = 2, .pp = 2, .dp = 2, .seq = 16});
  EXPECT_EQ(communicator_count(w.plan), 4);  // world, TP, PP, DP
  MemoryBreakdown b = estimate_memory(w, 0);
  EXPECT_DOUBLE_EQ(b.overhead_gib, 0.5 + 4 * 0.7);
  expect_close(b.fragmentation_gib, 0.10 * b.activations_gib);
  expect_close(b.total_gib, b.peak_allocated_gib + b.fragmentation_gib + b.overhead_gib);
  w.knobs.set(Choice::CudaGraphs, cuda_graphs::kLayers);
  w.knobs.set(Choice::Expandable, 1);
  b = estimate_memory(w, 0);
  EXPECT_DOUBLE_EQ(b.overhead_gib, 0.5 + 4 * 0.7 + 10);  // PP > 1: graphs of every micro-batch
  expect_close(b.fragmentation_gib, 0.03 * b.activations_gib);
}

TEST(MemoryOverhead, UnknownModelGivesAnEmptyEstimate) {
  const MemoryBreakdown b = estimate_memory(Workload{}, 80);
  EXPECT_EQ(b.total_gib, 0);
  ASSERT_FALSE(b.notes.empty());
}

// ---- Measured anchors (published peaks) -------------------------------------------

// What a source reports: Megatron-Bridge's mem-max-allocated (decimal GB),
// torchtitan's max_reserved (GiB; allocator only, no context or NCCL).
enum class Metric { kBridgeAllocatedBf16Grads, kTorchtitanReserved };

struct Anchor {
  std::string name;
  Workload workload;
  double measured_gib;
  Metric metric;
  double tolerance;
};

// Megatron-Bridge Llama3-70B SFT, FP8 current scaling (FP8 primary weights),
// s4096, MBS 1, GBS 32, no recompute, distributed optimizer.
Workload bridge_70b_sft(int tp, int pp, int dp) {
  Workload w = workload(llama3_70b(), {.tp = tp, .pp = pp, .vp = 5, .dp = dp, .mbs = 1, .gbs = 32, .seq = 4096});
  w.knobs.fp8 = true;
  w.knobs.fp8_param_gather = true;
  return w;
}

// torchtitan: FSDP over the DP ranks, expandable segments (its launcher sets them).
Workload titan(const recipe::ModelSpec& m, const Layout& l, const char* recompute, bool fp8) {
  Workload w = workload(m, l);
  w.plan.dp_shard = l.dp;
  w.knobs.recompute_granularity = recompute;
  w.knobs.per_op_selective = std::string_view(recompute) == "selective";  // torchtitan's SAC is per-op
  w.knobs.fp8 = fp8;
  w.knobs.set(Choice::Expandable, 1);
  return w;
}

std::vector<Anchor> anchors() {
  const Layout t8 = {.dp = 8, .mbs = 2, .seq = 8192};
  const Layout t128 = {.dp = 128, .mbs = 2, .seq = 8192};
  const Layout t70 = {.tp = 8, .dp = 32, .mbs = 16, .seq = 8192};
  // 405B: local batch 32 in 8 micro-batches of 4 (one per stage, torchtitan's default).
  const Layout t405 = {.tp = 8, .pp = 8, .dp = 8, .mbs = 4, .gbs = 256, .seq = 8192};
  Layout t405_interleaved = t405;
  t405_interleaved.vp = 2;
  const auto gb = [](double v) { return v * 1e9 / kGiB; };
  // Default tolerance 20%: the spread between same-recipe runs on different
  // software stacks in §3.5 (torchtitan 8B, 2024 vs 2025) is ~25%, so tighter
  // would fit noise. Wider bands below say why.
  return {
      // Bridge measured with bf16 gradient buffers (grad_reduce_in_fp32=False), which
      // Knobs cannot state: compared with the fp32 main grads at 2 B (see Measure).
      {"70B SFT TP4 PP4 VP5 DP2", bridge_70b_sft(4, 4, 2), gb(58.8), Metric::kBridgeAllocatedBf16Grads, 0.20},
      {"70B SFT TP4 PP8 VP5 DP1", bridge_70b_sft(4, 8, 1), gb(53.2), Metric::kBridgeAllocatedBf16Grads, 0.20},
      {"70B SFT TP8 PP4 VP5 DP1", bridge_70b_sft(8, 4, 1), gb(50.2), Metric::kBridgeAllocatedBf16Grads, 0.20},
      // Eager PyTorch keeps unfused intermediates that compile (and this model) do not.
      {"8B FSDP8 SAC eager", titan(llama3_8b(), t8, "selective", false), 82.4, Metric::kTorchtitanReserved, 0.25},
      {"8B FSDP8 SAC compile", titan(llama3_8b(), t8, "selective", false), 77.0, Metric::kTorchtitanReserved, 0.20},
      {"8B FSDP8 SAC compile fp8", titan(llama3_8b(), t8, "selective", true), 76.8, Metric::kTorchtitanReserved, 0.20},
      {"8B FSDP128 SAC eager", titan(llama3_8b(), t128, "selective", false), 67.0, Metric::kTorchtitanReserved, 0.25},
      {"8B FSDP128 SAC compile", titan(llama3_8b(), t128, "selective", false), 62.0, Metric::kTorchtitanReserved, 0.20},
      {"8B FSDP128 SAC compile fp8", titan(llama3_8b(), t128, "selective", true), 61.8, Metric::kTorchtitanReserved,
       0.20},
      // Known miss (-24..-29%): the Dec-2024 loss kept more fp32 copies of the
      // vocab-parallel logits (131072 tokens x 16032 x 4 B = 7.8 GiB each) than
      // the single copy + gradient modelled, and SP's gathered full-sequence
      // buffers (2 GiB each at lbs 16) are not modelled.
      {"70B FSDP32 TP8 full fp8", titan(llama3_70b(), t70, "full", true), 71.9, Metric::kTorchtitanReserved, 0.30},
      {"70B FSDP32 TP8 full fp8 asyncTP", titan(llama3_70b(), t70, "full", true), 67.6, Metric::kTorchtitanReserved,
       0.30},
      {"405B FSDP8 TP8 PP8 1F1B", titan(llama3_405b(), t405, "full", true), 82.5, Metric::kTorchtitanReserved, 0.20},
      {"405B FSDP8 TP8 PP8 interleaved", titan(llama3_405b(), t405_interleaved, "full", true), 72.7,
       Metric::kTorchtitanReserved, 0.20},
      {"8B H200 FSDP32 SAC fp8", titan(llama3_8b(), {.dp = 32, .mbs = 2, .seq = 8192}, "selective", true), 48.0,
       Metric::kTorchtitanReserved, 0.20},
      {"8B H200 FSDP64 SAC fp8", titan(llama3_8b(), {.dp = 64, .mbs = 2, .seq = 8192}, "selective", true), 47.0,
       Metric::kTorchtitanReserved, 0.20},
      // Qwen3-8B TP2 LoRA (47.5 GB) is not represented: Knobs has no frozen-weight (PEFT) setting.
  };
}

double measure(const MemoryBreakdown& b, Metric metric) {
  if (metric == Metric::kTorchtitanReserved) return b.peak_reserved_gib;
  return b.peak_allocated_gib - b.gradients_gib / 2;  // fp32 main grads -> the bf16 buffer that ran
}

TEST(MemoryAnchors, MeasuredPeaksOfPerfmodelSection3_5) {
  for (const Anchor& a : anchors()) {
    SCOPED_TRACE(a.name);
    const MemoryBreakdown b = estimate_memory(a.workload, 0);
    const double predicted = measure(b, a.metric);
    const double error = predicted / a.measured_gib - 1;
    std::printf("  %-34s predicted %6.1f GiB  measured %6.1f GiB  %+5.1f%%  (allocated %.1f, total %.1f)\n",
                a.name.c_str(), predicted, a.measured_gib, 100 * error, b.peak_allocated_gib, b.total_gib);
    EXPECT_LE(std::abs(error), a.tolerance) << "predicted " << predicted << " GiB, measured " << a.measured_gib;
  }
}

TEST(MemoryAnchors, VirtualStagesBarelyMoveThePeak) {
  // §3.3: VPP 5 -> 10 went 58.8 -> 60.2 GB (+2.4%) on the 70B SFT. The
  // interleaving penalty 1 + (p-1)/(p v) shrinks with v, so the model moves
  // the other way; both stay within a few percent.
  const MemoryBreakdown vp5 = estimate_memory(bridge_70b_sft(4, 4, 2), 0);
  Workload w = bridge_70b_sft(4, 4, 2);
  w.plan.vp = 10;
  const MemoryBreakdown vp10 = estimate_memory(w, 0);
  EXPECT_NEAR(vp10.peak_allocated_gib / vp5.peak_allocated_gib, 1.0, 0.05);
}

// ---- Fits / does not fit ---------------------------------------------------------

TEST(MemoryFit, Llama70bWithoutAnyShardingCannotFitOnOneH100) {
  Workload w = workload(llama3_70b(), {.dp = 8, .mbs = 1, .seq = 8192});
  w.knobs.distributed_optimizer = false;
  w.knobs.grads_fp32 = true;
  const MemoryBreakdown b = estimate_memory(w, kH100Gib);
  EXPECT_GT(b.total_gib, kH100Gib);
  EXPECT_GT(b.weights_gib + b.gradients_gib + b.optimizer_gib, 18 * 70e9 / kGiB);  // 18 B/param alone
  bool flagged = false;
  for (const auto& n : b.notes) flagged = flagged || n.find("exceeds HBM") != std::string::npos;
  EXPECT_TRUE(flagged);
}

TEST(MemoryFit, PublishedRunsFit) {
  // The 70B SFT baseline ran on 80 GB H100s once expandable segments were set.
  Workload sft = bridge_70b_sft(4, 4, 2);
  sft.knobs.set(Choice::Expandable, 1);
  EXPECT_LT(estimate_memory(sft, kH100Gib).total_gib, kH100Gib);
  // torchtitan 405B 3D (FSDP8 TP8 PP8, 1F1B) on 96 GB H100s.
  const Workload titan_405b =
      titan(llama3_405b(), {.tp = 8, .pp = 8, .dp = 8, .mbs = 4, .gbs = 256, .seq = 8192}, "full", true);
  EXPECT_LT(estimate_memory(titan_405b, kH100Of96GbGib).total_gib, kH100Of96GbGib);
  // torchtitan 8B FSDP8 selective AC.
  const Workload titan_8b = titan(llama3_8b(), {.dp = 8, .mbs = 2, .seq = 8192}, "selective", false);
  EXPECT_LT(estimate_memory(titan_8b, kH100Of96GbGib).total_gib, kH100Of96GbGib);
}

}  // namespace
}  // namespace attune::sim
