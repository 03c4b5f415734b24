#include "attune/sim/layout_search.h"

#include <gtest/gtest.h>

#include "attune/recipe/model_spec.h"

namespace attune::sim {
namespace {

// A recipe written for 80 GB: TP4 and full recompute for an 8B model.
Workload over_split_llama3_8b() {
  Workload w;
  w.model = *recipe::find_model_preset("llama3-8b");
  auto& p = w.plan;
  p.gpu = "h200";
  p.nodes = 2;
  p.gpus_per_node = 8;
  p.world = 16;
  p.tp = 4;
  p.dp = 4;
  p.mbs = 1;
  p.gbs = 128;
  p.grad_accum = 32;
  p.seq_len = 8192;
  p.recompute = "full";
  w.knobs.recompute_granularity = "full";
  return w;
}

TEST(LayoutSearch, FindsAFasterLegalLayoutThatKeepsTheObjective) {
  const Workload base = over_split_llama3_8b();
  const Prediction before = predict(base);
  ASSERT_TRUE(before.ok);
  const SearchResult r = search_layouts(base, SearchSpace{}, {});
  ASSERT_FALSE(r.best.empty());
  EXPECT_GT(r.searched, 100);
  EXPECT_GT(r.best.front().prediction.tokens_per_s_per_gpu, 1.1 * before.tokens_per_s_per_gpu);
  for (const auto& c : r.best) {
    const auto& p = c.workload.plan;
    EXPECT_TRUE(c.prediction.ok);
    EXPECT_EQ(p.world, 16);
    EXPECT_EQ(p.gbs, 128);
    EXPECT_EQ(p.seq_len, 8192);
    EXPECT_EQ(p.tp * p.pp * p.cp * p.dp, p.world);
    EXPECT_EQ(p.gbs % (static_cast<long long>(p.mbs) * p.dp), 0);
    EXPECT_EQ(p.grad_accum * p.mbs * p.dp, p.gbs);
    EXPECT_FALSE(c.workload.knobs.fp8);  // numerics stay unless allowed
    // Ranked: the prediction stands as the search made it.
    EXPECT_DOUBLE_EQ(predict(c.workload).tokens_per_s_per_gpu, c.prediction.tokens_per_s_per_gpu);
  }
  for (std::size_t i = 1; i < r.best.size(); ++i) {
    EXPECT_GE(r.best[i - 1].prediction.tokens_per_s_per_gpu * (1 - 0.001 * r.best[i - 1].changes),
              r.best[i].prediction.tokens_per_s_per_gpu * (1 - 0.001 * r.best[i].changes));
  }
}

TEST(LayoutSearch, NothingToSearchLeavesTheBase) {
  const Workload base = over_split_llama3_8b();
  SearchSpace frozen;
  frozen.tp = frozen.pp = frozen.vp = frozen.cp = frozen.ep = frozen.mbs = frozen.recompute = false;
  frozen.sequence_parallel = frozen.distributed_optimizer = frozen.overlap_grad_reduce = false;
  frozen.overlap_param_gather = frozen.tp_comm_overlap = frozen.cuda_graphs = frozen.moe_dispatcher = false;
  const SearchResult r = search_layouts(base, frozen, {});
  EXPECT_EQ(r.searched, 1);
  ASSERT_EQ(r.best.size(), 1u);
  EXPECT_EQ(r.best.front().changes, 0);
}

TEST(LayoutSearch, RefusedValuesAreNeverProposed) {
  const Workload base = over_split_llama3_8b();
  SearchSpace s;
  s.refused_tp = {1, 2};
  s.refused_recompute = {"none"};
  const SearchResult r = search_layouts(base, s, {});
  for (const auto& c : r.best) {
    EXPECT_NE(c.workload.plan.tp, 1);
    EXPECT_NE(c.workload.plan.tp, 2);
    EXPECT_NE(c.workload.knobs.recompute_granularity, "none");
  }
}

TEST(LayoutSearch, Fp8OnlyWhenAllowed) {
  const Workload base = over_split_llama3_8b();
  SearchSpace s;
  s.fp8 = true;
  const SearchResult r = search_layouts(base, s, {});
  ASSERT_FALSE(r.best.empty());
  EXPECT_TRUE(r.best.front().workload.knobs.fp8);  // FP8 GEMMs are faster on H200
}

TEST(LayoutSearch, PerturbationChangesTheAnswer) {
  // A slow NVLink makes TP costlier and slow GEMMs lower the ceiling: the
  // best layout uses no more TP than without them.
  const Workload base = over_split_llama3_8b();
  Perturbation slow;
  slow.nvlink = 0.05;
  slow.gemm = 0.7;
  const SearchResult nominal = search_layouts(base, SearchSpace{}, {});
  const SearchResult perturbed = search_layouts(base, SearchSpace{}, slow);
  ASSERT_FALSE(nominal.best.empty());
  ASSERT_FALSE(perturbed.best.empty());
  EXPECT_LE(perturbed.best.front().workload.plan.tp, nominal.best.front().workload.plan.tp);
  EXPECT_LT(perturbed.best.front().prediction.tokens_per_s_per_gpu,
            nominal.best.front().prediction.tokens_per_s_per_gpu);
}

}  // namespace
}  // namespace attune::sim
