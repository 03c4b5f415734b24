#include "attune/sim/step_model.h"

#include <gtest/gtest.h>

namespace attune::sim {
namespace {

recipe::ModelSpec llama3_8b() {
  recipe::ModelSpec m;
  m.name = "llama3-8b";
  m.layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 8;
  m.ffn = 14336;
  m.vocab = 128256;
  return m;
}

Workload workload(int world, int tp, int pp, int cp, int mbs, long long gbs, long long seq, const std::string& gpu = "h100") {
  Workload w;
  w.model = llama3_8b();
  auto& p = w.plan;
  p.gpu = gpu;
  p.world = world;
  p.gpus_per_node = 8;
  p.nodes = (world + 7) / 8;
  p.tp = tp;
  p.pp = pp;
  p.cp = cp;
  p.dp = world / (tp * pp * cp);
  p.mbs = mbs;
  p.gbs = gbs;
  p.seq_len = seq;
  p.grad_accum = gbs / (mbs * p.dp);
  return w;
}

TEST(StepModel, Llama3_8bOnOneH100NodeIsInThePublishedRange) {
  // Published Megatron/NeMo runs: 11-14k tokens/s/GPU on H100 at s=8192 (BF16).
  Prediction p = predict(workload(8, 1, 1, 2, 1, 128, 8192));
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_GT(p.tokens_per_s_per_gpu, 8000);
  EXPECT_LT(p.tokens_per_s_per_gpu, 16000);
  EXPECT_GT(p.mfu, 0.3);
  EXPECT_LT(p.mfu, 0.7);
  const auto& b = p.breakdown;
  const double sum = b.compute_s + b.recompute_s + b.memory_bound_s + b.tp_comm_s + b.cp_comm_s + b.ep_comm_s +
                     b.dp_comm_s + b.pp_comm_s + b.bubble_s + b.optimizer_s + b.offload_s + b.data_s + b.other_s;
  EXPECT_NEAR(sum, p.step_time_s, 1e-12);  // the breakdown explains the whole step
  EXPECT_GT(b.compute_s, 0.5 * p.step_time_s);
}

TEST(StepModel, LeversMoveTheRightParts) {
  Workload base = workload(16, 2, 1, 1, 1, 256, 8192);
  Prediction p0 = predict(base);
  ASSERT_TRUE(p0.ok) << p0.error;
  EXPECT_GT(p0.breakdown.tp_comm_s, 0);

  Workload overlap = base;
  overlap.knobs.set(Choice::TpCommOverlap, 1);
  EXPECT_LT(predict(overlap).breakdown.tp_comm_s, p0.breakdown.tp_comm_s);

  Workload fp8 = base;
  fp8.knobs.fp8 = true;
  EXPECT_LT(predict(fp8).breakdown.compute_s, p0.breakdown.compute_s);

  Workload full = base;
  full.knobs.recompute_granularity = "full";
  Prediction pf = predict(full);
  EXPECT_GT(pf.breakdown.recompute_s, 0.25 * pf.breakdown.compute_s);  // one extra forward: ~1/3
  EXPECT_GT(pf.step_time_s, p0.step_time_s);

  Workload pp = workload(16, 2, 2, 1, 1, 256, 8192);
  Prediction ppp = predict(pp);
  ASSERT_TRUE(ppp.ok) << ppp.error;
  EXPECT_GT(ppp.breakdown.bubble_s, 0);
  Workload interleaved = pp;
  interleaved.plan.vp = 4;
  EXPECT_LT(predict(interleaved).breakdown.bubble_s, ppp.breakdown.bubble_s);

  Workload b200 = base;
  b200.plan.gpu = "b200";
  EXPECT_LT(predict(b200).step_time_s, p0.step_time_s);
}

TEST(StepModel, InvalidLayoutsFailLikeTheFramework) {
  Prediction heads = predict(workload(24, 3, 1, 1, 1, 96, 4096));  // 32 heads, TP 3
  EXPECT_EQ(heads.failure, "invalid_argument");
  EXPECT_NE(heads.error.find("divisible"), std::string::npos);
  Prediction layers = predict(workload(24, 1, 3, 1, 1, 96, 4096));  // 32 layers, PP 3
  EXPECT_EQ(layers.failure, "invalid_argument");
  Prediction batch = predict(workload(8, 1, 1, 1, 3, 100, 4096));  // 100 % (3 * 8)
  EXPECT_EQ(batch.failure, "invalid_argument");
  EXPECT_NE(batch.error.find("global batch size (100)"), std::string::npos);
  Workload unknown = workload(8, 1, 1, 1, 1, 64, 4096, "tpu-v5");
  EXPECT_EQ(predict(unknown).failure, "invalid_argument");
}

TEST(StepModel, MemoryAboveHbmIsAnOom) {
  Workload w = workload(8, 1, 1, 1, 1, 64, 8192);
  w.knobs.distributed_optimizer = false;
  w.model.layers = 80;  // a 70B-sized stack on one GPU per replica
  w.model.hidden = 8192;
  w.model.heads = 64;
  w.model.ffn = 28672;
  Prediction p = predict(w);
  EXPECT_EQ(p.failure, "oom");
  EXPECT_GT(p.memory.total_gib, p.hbm_gib);
}

TEST(GpuSystem, CatalogAndCollectives) {
  const GpuSystem* h100 = find_gpu_system("H100");
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(h100->bf16_tflops, 989);
  EXPECT_NE(find_gpu_system("b200"), nullptr);
  EXPECT_EQ(find_gpu_system("tpu"), nullptr);
  EXPECT_LT(gemm_efficiency(0.5), gemm_efficiency(50));
  EXPECT_DOUBLE_EQ(gemm_efficiency(1000), 1.0);
  const double gib = 1024.0 * 1024 * 1024;
  // A 1 GiB all-reduce over 8 GPUs in a node: 2*7/8 GiB at close to 370 GB/s.
  const double t = collective_seconds(*h100, Collective::AllReduce, gib, 8, false);
  EXPECT_GT(t, 2 * 7.0 / 8 * gib / 370e9);
  EXPECT_LT(t, 1.1 * 2 * 7.0 / 8 * gib / 370e9 + 1e-3);
  EXPECT_GT(collective_seconds(*h100, Collective::AllToAll, gib, 16, true),
            collective_seconds(*h100, Collective::AllToAll, gib, 8, false));
  EXPECT_EQ(collective_seconds(*h100, Collective::AllReduce, gib, 1, false), 0);
}

}  // namespace
}  // namespace attune::sim
