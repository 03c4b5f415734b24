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
  p.etp = 4;
  p.dp = 4;
  p.mbs = 1;
  p.gbs = 128;
  p.grad_accum = 32;
  p.seq_len = 8192;
  p.recompute = "full";
  w.knobs.recompute_granularity = "full";
  w.knobs.set(Choice::MaxConnections, max_connections::k1);
  return w;
}

double score_of(const Workload& w, const Workload& base, const Perturbation& truth) {
  const Prediction p = predict(w, truth, Detail::Numbers);
  if (!p.ok || p.oom_risk > 0) return -1;
  return search_score(p.tokens_per_s_per_gpu, changed_dimensions(w, base));
}

TEST(LayoutSearch, FindsAFasterLegalLayoutThatKeepsTheObjective) {
  const Workload base = over_split_llama3_8b();
  const Prediction before = predict(base);
  ASSERT_TRUE(before.ok);
  const SearchResult r = search_layouts(base, every_setting(base), {});
  ASSERT_FALSE(r.best.empty());
  EXPECT_GT(r.settings, 100000);
  EXPECT_LT(r.evaluated, r.settings / 100);  // the bounds cut nearly everything
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
    EXPECT_GE(search_score(r.best[i - 1].prediction.tokens_per_s_per_gpu, r.best[i - 1].changes),
              search_score(r.best[i].prediction.tokens_per_s_per_gpu, r.best[i].changes));
  }
}

TEST(LayoutSearch, NothingToSearchLeavesTheBase) {
  const Workload base = over_split_llama3_8b();
  SearchSpace frozen;
  frozen.tp = frozen.pp = frozen.vp = frozen.cp = frozen.ep = frozen.mbs = false;
  frozen.sequence_parallel = frozen.distributed_optimizer = false;
  const SearchResult r = search_layouts(base, frozen, {});
  EXPECT_EQ(r.settings, 1);
  ASSERT_EQ(r.best.size(), 1u);
  EXPECT_EQ(r.best.front().changes, 0);
}

TEST(LayoutSearch, RefusedValuesAreNeverProposed) {
  const Workload base = over_split_llama3_8b();
  SearchSpace s = every_setting(base);
  s.refused_tp = {1, 2};
  std::erase_if(s.recompute, [](const RecomputeSetting& r) { return r.granularity == "none"; });
  s.choices[static_cast<int>(Choice::CudaGraphs)] = 0;
  const SearchResult r = search_layouts(base, s, {});
  ASSERT_FALSE(r.best.empty());
  for (const auto& c : r.best) {
    EXPECT_NE(c.workload.plan.tp, 1);
    EXPECT_NE(c.workload.plan.tp, 2);
    EXPECT_NE(c.workload.knobs.recompute_granularity, "none");
    EXPECT_FALSE(c.workload.knobs.cuda_graphs());
  }
}

TEST(LayoutSearch, Fp8OnlyWhenAllowed) {
  const Workload base = over_split_llama3_8b();
  SearchSpace s = every_setting(base);
  EXPECT_FALSE(search_layouts(base, s, {}).best.front().workload.knobs.fp8);
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
  const SearchResult nominal = search_layouts(base, every_setting(base), {});
  const SearchResult perturbed = search_layouts(base, every_setting(base), slow);
  ASSERT_FALSE(nominal.best.empty());
  ASSERT_FALSE(perturbed.best.empty());
  EXPECT_LE(perturbed.best.front().workload.plan.tp, nominal.best.front().workload.plan.tp);
  EXPECT_LT(perturbed.best.front().prediction.tokens_per_s_per_gpu,
            nominal.best.front().prediction.tokens_per_s_per_gpu);
}

// A truth with interactions: a lever that hurts only beside another, one
// that helps only at one layout, a failing combination and more memory.
Perturbation tangled_truth() {
  Perturbation t;
  t.memory = 1.1;
  auto cond = [](Property p, long long v) { return Condition{p, {{v, v}}}; };
  t.effects.push_back({Term::Step, 1.15, {cond(property_of(Choice::CudaGraphs), cuda_graphs::kLayers), cond(property_of(Choice::TpCommOverlap), 1)}, "", 0});
  t.effects.push_back({Term::Attention, 0.7, {cond(property_of(Choice::Attention), attention::kFlash), cond(Property::Tp, 2)}, "", 0});
  t.effects.push_back({Term::Step, 0.9, {cond(property_of(Choice::NcclProto), nccl_proto::kSimple), cond(Property::Recompute, 0)}, "", 0});
  t.failures.push_back({{cond(property_of(Choice::Workers), workers::k0), cond(Property::Mbs, 2)}, FailureKind::Hang, 3, "", "", 0});
  return t;
}

