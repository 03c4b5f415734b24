#include "attune/campaign/loss_check.h"

#include <gtest/gtest.h>

#include <cmath>

namespace attune::campaign {
namespace {

LossCurve curve(double offset, double wiggle) {
  LossCurve c;
  for (long s = 1; s <= 40; ++s) c.emplace_back(s, 2.0 + 9.0 * std::exp(-s / 150.0) + offset + wiggle * std::sin(s * 1.7));
  return c;
}

TEST(LossCheck, SameTrainingPassesAndAShiftedLossIsSuspect) {
  const LossCurve base = curve(0, 0.01), again = curve(0.001, -0.01);
  const LossCheck same = compare_loss(curve(0.0005, 0.008), base, again);
  EXPECT_TRUE(same.comparable);
  EXPECT_FALSE(same.suspect) << same.why;
  const LossCheck shifted = compare_loss(curve(0.2, 0.01), base, again);
  EXPECT_TRUE(shifted.suspect) << shifted.why;
  EXPECT_NEAR(shifted.difference, 0.2, 0.01);
}

TEST(LossCheck, NoCommonStepsIsUnknownNotAPass) {
  LossCurve late;
  for (long s = 100; s < 110; ++s) late.emplace_back(s, 2.0);
  const LossCheck c = compare_loss(late, curve(0, 0.01), curve(0, 0.01));
  EXPECT_FALSE(c.comparable);
  EXPECT_FALSE(c.suspect);
}

}  // namespace
}  // namespace attune::campaign
