// Plans and follow-up solving for each framework adapter other than Megatron.
#include <gtest/gtest.h>

#include "attune/recipe/recipe.h"
#include "attune/util/error.h"
#include "recipe_test_util.h"

namespace attune::recipe {
namespace {

using testing::changed_lines;

RecipeOptions nodes(int n) {
  RecipeOptions o;
  o.hardware.nodes = n;
  return o;
}

const char* kTitan = R"([model]
name = "llama3"
flavor = "8B"

[training]
local_batch_size = 2
seq_len = 8192
steps = 1000

[parallelism]
data_parallel_replicate_degree = 1
data_parallel_shard_degree = -1
tensor_parallel_degree = 1

[activation_checkpoint]
mode = "selective"
)";

TEST(TorchtitanRecipe, ImpliedGlobalBatch) {
  Recipe r = Recipe::from_text("t.toml", kTitan, nodes(2));
  Plan p = r.plan();
  EXPECT_EQ(r.framework(), Framework::Torchtitan);
  EXPECT_EQ(p.world, 16);
  EXPECT_EQ(p.dp, 16);
  EXPECT_EQ(p.gbs, 32);
  EXPECT_EQ(p.gbs_rule, "implied: mbs*dp");
  EXPECT_EQ(p.recompute, "selective");
  ASSERT_TRUE(r.model());
  EXPECT_EQ(r.model()->name, "llama3-8b");
}

TEST(TorchtitanRecipe, TpChangePinsGlobalBatch) {
  Recipe r = Recipe::from_text("t.toml", kTitan, nodes(2));
  EditResult e = r.set("tp", "2");
  ASSERT_EQ(e.follow_ups.size(), 1u);
  EXPECT_EQ(e.follow_ups[0].key, "training.global_batch_size");
  EXPECT_EQ(e.follow_ups[0].new_value->text, "32");
  EXPECT_EQ(e.after.dp, 8);
  EXPECT_EQ(e.after.grad_accum, 2);
  EXPECT_EQ(e.after.gbs, 32);
  EXPECT_NE(r.document().text().find("global_batch_size = 32"), std::string::npos);
}

TEST(TorchtitanRecipe, ExplicitShardDegreeIsResolved) {
  std::string text = kTitan;
  text.replace(text.find("data_parallel_shard_degree = -1"), 31, "data_parallel_shard_degree = 16");
  Recipe r = Recipe::from_text("t.toml", text, nodes(2));
  EditResult e = r.set("tp", "2");
  bool shard_followed = false;
  for (const auto& c : e.follow_ups) {
    if (c.key == "parallelism.data_parallel_shard_degree") {
      shard_followed = true;
      EXPECT_EQ(c.new_value->text, "8");
    }
  }
  EXPECT_TRUE(shard_followed);
}

TEST(TorchtitanRecipe, SequenceRuleWithContextParallel) {
  Recipe r = Recipe::from_text("t.toml", kTitan, nodes(1));
  EXPECT_NO_THROW(r.set("cp", "2"));
  Recipe odd = Recipe::from_text("t.toml", std::string(kTitan).replace(std::string(kTitan).find("8192"), 4, "8190"),
                                 nodes(1));
  EXPECT_THROW(odd.set("cp", "2"), InputError);
}

// The TOML has no environment section: an env.NAME edit goes into the
// launch's environment (the wrapper's launch.env), never into the TOML.
TEST(TorchtitanRecipe, EnvironmentEditsGoIntoTheLaunchNotTheToml) {
  Recipe r = Recipe::from_text("t.toml", kTitan, nodes(1));
  const std::string before = r.document().text();
  EXPECT_FALSE(r.find("env.PYTORCH_CUDA_ALLOC_CONF"));
  const EditResult e = r.set("pytorch_cuda_alloc_conf", "expandable_segments:True");
  ASSERT_EQ(e.changes.size(), 1u);
  EXPECT_EQ(e.changes[0].key, "env.PYTORCH_CUDA_ALLOC_CONF");
  EXPECT_EQ(r.launch().env.at("PYTORCH_CUDA_ALLOC_CONF"), "expandable_segments:True");
  EXPECT_EQ(r.find("env.PYTORCH_CUDA_ALLOC_CONF")->value.str(), "expandable_segments:True");
  r.set("env.NCCL_NVLS_ENABLE", "0", true);
  EXPECT_EQ(r.launch().env.at("NCCL_NVLS_ENABLE"), "0");
  EXPECT_EQ(r.document().text(), before);
}

const char* kAutoModel = R"(step_scheduler:
  global_batch_size: 128
  local_batch_size: 1
model:
  pretrained_model_name_or_path: meta-llama/Llama-3.1-70B
  torch_dtype: bf16
dataset:
  seq_len: 8192
distributed:
  strategy: fsdp2
  dp_size: 32
  tp_size: 1
  cp_size: 2
  pp_size: 1
  activation_checkpointing: true
)";

