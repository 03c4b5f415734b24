// How each adapter reads the plan from the framework's own spelling: sequence
// length of packed AutoModel recipes, the FSDP sharding group (Plan::dp_shard)
// of every framework, the pipeline micro batch of torchtitan/AutoModel, the
// HyperPod SMP follow-ups, and the catalog defaults of flags a file omits.
#include <gtest/gtest.h>

#include <string>

#include "attune/recipe/recipe.h"
#include "attune/util/error.h"

namespace attune::recipe {
namespace {

RecipeOptions nodes(int n) {
  RecipeOptions o;
  o.hardware.nodes = n;
  return o;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

const Change* follow_up(const EditResult& e, const std::string& key) {
  for (const auto& c : e.follow_ups) {
    if (c.key == key) return &c;
  }
  return nullptr;
}

// ---------------------------------------------------------------- 1. AutoModel sequence length

const char* kAutoModelSft = R"(step_scheduler:
  global_batch_size: 32
  local_batch_size: 2
model:
  pretrained_model_name_or_path: meta-llama/Llama-3.1-8B
dataset:
  _target_: some.sft.dataset
  split: train
packed_sequence:
  packed_sequence_size: 4096
distributed:
  tp_size: 1
)";

TEST(AutoModelSequence, PackedSequenceSizeIsTheSequenceLength) {
  Recipe r = Recipe::from_text("sft.yaml", kAutoModelSft, nodes(1));
  Plan p = r.plan();
  EXPECT_EQ(p.seq_len, 4096);
  EXPECT_EQ(p.tokens_per_step, 32 * 4096);
}

TEST(AutoModelSequence, UnpackedSftHasNoFixedLength) {
  Recipe r = Recipe::from_text("sft.yaml", replaced(kAutoModelSft, "packed_sequence_size: 4096", "packed_sequence_size: 0"),
                               nodes(1));
  EXPECT_EQ(r.plan().seq_len, 0);
}

TEST(AutoModelSequence, DatasetSettingWinsOverPackedSize) {
  std::string text = replaced(kAutoModelSft, "  split: train\n", "  split: train\n  seq_len: 2048\n");
  EXPECT_EQ(Recipe::from_text("sft.yaml", text, nodes(1)).plan().seq_len, 2048);
  text = replaced(kAutoModelSft, "  split: train\n", "  split: train\n  seq_length: 1024\n");
  EXPECT_EQ(Recipe::from_text("sft.yaml", text, nodes(1)).plan().seq_len, 1024);
}

// ---------------------------------------------------------------- 2. FSDP sharding group

TEST(ShardGroup, AutoModelFsdp2IsTheDefault) {
  // distributed.strategy absent: AutoModel runs FSDP2 over all of DP.
  Recipe r = Recipe::from_text("a.yaml", kAutoModelSft, nodes(2));
  Plan p = r.plan();
  EXPECT_EQ(p.dp, 16);
  EXPECT_EQ(p.dp_shard, 16);
  std::string explicit_fsdp2 = replaced(kAutoModelSft, "  tp_size: 1\n", "  tp_size: 2\n  strategy: fsdp2\n");
  EXPECT_EQ(Recipe::from_text("a.yaml", explicit_fsdp2, nodes(2)).plan().dp_shard, 8);
}

TEST(ShardGroup, AutoModelHsdpDdpAndMegatronFsdp) {
  std::string hsdp = replaced(kAutoModelSft, "  tp_size: 1\n", "  tp_size: 1\n  dp_replicate_size: 2\n");
  EXPECT_EQ(Recipe::from_text("a.yaml", hsdp, nodes(2)).plan().dp_shard, 8);
  std::string ddp = replaced(kAutoModelSft, "  tp_size: 1\n", "  tp_size: 1\n  strategy: ddp\n");
  EXPECT_EQ(Recipe::from_text("a.yaml", ddp, nodes(2)).plan().dp_shard, 0);
  std::string mfsdp = replaced(kAutoModelSft, "  tp_size: 1\n", "  tp_size: 1\n  strategy: megatron_fsdp\n");
  EXPECT_EQ(Recipe::from_text("a.yaml", mfsdp, nodes(2)).plan().dp_shard, 16);
  std::string zero2 = replaced(mfsdp, "strategy: megatron_fsdp\n", "strategy: megatron_fsdp\n  zero_dp_strategy: 2\n");
  EXPECT_EQ(Recipe::from_text("a.yaml", zero2, nodes(2)).plan().dp_shard, 0);
}

const char* kTitan = R"([model]
name = "llama3"
flavor = "70B"

[training]
local_batch_size = 8
seq_len = 8192

[parallelism]
data_parallel_replicate_degree = 1
data_parallel_shard_degree = -1
tensor_parallel_degree = 8
pipeline_parallel_degree = 1
)";

TEST(ShardGroup, TorchtitanAutoShardDegreeTakesTheRestOfTheWorld) {
  Recipe r = Recipe::from_text("t.toml", kTitan, nodes(4));
  Plan p = r.plan();
  EXPECT_EQ(p.world, 32);
  EXPECT_EQ(p.dp, 4);
  EXPECT_EQ(p.dp_shard, 4);  // 32 / (tp 8 * pp 1 * cp 1 * replicate 1)
  std::string hsdp = replaced(replaced(kTitan, "data_parallel_replicate_degree = 1", "data_parallel_replicate_degree = 2"),
                              "tensor_parallel_degree = 8", "tensor_parallel_degree = 4");
  Plan h = Recipe::from_text("t.toml", hsdp, nodes(4)).plan();
  EXPECT_EQ(h.dp, 8);
  EXPECT_EQ(h.dp_shard, 4);  // 32 / (4 * 2): FSDP within, replicas across
  std::string fixed = replaced(hsdp, "data_parallel_shard_degree = -1", "data_parallel_shard_degree = 4");
  EXPECT_EQ(Recipe::from_text("t.toml", fixed, nodes(4)).plan().dp_shard, 4);
}

const char* kSmp = R"(run:
  model_type: hf
trainer:
  devices: 8
  num_nodes: 8
  precision: bf16
use_smp_model: True
model:
  train_batch_size: 1
  tensor_model_parallel_degree: 1
  context_parallel_degree: 1
  sharding_strategy: hybrid_shard
  shard_degree: 64
  activation_checkpointing: True
  max_context_width: 8192
  num_hidden_layers: 80
  hidden_size: 8192
  num_attention_heads: 64
  num_key_value_heads: 8
)";

