// The properties the exact search rests on: the step time and memory are
// monotone in every term factor, and best_factors bounds every completion of
// a partial assignment of the choices.
#include "attune/sim/effects.h"

#include <gtest/gtest.h>

#include <random>

#include "attune/recipe/model_spec.h"
#include "attune/sim/step_parts.h"

namespace attune::sim {
namespace {

Workload moe_on_two_nodes() {
  Workload w;
  w.model = *recipe::find_model_preset("qwen3-30b-a3b");
  auto& p = w.plan;
  p.gpu = "h100";
  p.nodes = 2;
  p.gpus_per_node = 8;
  p.world = 16;
  p.tp = 2;
  p.etp = 1;
  p.ep = 8;
  p.cp = 2;
  p.pp = 1;
  p.dp = 4;
  p.mbs = 1;
  p.gbs = 64;
  p.grad_accum = 16;
  p.seq_len = 8192;
  w.knobs.recompute_granularity = "selective";
  w.knobs.offload_layers = 8;
  return w;
}

TEST(Effects, StepAndMemoryAreMonotoneInEveryFactor) {
  const Workload w = moe_on_two_nodes();
  const StepParts parts = step_parts(w, {});
  ASSERT_TRUE(parts.failure.empty()) << parts.error;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> f(0.3, 3.0);
  for (int trial = 0; trial < 300; ++trial) {
    TermValues factors;
    for (auto& x : factors) x = f(rng);
    const double step = combine_step(parts, factors);
    const double memory = combine_memory(parts, factors);
    for (std::size_t t = 0; t < kTermCount; ++t) {
      TermValues more = factors;
      more[t] *= 1.7;
      const double s2 = combine_step(parts, more), m2 = combine_memory(parts, more);
      if (is_benefit(static_cast<Term>(t))) {
        EXPECT_LE(s2, step * (1 + 1e-12)) << term_name(static_cast<Term>(t));
      } else {
        EXPECT_GE(s2, step * (1 - 1e-12)) << term_name(static_cast<Term>(t));
        EXPECT_GE(m2, memory * (1 - 1e-12)) << term_name(static_cast<Term>(t));
      }
    }
  }
}

// Every choice's values, with the truth adding interactions.
TEST(Effects, BestFactorsBoundEveryCompletion) {
  Workload w = moe_on_two_nodes();
  Perturbation truth;
  auto cond = [](Property p, long long v) { return Condition{p, {{v, v}}}; };
  truth.effects.push_back({Term::EpComm, 0.5, {cond(property_of(Choice::Dispatcher), dispatcher::kDeepEp), cond(property_of(Choice::NcclProto), nccl_proto::kSimple)}, "", 0});
  truth.effects.push_back({Term::TpHide, 2.0, {cond(property_of(Choice::MaxConnections), max_connections::k1)}, "", 0});
  truth.effects.push_back({Term::Step, 1.2, {cond(property_of(Choice::CudaGraphs), cuda_graphs::kLayers)}, "", 0});
  const StepParts parts = step_parts(w, truth);
  ASSERT_TRUE(parts.failure.empty()) << parts.error;
  std::array<std::uint32_t, kChoiceCount> domain{};
  for (std::size_t c = 0; c < kChoiceCount; ++c) domain[c] = (1u << choice_values(static_cast<Choice>(c)).size()) - 1;
  // Fix a random subset of the choices at random values; enumerate the rest
  // of four of them (the others stay fixed too, at their values).
  std::mt19937_64 rng(11);
  const Choice free_pool[] = {Choice::Dispatcher, Choice::NcclProto, Choice::MaxConnections, Choice::CudaGraphs,
                              Choice::Attention, Choice::TpCommOverlap};
  for (int trial = 0; trial < 60; ++trial) {
    std::array<std::uint8_t, kChoiceCount> choices = w.knobs.choices;
    std::uint32_t fixed = 0;
    for (std::size_t c = 0; c < kChoiceCount; ++c) fixed |= 1u << c;
    std::vector<Choice> free;
    for (Choice c : free_pool) {
      if (rng() % 2) {
        fixed &= ~(1u << static_cast<int>(c));
        free.push_back(c);
      } else {
        choices[static_cast<int>(c)] = static_cast<std::uint8_t>(rng() % choice_values(c).size());
      }
    }
    std::array<std::uint32_t, kChoiceCount> dom = domain;
    for (std::size_t c = 0; c < kChoiceCount; ++c) {
      if ((fixed >> c) & 1u) dom[c] = 1u << choices[c];
    }
    const TermValues best = best_factors(parts.effects, choices, fixed, dom);
    const double bound_step = combine_step(parts, best);
    const double bound_memory = combine_memory(parts, best);
    // Every completion.
    std::vector<std::size_t> idx(free.size(), 0);
    while (true) {
      std::array<std::uint8_t, kChoiceCount> full = choices;
      for (std::size_t i = 0; i < free.size(); ++i) full[static_cast<int>(free[i])] = static_cast<std::uint8_t>(idx[i]);
      const TermValues exact = factors_for(parts.effects, full);
      EXPECT_LE(bound_step, combine_step(parts, exact) * (1 + 1e-12));
      EXPECT_LE(bound_memory, combine_memory(parts, exact) * (1 + 1e-12));
      std::size_t i = 0;
      for (; i < free.size(); ++i) {
        if (++idx[i] < choice_values(free[i]).size()) break;
        idx[i] = 0;
      }
      if (i == free.size()) break;
    }
  }
}

TEST(Effects, ConditionsTestChoicesAndLayout) {
  Workload w = moe_on_two_nodes();
  std::vector<ChoiceEffect> out;
  // A layout condition that fails drops the effect; one that holds keeps it.
  ASSERT_TRUE(resolve({Term::Step, 2.0, {Condition{Property::Tp, {{4, 8}}}}, "", 0}, w, out));
  EXPECT_TRUE(out.empty());
  ASSERT_TRUE(resolve({Term::Step, 2.0, {Condition{Property::Tp, {{1, 2}}}, Condition{property_of(Choice::CudaGraphs), {{1, 1}}}}, "", 0}, w, out));
  ASSERT_EQ(out.size(), 1u);
  auto choices = w.knobs.choices;
  EXPECT_EQ(factors_for(out, choices)[static_cast<int>(Term::Step)], 1.0);  // graphs are off
  choices[static_cast<int>(Choice::CudaGraphs)] = cuda_graphs::kLayers;
  EXPECT_EQ(factors_for(out, choices)[static_cast<int>(Term::Step)], 2.0);
  EXPECT_EQ(property_value(w, Property::EpNodes), 1);
  EXPECT_EQ(property_value(w, Property::Moe), 1);
  EXPECT_EQ(property_value(w, Property::Micro), 16);
}

TEST(Effects, NamesRoundTrip) {
  for (std::size_t t = 0; t < kTermCount; ++t) EXPECT_EQ(term_by_name(term_name(static_cast<Term>(t))), static_cast<Term>(t));
  for (std::size_t p = 0; p < kPropertyCount; ++p)
    EXPECT_EQ(property_by_name(property_name(static_cast<Property>(p))), static_cast<Property>(p));
  for (std::size_t c = 0; c < kChoiceCount; ++c) {
    const auto choice = static_cast<Choice>(c);
    EXPECT_EQ(choice_by_name(choice_name(choice)), choice);
    for (std::size_t v = 0; v < choice_values(choice).size(); ++v)
      EXPECT_EQ(choice_value(choice, choice_values(choice)[v]), v);
  }
}

}  // namespace
}  // namespace attune::sim
