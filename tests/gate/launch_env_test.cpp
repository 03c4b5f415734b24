// A framework whose recipe file has no environment section (torchtitan's
// TOML) runs with the launch's environment: the gate judges the wrapper's
// launch.env as the recipe's `env.NAME` settings, a throughput variable
// allowed, one that changes what is trained refused.
#include <gtest/gtest.h>

#include <string>

#include "attune/gate/correctness_gate.h"
#include "attune/recipe/recipe.h"

namespace attune::gate {
namespace {

const char* kTitan = R"([model]
name = "llama3"
flavor = "8B"

[training]
local_batch_size = 1
seq_len = 8192
steps = 1000

[parallelism]
data_parallel_shard_degree = -1
tensor_parallel_degree = 1
)";

recipe::Recipe titan() {
  recipe::RecipeOptions o;
  o.hardware = {"h100", 1, 8};
  return recipe::Recipe::from_text("llama3_8b.toml", kTitan, o);
}

bool refused_by(const Verdict& v, const std::string& key) {
  for (const auto& c : v.changes)
    if (c.key == key && c.status == ChangeStatus::Refused) return true;
  return false;
}

TEST(GateLaunchEnvironment, AThroughputVariableIsALeverAndADeterminismSwitchIsRefused) {
  const recipe::Recipe base = titan();
  recipe::Recipe alloc = base;
  alloc.set("pytorch_cuda_alloc_conf", "expandable_segments:True");
  const Verdict ok = CorrectnessGate().check(base, alloc);
  EXPECT_TRUE(ok.allowed) << to_json(ok).dump(1);
  ASSERT_EQ(ok.changes.size(), 1u) << to_json(ok).dump(1);
  EXPECT_EQ(ok.changes[0].key, "env.PYTORCH_CUDA_ALLOC_CONF");

  recipe::Recipe ring = base;
  ring.set("env.NCCL_ALGO", "Ring", true);
  const Verdict v = CorrectnessGate().check(base, ring);
  EXPECT_FALSE(v.allowed);
  EXPECT_TRUE(refused_by(v, "env.NCCL_ALGO")) << to_json(v).dump(1);
}

}  // namespace
}  // namespace attune::gate