TEST(ShardGroup, HyperPodSmpShardDegree) {
  Recipe r = Recipe::from_text("hf.yaml", kSmp);
  Plan p = r.plan();
  EXPECT_EQ(p.world, 64);
  EXPECT_EQ(p.dp_shard, 64);
  // The CP ranks lie inside the shard group.
  std::string cp = replaced(kSmp, "context_parallel_degree: 1", "context_parallel_degree: 2");
  Plan c = Recipe::from_text("hf.yaml", cp).plan();
  EXPECT_EQ(c.dp, 32);
  EXPECT_EQ(c.dp_shard, 32);
  // Unset without TP: PyTorch's hybrid shard within a node of 8.
  std::string unset = replaced(kSmp, "  shard_degree: 64\n", "");
  EXPECT_EQ(Recipe::from_text("hf.yaml", unset).plan().dp_shard, 8);
  // Unset with TP: the largest degree, world / tp.
  std::string tp = replaced(unset, "tensor_model_parallel_degree: 1", "tensor_model_parallel_degree: 4");
  EXPECT_EQ(Recipe::from_text("hf.yaml", tp).plan().dp_shard, 16);
  std::string zero2 = replaced(kSmp, "sharding_strategy: hybrid_shard", "sharding_strategy: shard_grad_op");
  EXPECT_EQ(Recipe::from_text("hf.yaml", zero2).plan().dp_shard, 0);
}

TEST(ShardGroup, HyperPodLlmftFsdpConfig) {
  const char* llmft = R"(run:
  model_type: llm_finetuning_aws
trainer:
  devices: 8
  num_nodes: 2
training_config:
  training_args:
    micro_train_batch_size: 1
    train_batch_size: 16
    ring_attn_size: 1
    max_len: 4096
    strategy:
      fsdp_config:
        sharding_strategy: FULL_SHARD
)";
  EXPECT_EQ(Recipe::from_text("llmft.yaml", llmft).plan().dp_shard, 16);
  std::string hybrid = replaced(llmft, "FULL_SHARD", "HYBRID_SHARD");
  EXPECT_EQ(Recipe::from_text("llmft.yaml", hybrid).plan().dp_shard, 8);
}

const char* kAxolotl = R"(base_model: meta-llama/Llama-3.1-8B
sequence_len: 4096
micro_batch_size: 1
gradient_accumulation_steps: 4
bf16: true
)";

