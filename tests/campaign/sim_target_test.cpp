// What a simulated run, a prediction or a launch starts from: a recipe whose
// layout the framework would reject at start up, or whose numbers only the
// run knows, is refused with the key to fix, not simulated into figures of
// nothing (a negative local batch once "completed after -370 s").
#include "attune/campaign/sim_target.h"

#include <gtest/gtest.h>

#include <string>

#include "attune/util/error.h"
#include "../fixtures/llama3_8b_script.h"
#include "../fixtures/scratch_dir.h"

namespace attune::campaign {
namespace {

recipe::RecipeOptions h100(int gpus = 8) {
  recipe::RecipeOptions o;
  o.model = "llama3-8b";
  o.hardware = {"h100", 1, gpus};
  return o;
}

std::string error_of(const std::string& file, const recipe::RecipeOptions& o) {
  try {
    load_sim_target(file, o, {});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(SimTarget, ALayoutThatBreaksAValidityRuleIsRefusedWithItsKey) {
  test::ScratchDir dir("attune_sim_target");
  // GBS 60 on DP 8 (TP 1): not a multiple of mbs*dp.
  const std::string bad = dir.write("bad.sh", test::llama3_8b_script(8, 1, 60));
  std::string err = error_of(bad, h100());
  EXPECT_NE(err.find("validity rules"), std::string::npos) << err;
  EXPECT_NE(err.find("--global-batch-size"), std::string::npos) << err;
  EXPECT_THROW(load_launch_target(bad, h100()), InputError);
  const std::string good = dir.write("good.sh", test::llama3_8b_script(8, 1, 64));
  EXPECT_EQ(error_of(good, h100()), "");
}

TEST(SimTarget, ANumberOnlyTheRunKnowsIsRefused) {
  test::ScratchDir dir("attune_sim_target");
  std::string text = test::llama3_8b_script(8, 2);
  text.replace(text.find("--tensor-model-parallel-size 2"), 30, "--tensor-model-parallel-size $(nproc)");
  std::string err = error_of(dir.write("runtime.sh", text), h100());
  EXPECT_NE(err.find("known only at run time"), std::string::npos) << err;
}

}  // namespace
}  // namespace attune::campaign