TEST(AutoModelRecipe, PlanAndExplicitDp) {
  Recipe r = Recipe::from_text("a.yaml", kAutoModel, nodes(8));
  Plan p = r.plan();
  EXPECT_EQ(r.framework(), Framework::AutoModel);
  EXPECT_EQ(p.dp, 32);
  EXPECT_EQ(p.grad_accum, 4);
  EXPECT_EQ(p.recompute, "full");
  ASSERT_TRUE(r.model());
  EXPECT_EQ(r.model()->name, "llama3-70b");
  EditResult e = r.set("cp", "1");
  ASSERT_EQ(e.follow_ups.size(), 1u);
  EXPECT_EQ(e.follow_ups[0].key, "distributed.dp_size");
  EXPECT_EQ(e.follow_ups[0].new_value->text, "64");
  EXPECT_EQ(e.after.grad_accum, 2);
}

TEST(AutoModelRecipe, DdpForbidsTensorParallel) {
  std::string text = kAutoModel;
  text.replace(text.find("fsdp2"), 5, "ddp");
  text.replace(text.find("cp_size: 2"), 10, "cp_size: 1");
  text.replace(text.find("dp_size: 32"), 11, "dp_size: null");
  Recipe r = Recipe::from_text("a.yaml", text, nodes(8));
  EXPECT_THROW(r.set("tp", "2"), InputError);
}

const char* kSmp = R"(run:
  model_type: hf
trainer:
  devices: 8
  num_nodes: 4
  precision: bf16
use_smp_model: True
model:
  train_batch_size: 2
  tensor_model_parallel_degree: 2
  context_parallel_degree: 1
  shard_degree: 8
  activation_checkpointing: False
  max_context_width: 8192
  num_hidden_layers: 32
  hidden_size: 4096
  num_attention_heads: 32
  num_key_value_heads: 8
)";

TEST(HyperPodRecipe, SmpImpliedBatchKeptThroughTrainBatchSize) {
  Recipe r = Recipe::from_text("hf.yaml", kSmp);
  EXPECT_EQ(r.dialect(), "smp");
  Plan p = r.plan();
  EXPECT_EQ(p.world, 32);
  EXPECT_EQ(p.dp, 16);
  EXPECT_EQ(p.gbs, 32);
  EXPECT_EQ(p.precision, "fp8");  // the schema default: fp8 omitted means FP8
  std::string before = r.document().text();
  EditResult e = r.set("tp", "4");
  ASSERT_EQ(e.follow_ups.size(), 1u);
  EXPECT_EQ(e.follow_ups[0].key, "model.train_batch_size");
  EXPECT_EQ(e.follow_ups[0].new_value->text, "4");
  EXPECT_EQ(e.after.gbs, 32);
  EXPECT_EQ(changed_lines(before, r.document().text()).size(), 2u);
}

TEST(HyperPodRecipe, SmpMicroBatchChangesGlobalBatchAndIsRefused) {
  Recipe r = Recipe::from_text("hf.yaml", kSmp);
  EXPECT_THROW(r.set("mbs", "4"), InputError);
  EXPECT_THROW(r.set("recompute", "selective"), InputError);
  EXPECT_NO_THROW(r.set("recompute", "full"));
}

TEST(HyperPodRecipe, HydraOverrideSpellingIsAccepted) {
  Recipe r = Recipe::from_text("hf.yaml", kSmp);
  EditResult e = r.set("recipes.model.tensor_model_parallel_degree", "4");
  EXPECT_EQ(e.lever, "tp");
}