TEST(ShardGroup, AxolotlFsdpSpellings) {
  EXPECT_EQ(Recipe::from_text("ax.yaml", kAxolotl, nodes(1)).plan().dp_shard, 0);
  std::string fsdp1 = std::string(kAxolotl) + "fsdp:\n  - full_shard\n  - auto_wrap\nfsdp_config:\n  fsdp_offload_params: false\n";
  EXPECT_EQ(Recipe::from_text("ax.yaml", fsdp1, nodes(2)).plan().dp_shard, 16);
  std::string fsdp2 = std::string(kAxolotl) + "tensor_parallel_size: 2\nfsdp_version: 2\nfsdp_config:\n  reshard_after_forward: true\n";
  EXPECT_EQ(Recipe::from_text("ax.yaml", fsdp2, nodes(1)).plan().dp_shard, 4);
  std::string hsdp = fsdp2 + "dp_replicate_size: 2\n";
  EXPECT_EQ(Recipe::from_text("ax.yaml", hsdp, nodes(1)).plan().dp_shard, 2);
  std::string nd = std::string(kAxolotl) + "dp_shard_size: 4\ndp_replicate_size: 2\nfsdp_version: 2\n";
  EXPECT_EQ(Recipe::from_text("ax.yaml", nd, nodes(1)).plan().dp_shard, 4);
  std::string zero2 = std::string(kAxolotl) + "fsdp_config:\n  fsdp_sharding_strategy: SHARD_GRAD_OP\n";
  EXPECT_EQ(Recipe::from_text("ax.yaml", zero2, nodes(1)).plan().dp_shard, 0);
  std::string zero3 = std::string(kAxolotl) + "deepspeed: deepspeed_configs/zero3_bf16.json\n";
  EXPECT_EQ(Recipe::from_text("ax.yaml", zero3, nodes(1)).plan().dp_shard, 8);
}

const char* kMegatron = R"(#!/bin/bash
GPUS_PER_NODE=8
NUM_NODES=2
ARGS=(
    --num-layers 32
    --hidden-size 4096
    --num-attention-heads 32
    --seq-length 4096
    --micro-batch-size 1
    --global-batch-size 256
    --tensor-model-parallel-size 2
    --bf16
)
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py ${ARGS[@]}
)";

TEST(ShardGroup, MegatronFsdpFlags) {
  Recipe plain = Recipe::from_text("train.sh", kMegatron);
  EXPECT_EQ(plain.plan().dp, 8);
  EXPECT_EQ(plain.plan().dp_shard, 0);
  std::string mfsdp = replaced(kMegatron, "    --bf16\n", "    --bf16\n    --use-megatron-fsdp\n");
  EXPECT_EQ(Recipe::from_text("train.sh", mfsdp).plan().dp_shard, 8);  // optim_grads_params by default
  std::string zero2 =
      replaced(mfsdp, "    --use-megatron-fsdp\n", "    --use-megatron-fsdp\n    --data-parallel-sharding-strategy optim_grads\n");
  EXPECT_EQ(Recipe::from_text("train.sh", zero2).plan().dp_shard, 0);
  std::string hsdp =
      replaced(mfsdp, "    --use-megatron-fsdp\n", "    --use-megatron-fsdp\n    --num-distributed-optimizer-instances 2\n");
  EXPECT_EQ(Recipe::from_text("train.sh", hsdp).plan().dp_shard, 4);
  std::string torch_fsdp2 = replaced(kMegatron, "    --bf16\n", "    --bf16\n    --use-torch-fsdp2\n");
  EXPECT_EQ(Recipe::from_text("train.sh", torch_fsdp2).plan().dp_shard, 8);
}

const char* kBridge = R"(model:
  tensor_model_parallel_size: 2
  seq_length: 8192
train:
  global_batch_size: 128
  micro_batch_size: 1
)";

TEST(ShardGroup, BridgeMegatronFsdp) {
  EXPECT_EQ(Recipe::from_text("b.yaml", kBridge, nodes(2)).plan().dp_shard, 0);
  std::string dist = std::string(kBridge) + "dist:\n  use_megatron_fsdp: true\n";
  EXPECT_EQ(Recipe::from_text("b.yaml", dist, nodes(2)).plan().dp_shard, 8);
  std::string ddp = std::string(kBridge) + "ddp:\n  use_megatron_fsdp: true\n  data_parallel_sharding_strategy: optim_grads_params\n";
  EXPECT_EQ(Recipe::from_text("b.yaml", ddp, nodes(2)).plan().dp_shard, 8);
  std::string optim = replaced(ddp, "optim_grads_params", "optim");
  EXPECT_EQ(Recipe::from_text("b.yaml", optim, nodes(2)).plan().dp_shard, 0);
}

