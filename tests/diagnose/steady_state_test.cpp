#include <gtest/gtest.h>

#include "attune/diagnose/flops.h"
#include "attune/diagnose/steady_state.h"
#include "attune/recipe/model_spec.h"

namespace attune::diagnose {
namespace {

StepSeries run(const std::vector<double>& times, long interval = 1) {
  StepSeries out;
  for (size_t i = 0; i < times.size(); ++i) {
    StepSample s;
    s.step = static_cast<long>(i + 1) * interval;
    s.steps_in_interval = interval;
    s.step_time_s = times[i];
    s.line = static_cast<long>(i + 1) * 10;
    out.push_back(s);
  }
  return out;
}

TEST(SteadyState, DropsWarmupAndTakesTheMedian) {
  std::vector<double> t(40, 2.0);
  t[0] = 30.0;   // compile and NCCL init
  t[5] = 9.0;    // inside the warm-up window (first 10 steps)
  t[20] = 2.2;
  t[21] = 1.8;
  SteadyState s = steady_state(run(t), {});
  ASSERT_TRUE(s.step_time_s);
  EXPECT_DOUBLE_EQ(*s.step_time_s, 2.0);
  EXPECT_EQ(s.samples_used, 30);  // steps 11..40
  ASSERT_TRUE(s.cv);
  EXPECT_GT(*s.cv, 0.0);
  EXPECT_LT(*s.cv, 0.05);
  EXPECT_LT(*s.ci95_low_s, 2.0);
  EXPECT_GT(*s.ci95_high_s, 2.0);
  EXPECT_FALSE(s.drift);
}

TEST(SteadyState, DisturbedIntervalsAreLeftOut) {
  std::vector<double> t(30, 1.0);
  t[25] = 5.0;  // the interval with a checkpoint save
  auto samples = run(t);
  Disturbance ckpt{Disturbance::Kind::Checkpoint, samples[25].line - 3, "saving checkpoint"};
  SteadyState s = steady_state(samples, {ckpt});
  EXPECT_DOUBLE_EQ(*s.mean_step_time_s, 1.0);
  EXPECT_NE(std::find(s.dropped_lines.begin(), s.dropped_lines.end(), samples[25].line), s.dropped_lines.end());
}

TEST(SteadyState, SkippedAndNanIterationsAreLeftOut) {
  auto samples = run(std::vector<double>(30, 1.0));
  samples[20].step_time_s = 7.0;
  samples[20].skipped_iterations = 1;
  samples[21].step_time_s = 7.0;
  samples[21].loss_is_nan = true;
  EXPECT_DOUBLE_EQ(*steady_state(samples, {}).mean_step_time_s, 1.0);
}

TEST(SteadyState, IntervalsAreWeightedBySteps) {
  // Megatron prints interval averages; a 1-step interval must not count as much as a 100-step one.
  EXPECT_DOUBLE_EQ(*weighted_median({{1.0, 100}, {5.0, 1}, {5.0, 1}}), 1.0);
}

TEST(SteadyState, RisingStepTimeIsDrift) {
  std::vector<double> t;
  for (int i = 0; i < 60; ++i) t.push_back(1.0 + 0.02 * i);
  EXPECT_TRUE(steady_state(run(t), {}).drift);
}

TEST(SteadyState, ShortRunFallsBackToAllButFirst) {
  SteadyState s = steady_state(run({10.0, 2.0, 2.0, 2.0}), {});
  EXPECT_EQ(s.samples_used, 3);
  EXPECT_DOUBLE_EQ(*s.step_time_s, 2.0);
  EXPECT_FALSE(steady_state({}, {}).step_time_s);
}

TEST(SteadyState, ASmoothedBarRateFarIntoTheRunCountsAlone) {
  // One progress-bar line at step 795: tqdm's rate is over its recent steps, so it is the steady state.
  StepSeries bar;
  StepSample s;
  s.step = 795;
  s.line = 1;
  s.step_time_s = 41.36;
  s.rate_smoothed = true;
  bar.push_back(s);
  EXPECT_DOUBLE_EQ(*steady_state(bar, {}).step_time_s, 41.36);
  // Within the warm-up, or an interval since the previous line, it does not.
  bar[0].step = 8;
  EXPECT_FALSE(steady_state(bar, {}).step_time_s);
  bar[0].step = 795;
  bar[0].rate_smoothed = false;
  EXPECT_FALSE(steady_state(bar, {}).step_time_s);
}

TEST(Flops, MegatronDenseFormulaByHand) {
  recipe::ModelSpec m;
  m.layers = 2;
  m.hidden = 8;
  m.heads = 2;
  m.kv_heads = 1;
  m.ffn = 16;
  m.vocab = 10;
  // d = 4, q = 8, kv = 2*1*4 = 8; attention projections 8*(8+8) + 8*8 = 192 per layer
  // MLP (SwiGLU) 8*16*3 = 384 per layer; logits 8*10 = 80
  // linear = 2*192 + 2*384 + 80 = 1232 -> 6*1232 = 7392; attention 6*2*s*8 with s = 4: 384
  EXPECT_DOUBLE_EQ(flops_per_token(m, 4, FlopsConvention::CausalHalved), 7392 + 384);
  EXPECT_DOUBLE_EQ(flops_per_token(m, 4, FlopsConvention::FullAttention), 7392 + 768);
}

TEST(Flops, Llama3_8BIsAboutSixTimesItsParameters) {
  const recipe::ModelSpec* m = recipe::find_model_preset("llama3-8b");
  ASSERT_TRUE(m);
  double f = flops_per_token(*m, 8192, FlopsConvention::CausalHalved);
  // 6 * 8.0e9 params plus 6*L*s*q = 6*32*8192*4096 = 6.4e9
  EXPECT_GT(f, 5.0e10);
  EXPECT_LT(f, 5.8e10);
}

}  // namespace
}  // namespace attune::diagnose