TEST(HyperPodRecipe, OtherDialects) {
  const char* nemo1 = R"(trainer:
  num_nodes: 2
  devices: 8
  precision: bf16
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: 2
  pipeline_model_parallel_size: 1
  encoder_seq_length: 8192
  num_layers: 32
  num_attention_heads: 32
)";
  Recipe a = Recipe::from_text("megatron_llama.yaml", nemo1);
  EXPECT_EQ(a.dialect(), "nemo1");
  EXPECT_EQ(a.plan().dp, 8);
  EXPECT_EQ(a.plan().grad_accum, 8);

  const char* ckptless = R"(run:
  model_type: hyperpod_checkpointless_nemo
trainer:
  num_nodes: 16
  devices: 8
data:
  global_batch_size: 512
  micro_batch_size: 1
  seq_length: 2048
strategy:
  tensor_model_parallel_size: 8
  pipeline_model_parallel_size: 4
  context_parallel_size: 1
)";
  Recipe b = Recipe::from_text("ckpt.yaml", ckptless);
  EXPECT_EQ(b.dialect(), "checkpointless");
  EXPECT_EQ(b.plan().dp, 4);
  EXPECT_EQ(b.plan().grad_accum, 128);

  const char* llmft = R"(run:
  model_type: llm_finetuning_aws
trainer:
  devices: 8
  num_nodes: 1
training_config:
  training_args:
    micro_train_batch_size: 1
    train_batch_size: 8
    ring_attn_size: 1
    max_len: 4096
)";
  Recipe c = Recipe::from_text("llmft.yaml", llmft);
  EXPECT_EQ(c.dialect(), "llmft");
  EXPECT_EQ(c.plan().gbs, 8);
  EXPECT_EQ(c.plan().grad_accum, 1);
  EditResult e = c.set("cp", "2");
  EXPECT_EQ(e.after.dp, 4);
  EXPECT_EQ(e.after.grad_accum, 2);
}

const char* kAxolotl = R"(base_model: meta-llama/Llama-3.1-8B
sequence_len: 4096
sample_packing: true
micro_batch_size: 1
gradient_accumulation_steps: 4
bf16: true
attn_implementation: flash_attention_2
)";

TEST(AxolotlRecipe, ContextParallelReSolvesGradAccumulation) {
  Recipe r = Recipe::from_text("ax.yaml", kAxolotl, nodes(1));
  Plan p = r.plan();
  EXPECT_EQ(p.dp, 8);
  EXPECT_EQ(p.gbs, 32);
  std::string before = r.document().text();
  EditResult e = r.set("cp", "2");
  ASSERT_EQ(e.follow_ups.size(), 1u);
  EXPECT_EQ(e.follow_ups[0].key, "gradient_accumulation_steps");
  EXPECT_EQ(e.follow_ups[0].new_value->text, "8");
  EXPECT_EQ(e.after.gbs, 32);
  // cp is a new key; GA changes in place.
  EXPECT_NE(r.document().text().find("context_parallel_size: 2"), std::string::npos);
  EXPECT_NE(r.document().text().find("gradient_accumulation_steps: 8"), std::string::npos);
}

TEST(AxolotlRecipe, MicroBatchThatCannotKeepBatchIsRefused) {
  Recipe r = Recipe::from_text("ax.yaml", kAxolotl, nodes(1));
  EXPECT_THROW(r.set("mbs", "3"), InputError);  // 32 % (3*8) != 0
  EditResult e = r.set("mbs", "2");
  EXPECT_EQ(e.after.grad_accum, 2);
}

// The expert-parallel plugin splits one mesh: expert_parallel_size x
// dp_shard_size = world, so an EP edit moves the shard group with it.
TEST(AxolotlRecipe, ExpertParallelEditMovesTheShardGroup) {
  std::string text = std::string(kAxolotl) + "expert_parallel_size: 8\ndp_shard_size: 1\n";
  text.replace(text.find("meta-llama/Llama-3.1-8B"), 23, "Qwen/Qwen3-30B-A3B");
  Recipe r = Recipe::from_text("ax.yaml", text, nodes(1));
  for (const auto& v : r.violations()) ADD_FAILURE() << v.rule << ": " << v.message;
  EditResult e = r.set("ep", "2");
  ASSERT_EQ(e.follow_ups.size(), 1u);
  EXPECT_EQ(e.follow_ups[0].key, "dp_shard_size");
  EXPECT_EQ(e.follow_ups[0].new_value->text, "4");
  EXPECT_TRUE(r.violations().empty());
  e = r.set("ep", "1");
  EXPECT_EQ(e.follow_ups.at(0).new_value->text, "8");  // no EP: the shard group is all of DP
}