// ---------------------------------------------------------------- 3. torchtitan / AutoModel pipeline micro batch

std::string titan_pp() {
  return replaced(kTitan, "pipeline_parallel_degree = 1", "pipeline_parallel_degree = 4\npipeline_parallel_microbatch_size = 2");
}

TEST(PipelineMicroBatch, TorchtitanSplitsTheLocalBatch) {
  Recipe r = Recipe::from_text("t.toml", titan_pp(), nodes(8));
  Plan p = r.plan();
  EXPECT_EQ(p.world, 64);
  EXPECT_EQ(p.dp, 2);
  EXPECT_EQ(p.mbs, 2);         // pipeline_parallel_microbatch_size
  EXPECT_EQ(p.gbs, 16);        // local_batch_size 8 * dp 2
  EXPECT_EQ(p.grad_accum, 4);  // 8 / 2 micro-batches per step
  EXPECT_EQ(p.tokens_per_step, 16 * 8192);
  EXPECT_TRUE(r.violations().empty());
  // Without the key the micro-batch size is torchtitan's default 1.
  std::string dflt = replaced(titan_pp(), "pipeline_parallel_microbatch_size = 2\n", "");
  Plan d = Recipe::from_text("t.toml", dflt, nodes(8)).plan();
  EXPECT_EQ(d.mbs, 1);
  EXPECT_EQ(d.grad_accum, 8);
  EXPECT_EQ(d.gbs, 16);
}

TEST(PipelineMicroBatch, TorchtitanExplicitGlobalBatchAddsAccumulation) {
  std::string text = replaced(titan_pp(), "local_batch_size = 8", "local_batch_size = 8\nglobal_batch_size = 64");
  Plan p = Recipe::from_text("t.toml", text, nodes(8)).plan();
  EXPECT_EQ(p.gbs, 64);
  EXPECT_EQ(p.grad_accum, 16);  // 4 micro-batches x 4 accumulation steps
}

TEST(PipelineMicroBatch, MbsEditKeepsTheGlobalBatch) {
  Recipe r = Recipe::from_text("t.toml", titan_pp(), nodes(8));
  EditResult e = r.set("mbs", "4");
  ASSERT_EQ(e.changes.size(), 1u);
  EXPECT_EQ(e.changes[0].key, "parallelism.pipeline_parallel_microbatch_size");
  EXPECT_TRUE(e.follow_ups.empty());
  EXPECT_EQ(e.after.mbs, 4);
  EXPECT_EQ(e.after.grad_accum, 2);
  EXPECT_EQ(e.after.gbs, 16);
  EXPECT_NE(r.document().text().find("local_batch_size = 8"), std::string::npos);
  // A micro batch that does not divide the local batch is refused.
  Recipe again = Recipe::from_text("t.toml", titan_pp(), nodes(8));
  EXPECT_THROW(again.set("mbs", "3"), InputError);
}

TEST(PipelineMicroBatch, LayoutEditShrinksTheLocalBatchNotTheMicroBatch) {
  Recipe r = Recipe::from_text("t.toml", titan_pp(), nodes(8));
  EditResult e = r.set("pp", "2");  // dp 2 -> 4: local 8 * dp 4 > the global batch 16
  const Change* gbs = follow_up(e, "training.global_batch_size");
  ASSERT_NE(gbs, nullptr);
  EXPECT_EQ(gbs->new_value->text, "16");
  const Change* local = follow_up(e, "training.local_batch_size");
  ASSERT_NE(local, nullptr);
  EXPECT_EQ(local->new_value->text, "4");
  EXPECT_EQ(e.after.mbs, 2);
  EXPECT_EQ(e.after.gbs, 16);
  EXPECT_EQ(e.after.grad_accum, 2);
}

TEST(PipelineMicroBatch, AutoModelPipelineMicroBatch) {
  std::string text = replaced(kAutoModelSft, "  tp_size: 1\n",
                              "  tp_size: 1\n  pp_size: 2\n  pipeline:\n    pp_microbatch_size: 1\n");
  Recipe r = Recipe::from_text("a.yaml", text, nodes(1));
  Plan p = r.plan();
  EXPECT_EQ(p.dp, 4);
  EXPECT_EQ(p.mbs, 1);
  EXPECT_EQ(p.gbs, 32);
  EXPECT_EQ(p.grad_accum, 8);  // 2 micro-batches x 4 accumulation steps
  EditResult e = r.set("mbs", "2");
  ASSERT_EQ(e.changes.size(), 1u);
  EXPECT_EQ(e.changes[0].key, "distributed.pipeline.pp_microbatch_size");
  EXPECT_EQ(e.after.gbs, 32);
  EXPECT_EQ(e.after.grad_accum, 4);
}