// Exactness on a space small enough to enumerate: every setting predicted,
// none scores above what the search reports.
TEST(LayoutSearch, NoSettingBeatsTheReportedOptimum) {
  const Workload base = over_split_llama3_8b();
  SearchSpace s;
  s.vp = s.ep = false;
  s.max_pp = 2;
  s.max_cp = 2;
  s.max_mbs = 2;
  s.recompute = {recompute_of(base.knobs), RecomputeSetting{"none", 0, recompute_module::kCoreAttn},
                 RecomputeSetting{"selective", 0, recompute_module::kCoreAttn | recompute_module::kMlp}};
  auto allow = [&](Choice c, std::initializer_list<std::uint8_t> values) {
    for (auto v : values) s.choices[static_cast<int>(c)] |= 1u << v;
  };
  allow(Choice::Attention, {attention::kFused, attention::kFlash, attention::kSdpa});
  allow(Choice::CudaGraphs, {cuda_graphs::kNone, cuda_graphs::kLayers});
  allow(Choice::NcclProto, {nccl_proto::kAuto, nccl_proto::kSimple});
  allow(Choice::Workers, {workers::k0, workers::k2});
  allow(Choice::TpCommOverlap, {0, 1});
  allow(Choice::Expandable, {0, 1});
  const Perturbation truth = tangled_truth();
  const SearchResult found = search_layouts(base, s, truth, 4);
  ASSERT_FALSE(found.best.empty());
  const double best = score_of(found.best.front().workload, base, truth);

  double brute = -1;
  long long settings = 0;
  Workload w = base;
  for (int tp : {1, 2, 4, 8}) {
    for (int pp : {1, 2}) {
      for (int cp : {1, 2}) {
        for (int mbs : {1, 2}) {
          const int dp = 16 / (tp * pp * cp);
          if (dp < 1 || 128 % (mbs * dp) != 0) continue;
          for (const RecomputeSetting& rc : s.recompute) {
            for (bool sp : tp > 1 ? std::vector<bool>{true, false} : std::vector<bool>{base.knobs.sequence_parallel}) {
              for (bool dopt : {true, false}) {
                for (std::uint32_t combo = 0; combo < 3 * 2 * 2 * 2 * 2 * 2; ++combo) {
                  w = base;
                  w.plan.tp = w.plan.etp = tp;
                  w.plan.pp = pp;
                  w.plan.cp = cp;
                  w.plan.mbs = mbs;
                  w.plan.dp = dp;
                  w.plan.grad_accum = 128 / (mbs * dp);
                  apply(rc, w);
                  w.knobs.sequence_parallel = sp;
                  w.knobs.distributed_optimizer = dopt;
                  std::uint32_t x = combo;
                  const std::uint8_t kernels[] = {attention::kFused, attention::kFlash, attention::kSdpa};
                  w.knobs.set(Choice::Attention, kernels[x % 3]);
                  x /= 3;
                  w.knobs.set(Choice::CudaGraphs, x % 2 ? cuda_graphs::kLayers : cuda_graphs::kNone);
                  x /= 2;
                  w.knobs.set(Choice::NcclProto, x % 2 ? nccl_proto::kSimple : nccl_proto::kAuto);
                  x /= 2;
                  w.knobs.set(Choice::Workers, x % 2 ? workers::k2 : workers::k0);
                  x /= 2;
                  w.knobs.set(Choice::TpCommOverlap, x % 2);
                  x /= 2;
                  w.knobs.set(Choice::Expandable, x % 2);
                  ++settings;
                  brute = std::max(brute, score_of(w, base, truth));
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(settings, 1000);
  EXPECT_GT(brute, 0);
  EXPECT_NEAR(best, brute, 1e-9 * brute) << "the search missed a better setting";
}

TEST(LayoutSearch, OneLeverMovesChangeOneDimension) {
  const Workload base = over_split_llama3_8b();
  const auto moves = one_lever_moves(base, base, every_setting(base));
  ASSERT_GT(moves.size(), 20u);
  for (const Workload& w : moves) {
    // A layout move lets DP and grad accumulation follow; everything else is one change.
    EXPECT_EQ(changed_dimensions(w, base), 1) << "tp " << w.plan.tp << " mbs " << w.plan.mbs;
    EXPECT_EQ(w.plan.tp * w.plan.pp * w.plan.cp * w.plan.dp, w.plan.world);
    EXPECT_EQ(w.plan.grad_accum * w.plan.mbs * w.plan.dp, w.plan.gbs);
  }
}

TEST(LayoutSearch, SmpMicroBatchFollowsTheLayout) {
  Workload base = over_split_llama3_8b();
  base.plan.tp = base.plan.etp = 2;
  base.plan.dp = 8;
  base.plan.mbs = 16;  // gbs 128 = mbs x dp, no accumulation
  base.plan.grad_accum = 1;
  SearchSpace s;
  s.mbs_follows_dp = true;
  s.pp = s.cp = s.vp = false;
  const SearchResult r = search_layouts(base, s, {});
  ASSERT_FALSE(r.best.empty());
  for (const auto& c : r.best) EXPECT_EQ(static_cast<long long>(c.workload.plan.mbs) * c.workload.plan.dp, 128);
}

}  // namespace
}  // namespace attune::sim
