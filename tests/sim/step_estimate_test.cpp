// campaign::expected_step_s: the step time the hang watchdog is handed, from
// the simulator's nominal model — the same figure `attune sim predict` gives,
// faster on faster GPUs, and 0 (unknown) for a recipe the model cannot
// predict.
// Here beside the simulator's tests because it is the simulator's figure.
#include "attune/campaign/step_estimate.h"

#include <gtest/gtest.h>

#include "../fixtures/llama3_8b_script.h"
#include "attune/recipe/recipe.h"
#include "attune/sim/step_model.h"
#include "attune/sim/workload.h"

namespace attune::campaign {
namespace {

recipe::Recipe llama3_8b(const std::string& gpu, const std::string& model = "llama3-8b") {
  recipe::RecipeOptions o;
  o.framework = "megatron";
  o.model = model;
  o.hardware.gpu = gpu;
  o.hardware.nodes = 1;
  o.hardware.gpus_per_node = 8;
  return recipe::Recipe::from_text("pretrain.sh", test::llama3_8b_script(8, 2), o);
}

TEST(StepEstimate, IsTheNominalPrediction) {
  const recipe::Recipe r = llama3_8b("h100");
  const double s = expected_step_s(r);
  EXPECT_GT(s, 0.1);
  EXPECT_LT(s, 600);
  const sim::Prediction p = sim::predict(sim::workload_from_recipe(r), {}, sim::Detail::Numbers);
  ASSERT_TRUE(p.ok);
  EXPECT_DOUBLE_EQ(s, p.step_time_s);
  EXPECT_LT(expected_step_s(llama3_8b("b200")), s);
}

TEST(StepEstimate, UnknownWithoutAGpu) {
  recipe::RecipeOptions o;
  o.framework = "megatron";
  o.model = "llama3-8b";
  // Neither the options nor the file name a GPU: the model has no peak to use.
  const recipe::Recipe r = recipe::Recipe::from_text("pretrain.sh", test::llama3_8b_script(8, 2), o);
  ASSERT_EQ(r.hardware().gpu, "");
  EXPECT_EQ(expected_step_s(r), 0);
}

}  // namespace
}  // namespace attune::campaign