// ---------------------------------------------------------------- 4. HyperPod SMP edits

TEST(SmpEdits, TensorParallelKeepsAFullShardGroupFull) {
  Recipe r = Recipe::from_text("hf.yaml", kSmp);
  EditResult e = r.set("tp", "4");
  const Change* shard = follow_up(e, "model.shard_degree");
  ASSERT_NE(shard, nullptr);
  EXPECT_EQ(shard->new_value->text, "16");  // world 64 / tp 4
  const Change* tbs = follow_up(e, "model.train_batch_size");
  ASSERT_NE(tbs, nullptr);
  EXPECT_EQ(tbs->new_value->text, "4");
  EXPECT_EQ(e.after.gbs, 64);
  EXPECT_EQ(e.after.dp_shard, 16);
  EXPECT_TRUE(r.violations().empty());
}

TEST(SmpEdits, HybridShardDegreeIsKeptOrShrunkToDivide) {
  std::string hybrid = replaced(kSmp, "shard_degree: 64", "shard_degree: 16");
  Recipe kept = Recipe::from_text("hf.yaml", hybrid);
  EditResult e = kept.set("tp", "2");  // 64 / 2 = 32: 16 still divides it
  EXPECT_EQ(follow_up(e, "model.shard_degree"), nullptr);
  std::string wide = replaced(kSmp, "shard_degree: 64", "shard_degree: 32");
  Recipe shrunk = Recipe::from_text("hf.yaml", wide);
  EditResult s = shrunk.set("tp", "4");  // 64 / 4 = 16: 32 no longer fits
  const Change* shard = follow_up(s, "model.shard_degree");
  ASSERT_NE(shard, nullptr);
  EXPECT_EQ(shard->new_value->text, "16");
}

TEST(SmpEdits, MicroBatchAloneIsRefusedWithTheReason) {
  Recipe r = Recipe::from_text("hf.yaml", kSmp);
  try {
    r.set("mbs", "2");
    FAIL() << "expected an InputError";
  } catch (const InputError& err) {
    std::string what = err.what();
    EXPECT_NE(what.find("no gradient-accumulation or global-batch key"), std::string::npos) << what;
    EXPECT_NE(what.find("= 64 samples"), std::string::npos) << what;
    EXPECT_NE(what.find("tp=2"), std::string::npos) << what;
  }
  EXPECT_NE(r.document().text().find("train_batch_size: 1"), std::string::npos);
}

// ---------------------------------------------------------------- 5. defaults of omitted flags

TEST(LeverDefaults, MegatronStoreTrueFlagsAreOffWhenAbsent) {
  Recipe r = Recipe::from_text("train.sh", kMegatron);
  for (const char* name : {"distributed_optimizer", "overlap_grad_reduce", "overlap_param_gather", "tp_comm_overlap",
                           "sequence_parallel", "use_megatron_fsdp"}) {
    auto v = r.value_or_default(name);
    ASSERT_TRUE(v) << name;
    EXPECT_EQ(v->as_bool(), std::optional<bool>(false)) << name;
    bool listed = false;
    for (const auto& lv : r.levers()) {
      if (lv.def->name != name) continue;
      listed = true;
      EXPECT_FALSE(lv.set_in_file) << name;
      EXPECT_EQ(lv.def->default_value, "false") << name;
    }
    EXPECT_TRUE(listed) << name;
  }
  std::string on = replaced(kMegatron, "    --bf16\n", "    --bf16\n    --use-distributed-optimizer\n");
  auto v = Recipe::from_text("train.sh", on).value_or_default("distributed_optimizer");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->as_bool(), std::optional<bool>(true));
}

TEST(LeverDefaults, BridgeOverrideLeavesRecipeSetKnobsUnknown) {
  // An override file is applied on top of a Python recipe: what it omits is the
  // recipe's value, which the file cannot tell.
  Recipe r = Recipe::from_text("b.yaml", kBridge, nodes(2));
  for (const char* name : {"distributed_optimizer", "overlap_grad_reduce", "overlap_param_gather", "tp_comm_overlap",
                           "sequence_parallel"}) {
    EXPECT_FALSE(r.value_or_default(name)) << name;
  }
}

}  // namespace
}  // namespace attune::recipe
