#include "attune/campaign/acceptance.h"

#include <gtest/gtest.h>

#include "attune/campaign/budget.h"
#include "attune/util/error.h"

namespace attune::campaign {
namespace {

TEST(Budget, ParsesGpuHoursInEverySpelling) {
  EXPECT_DOUBLE_EQ(parse_budget("200gpuh"), 200);
  EXPECT_DOUBLE_EQ(parse_budget("1.5kgpuh"), 1500);
  EXPECT_DOUBLE_EQ(parse_budget("40gpuh"), 40);
  EXPECT_DOUBLE_EQ(parse_budget("200"), 200);
  EXPECT_DOUBLE_EQ(parse_budget(" 2k "), 2000);
  EXPECT_THROW(parse_budget("lots"), InputError);
  EXPECT_THROW(parse_budget("0gpuh"), InputError);
  EXPECT_THROW(parse_budget("-5"), InputError);
  EXPECT_THROW(parse_budget("12hours"), InputError);
}

TEST(Budget, InFlightWorstCasesCountAgainstWhatIsLeft) {
  Budget b(10);
  EXPECT_TRUE(b.reserve(6));
  EXPECT_FALSE(b.reserve(5));  // 6 in flight: only 4 left
  b.settle(6, 2);              // it used 2 of its worst case 6
  EXPECT_DOUBLE_EQ(b.spent(), 2);
  EXPECT_DOUBLE_EQ(b.left(), 8);
  EXPECT_TRUE(b.reserve(5));
}

TEST(MannWhitney, SeparatedSamplesAreSignificantAndOverlappingOnesAreNot) {
  const std::vector<double> low = {100, 101, 99, 100.5}, high = {110, 111, 109, 110.5};
  EXPECT_LT(mann_whitney_greater(high, low), 0.05);
  EXPECT_GT(mann_whitney_greater(low, high), 0.95);
  EXPECT_GT(mann_whitney_greater({100, 102, 98, 101}, {101, 99, 100, 102}), 0.2);
  EXPECT_DOUBLE_EQ(mann_whitney_greater({}, low), 1);
}

TEST(Acceptance, ScreenConfirmAcceptRejectAndCloseCall) {
  const Arm incumbent{{1000, 1004}, {998, 1001, 1002, 1000, 1003, 1006, 1004, 1005}};
  // One screening run that may win: confirmed before anything is decided.
  const Arm screen{{1100}, {1098, 1101, 1102, 1100}};
  EXPECT_EQ(judge(screen, incumbent, 0.01, 0).decision, Decision::Confirm);
  // A clear loss on screening: rejected at once.
  EXPECT_EQ(judge(Arm{{950}, {950, 951, 949, 950}}, incumbent, 0.01, 0).decision, Decision::Reject);
  // Two runs clearly faster: accepted, with the numbers of the rule.
  const AcceptanceVerdict v = judge(Arm{{1100, 1102}, {1098, 1101, 1102, 1100, 1101, 1103, 1102, 1104}}, incumbent, 0.01, 0);
  EXPECT_EQ(v.decision, Decision::Accept);
  EXPECT_NEAR(v.gain, 0.0988, 1e-3);
  EXPECT_NEAR(v.threshold, 0.015, 1e-9);  // 1.5 x 1% x sqrt(1/2 + 1/2)
  // Above half the threshold but not above it: re-measured, then rejected once the cap is reached.
  const Arm close{{1015, 1017}, {1014, 1015, 1016, 1015, 1017, 1016, 1018, 1017}};
  EXPECT_EQ(judge(close, incumbent, 0.01, 0).decision, Decision::Remeasure);
  EXPECT_EQ(judge(close, incumbent, 0.01, 2).decision, Decision::Reject);
}

TEST(Acceptance, RunToRunNoiseIsPooledOverArmsWithTwoRuns) {
  const Arm a{{100, 102}, {}}, b{{200, 196}, {}}, single{{50}, {}};
  const double cv = run_to_run_cv({&a, &b, &single});
  EXPECT_GT(cv, 0.01);
  EXPECT_LT(cv, 0.02);
  EXPECT_DOUBLE_EQ(run_to_run_cv({&single}), 0.005);  // no arm says: the floor
}

TEST(Acceptance, BlocksAreTheRunsThroughputScaledByBlockStepTimes) {
  const std::vector<double> t = {1, 1, 1, 1, 2, 2, 2, 2};
  const auto blocks = block_throughputs(t, 100, 4);
  ASSERT_EQ(blocks.size(), 4u);
  EXPECT_NEAR(blocks[0], 150, 1e-9);  // median step 1.5 s, block mean 1 s
  EXPECT_NEAR(blocks[3], 75, 1e-9);
}

}  // namespace
}  // namespace attune::campaign
