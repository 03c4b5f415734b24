// A batch schedule is the global batch: Megatron's --step-batch-size-schedule
// and --rampup-batch-size give the batch of every phase, the plan's global
// batch is the largest, a micro-batch edit keeps the schedule (no
// --global-batch-size is pinned beside it, which Megatron rejects) and is
// allowed only when every phase still divides into micro-batches.
#include <gtest/gtest.h>

#include <string>

#include "attune/recipe/recipe.h"
#include "attune/util/error.h"

namespace attune::recipe {
namespace {

Recipe load(const std::string& schedule) {
  RecipeOptions o;
  o.model = "llama3-8b";
  o.hardware = {"h100", 1, 8};
  return Recipe::from_text("train.sh", R"(#!/bin/bash
ARGS=(
  --tensor-model-parallel-size 2
  --micro-batch-size 1
  --seq-length 4096
  --train-samples 1000000
  --lr 3e-4
  --bf16
  )" + schedule + R"(
)
torchrun --nproc_per_node 8 pretrain_gpt.py ${ARGS[@]}
)",
                           o);
}

TEST(BatchSchedule, AStepScheduleGivesEveryPhaseAndTheLargestIsTheGlobalBatch) {
  Recipe r = load("--step-batch-size-schedule \"0:128 250B:256\"");
  Plan p = r.plan();
  EXPECT_EQ(p.gbs_rule, "schedule");
  EXPECT_EQ(p.gbs, 256);
  EXPECT_EQ(p.batch_phases, (std::vector<long long>{128, 256}));
}

TEST(BatchSchedule, AMicroBatchEditKeepsTheScheduleAndPinsNoGlobalBatch) {
  Recipe r = load("--step-batch-size-schedule \"0:128 250B:256\"");
  EditResult e = r.set("mbs", "2");
  for (const auto& c : e.follow_ups) EXPECT_NE(c.key, "--global-batch-size") << c.why;
  EXPECT_FALSE(r.document().find("--global-batch-size").has_value()) << r.document().text();
  EXPECT_EQ(r.plan().gbs, 256);
  EXPECT_EQ(r.plan().mbs, 2);
}

TEST(BatchSchedule, AMicroBatchThatLeavesAPhaseIndivisibleIsRefused) {
  Recipe r = load("--step-batch-size-schedule \"0:128 250B:256\"");
  // DP 4: mbs 64 needs phases divisible by 256; 128 is not.
  try {
    r.set("mbs", "64");
    FAIL() << "mbs 64 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("batch-schedule-divisible"), std::string::npos) << e.what();
  }
}

TEST(BatchSchedule, ARampUpGoesFromItsStartToTheGlobalBatchInIncrements) {
  Recipe r = load("--rampup-batch-size 32 32 100000\n  --global-batch-size 128");
  Plan p = r.plan();
  EXPECT_EQ(p.gbs, 128);
  EXPECT_EQ(p.batch_phases, (std::vector<long long>{32, 64, 96, 128}));
  EXPECT_EQ(r.violations().size(), 0u);
  EXPECT_THROW(r.set("mbs", "16"), InputError);  // 16*4 = 64 does not divide 32 or 96
}

TEST(BatchSchedule, AScheduleThatCannotBeReadIsAnError) {
  EXPECT_THROW(load("--rampup-batch-size 32 32"), InputError);
  EXPECT_THROW(load("--rampup-batch-size 32 30 1000\n  --global-batch-size 128"), InputError);
  EXPECT_THROW(load("--step-batch-size-schedule \"0-128\""), InputError);
}

}  // namespace
}  // namespace attune::recipe