const char* kBridge = R"(model:
  tensor_model_parallel_size: 2
  seq_length: 8192
train:
  global_batch_size: 128
  micro_batch_size: 1
ddp:
  overlap_grad_reduce: true
)";

TEST(BridgeRecipe, RecomputeFullAddsItsCompanions) {
  Recipe r = Recipe::from_text("b.yaml", kBridge, nodes(2));
  EXPECT_EQ(r.framework(), Framework::Bridge);
  EXPECT_EQ(r.plan().dp, 8);
  EditResult e = r.set("recompute", "full");
  EXPECT_EQ(e.changes.size(), 3u);
  EXPECT_EQ(r.document().find("model.recompute_method")->value.text, "uniform");
  EXPECT_EQ(r.plan().recompute, "full");
}

TEST(BridgeRecipe, EnvLeverGoesToEnvVars) {
  Recipe r = Recipe::from_text("b.yaml", kBridge, nodes(2));
  r.set("env.NCCL_NVLS_ENABLE", "0");
  ASSERT_TRUE(r.document().find("env_vars.NCCL_NVLS_ENABLE"));
}

// Bridge and HyperPod NeMo-1 pad the vocabulary like Megatron-LM: a TP change
// scales model.make_vocab_size_divisible_by so divisor x TP stays the same.
TEST(BridgeRecipe, TpChangeScalesTheVocabDivisor) {
  std::string text = std::string(kBridge) + "tokenizer:\n  vocab_size: 128256\n";
  text.replace(text.find("tensor_model_parallel_size: 2"), 29, "tensor_model_parallel_size: 4");
  Recipe r = Recipe::from_text("b.yaml", text, nodes(2));
  EditResult e = r.set("tp", "1");
  ASSERT_EQ(e.follow_ups.size(), 1u);
  EXPECT_EQ(e.follow_ups[0].key, "model.make_vocab_size_divisible_by");
  EXPECT_EQ(e.follow_ups[0].new_value->text, "512");
  EXPECT_NE(e.follow_ups[0].why.find("128512"), std::string::npos);
}

TEST(HyperPodRecipe, Nemo1TpChangeScalesTheVocabDivisor) {
  const char* nemo1 = R"(trainer:
  num_nodes: 2
  devices: 8
  precision: bf16
model:
  micro_batch_size: 1
  global_batch_size: 64
  tensor_model_parallel_size: 2
  pipeline_model_parallel_size: 1
  encoder_seq_length: 8192
  num_layers: 32
  num_attention_heads: 32
  make_vocab_size_divisible_by: 128
)";
  RecipeOptions o;
  o.model = "llama3-8b";
  Recipe r = Recipe::from_text("megatron_llama.yaml", nemo1, o);
  EditResult e = r.set("tp", "8");  // 128256 would pad to 129024 at 128 x 8
  ASSERT_EQ(e.follow_ups.size(), 1u);
  EXPECT_EQ(e.follow_ups[0].key, "model.make_vocab_size_divisible_by");
  EXPECT_EQ(e.follow_ups[0].old_value->text, "128");
  EXPECT_EQ(e.follow_ups[0].new_value->text, "32");
  // Without the vocabulary size nothing follows.
  Recipe bare = Recipe::from_text("megatron_llama.yaml", nemo1);
  EXPECT_TRUE(bare.set("tp", "8").follow_ups.empty());
}

TEST(RecipeDetection, NotARecipeIsAnError) {
  EXPECT_THROW(Recipe::from_text("cluster.yaml", "exclusive: True\nmem: 0\n"), InputError);
  EXPECT_THROW(Recipe::from_text("x.yaml", kBridge, [] { RecipeOptions o; o.framework = "caffe"; return o; }()),
               InputError);
  RecipeOptions forced;
  forced.framework = "bridge";
  EXPECT_EQ(Recipe::from_text("x.yaml", kBridge, forced).framework(), Framework::Bridge);
}

}  // namespace
}  // namespace attune::recipe
