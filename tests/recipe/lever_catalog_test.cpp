#include "attune/recipe/lever_catalog.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "attune/util/error.h"

namespace attune::recipe {
namespace {

const std::vector<std::string> kFrameworks = {"megatron", "automodel", "torchtitan",
                                              "hyperpod", "axolotl",   "bridge"};

TEST(LeverCatalog, EveryBuiltInCatalogParses) {
  for (const auto& fw : kFrameworks) {
    SCOPED_TRACE(fw);
    const LeverCatalog* cat = nullptr;
    ASSERT_NO_THROW(cat = &lever_catalog(fw));
    EXPECT_EQ(cat->framework, fw);
    EXPECT_FALSE(cat->title.empty());
    EXPECT_GT(cat->levers.size(), 40u);
    EXPECT_FALSE(cat->plan_keys.empty());
    EXPECT_FALSE(cat->refused.empty());
  }
}

TEST(LeverCatalog, CachesAndRejectsUnknownFrameworks) {
  EXPECT_EQ(&lever_catalog("megatron"), &lever_catalog("megatron"));
  EXPECT_THROW(lever_catalog("deepspeed"), std::out_of_range);
  EXPECT_THROW(lever_catalog("../megatron"), std::out_of_range);
  EXPECT_THROW(lever_catalog(""), std::out_of_range);
}

TEST(LeverCatalog, EnvRoots) {
  EXPECT_EQ(lever_catalog("megatron").env_root, "");
  EXPECT_EQ(lever_catalog("bridge").env_root, "env_vars");
  EXPECT_EQ(lever_catalog("automodel").env_root, "-");  // only its CI generator reads ci.env_vars
  EXPECT_EQ(lever_catalog("torchtitan").env_root, "-");
  EXPECT_EQ(lever_catalog("hyperpod").env_root, "-");
  EXPECT_EQ(lever_catalog("axolotl").env_root, "-");
}

struct CriticalKey {
  const char* framework;
  const char* dialect;
  const char* name;
  const char* key;
  bool plan;  // plan key rather than lever
};

// The keys the adapters depend on, exactly.
const CriticalKey kCritical[] = {
    // megatron levers
    {"megatron", "", "nodes", "--nnodes", false},
    {"megatron", "", "gpus_per_node", "--nproc_per_node", false},
    {"megatron", "", "tp", "--tensor-model-parallel-size", false},
    {"megatron", "", "pp", "--pipeline-model-parallel-size", false},
    {"megatron", "", "vp", "--num-virtual-stages-per-pipeline-rank", false},
    {"megatron", "", "vp_layers", "--num-layers-per-virtual-pipeline-stage", false},
    {"megatron", "", "cp", "--context-parallel-size", false},
    {"megatron", "", "ep", "--expert-model-parallel-size", false},
    {"megatron", "", "etp", "--expert-tensor-parallel-size", false},
    {"megatron", "", "mbs", "--micro-batch-size", false},
    {"megatron", "", "recompute", "--recompute-granularity", false},
    {"megatron", "", "recompute_activations", "--recompute-activations", false},
    {"megatron", "", "recompute_method", "--recompute-method", false},
    {"megatron", "", "recompute_layers", "--recompute-num-layers", false},
    {"megatron", "", "recompute_modules", "--recompute-modules", false},
    {"megatron", "", "sequence_parallel", "--sequence-parallel", false},
    {"megatron", "", "distributed_optimizer", "--use-distributed-optimizer", false},
    {"megatron", "", "overlap_grad_reduce", "--overlap-grad-reduce", false},
    {"megatron", "", "overlap_param_gather", "--overlap-param-gather", false},
    {"megatron", "", "tp_comm_overlap", "--tp-comm-overlap", false},
    {"megatron", "", "fp8", "--fp8-format", false},
    {"megatron", "", "cuda_device_max_connections", "env.CUDA_DEVICE_MAX_CONNECTIONS", false},
    // megatron plan keys
    {"megatron", "", "gbs", "--global-batch-size", true},
    {"megatron", "", "seq_len", "--seq-length", true},
    {"megatron", "", "layers", "--num-layers", true},
    {"megatron", "", "hidden", "--hidden-size", true},
    {"megatron", "", "heads", "--num-attention-heads", true},
    {"megatron", "", "kv_heads", "--num-query-groups", true},
    {"megatron", "", "ffn", "--ffn-hidden-size", true},
    {"megatron", "", "vocab", "--vocab-size", true},
    {"megatron", "", "experts", "--num-experts", true},
    {"megatron", "", "top_k", "--moe-router-topk", true},
    {"megatron", "", "moe_ffn", "--moe-ffn-hidden-size", true},
    // automodel
    {"automodel", "", "nodes", "benchmark.num_nodes", false},
    {"automodel", "", "tp", "distributed.tp_size", false},
    {"automodel", "", "pp", "distributed.pp_size", false},
    {"automodel", "", "cp", "distributed.cp_size", false},
    {"automodel", "", "ep", "distributed.ep_size", false},
    {"automodel", "", "dp_replicate", "distributed.dp_replicate_size", false},
    {"automodel", "", "mbs", "step_scheduler.local_batch_size", false},
    {"automodel", "", "recompute", "distributed.activation_checkpointing", false},
    {"automodel", "", "sharding", "distributed.strategy", false},
    {"automodel", "", "sequence_parallel", "distributed.sequence_parallel", false},
    {"automodel", "", "compile", "compile.enabled", false},
    {"automodel", "", "attention_backend", "model.backend.attn", false},
    {"automodel", "", "moe_dispatcher", "model.backend.dispatcher", false},
    {"automodel", "", "fp8", "fp8.enabled", false},
    {"automodel", "", "gbs", "step_scheduler.global_batch_size", true},
    {"automodel", "", "dp", "distributed.dp_size", true},
    {"automodel", "", "seq_len", "dataset.seq_len", true},
    {"automodel", "", "precision", "model.torch_dtype", true},
    {"automodel", "", "model_name", "model.pretrained_model_name_or_path", true},
    // torchtitan
    {"torchtitan", "", "tp", "parallelism.tensor_parallel_degree", false},
    {"torchtitan", "", "pp", "parallelism.pipeline_parallel_degree", false},
    {"torchtitan", "", "cp", "parallelism.context_parallel_degree", false},
    {"torchtitan", "", "ep", "parallelism.expert_parallel_degree", false},
    {"torchtitan", "toml", "etp", "parallelism.expert_tensor_parallel_degree", false},
    {"torchtitan", "", "dp_shard", "parallelism.data_parallel_shard_degree", false},
    {"torchtitan", "", "dp_replicate", "parallelism.data_parallel_replicate_degree", false},
    {"torchtitan", "toml", "mbs", "training.local_batch_size", false},
    {"torchtitan", "toml", "pp_microbatch", "parallelism.pipeline_parallel_microbatch_size", false},
    {"torchtitan", "", "pp_schedule", "parallelism.pipeline_parallel_schedule", false},
    {"torchtitan", "", "recompute", "activation_checkpoint.mode", false},
    {"torchtitan", "", "compile", "compile.enable", false},
    {"torchtitan", "toml", "fp8", "model.converters", false},
    {"torchtitan", "toml", "gbs", "training.global_batch_size", true},
    {"torchtitan", "toml", "seq_len", "training.seq_len", true},
    {"torchtitan", "", "precision", "training.mixed_precision_param", true},
    {"torchtitan", "", "model_name", "model.name", true},
    {"torchtitan", "", "model_flavor", "model.flavor", true},
    // torchtitan's Python configs: the batch in tokens
    {"torchtitan", "python", "mbs", "training.num_tokens_per_microbatch_per_dp_rank", false},
    {"torchtitan", "python", "gbs", "training.num_tokens_per_train_step", true},
    {"torchtitan", "python", "seq_len", "training.max_context_length", true},
    // hyperpod smp
    {"hyperpod", "smp", "nodes", "trainer.num_nodes", false},
    {"hyperpod", "smp", "gpus_per_node", "trainer.devices", false},
    {"hyperpod", "smp", "tp", "model.tensor_model_parallel_degree", false},
    {"hyperpod", "smp", "ep", "model.expert_model_parallel_degree", false},
    {"hyperpod", "smp", "cp", "model.context_parallel_degree", false},
    {"hyperpod", "smp", "dp_shard", "model.shard_degree", false},
    {"hyperpod", "smp", "mbs", "model.train_batch_size", false},
    {"hyperpod", "smp", "recompute", "model.activation_checkpointing", false},
    {"hyperpod", "smp", "offload", "model.offload_activations", false},
    {"hyperpod", "smp", "sharding", "model.sharding_strategy", false},
    {"hyperpod", "smp", "fp8", "model.fp8", false},
    {"hyperpod", "smp", "seq_len", "model.max_context_width", true},
    {"hyperpod", "smp", "precision", "trainer.precision", true},
    {"hyperpod", "smp", "layers", "model.num_hidden_layers", true},
    {"hyperpod", "smp", "hidden", "model.hidden_size", true},
    {"hyperpod", "smp", "heads", "model.num_attention_heads", true},
    {"hyperpod", "smp", "kv_heads", "model.num_key_value_heads", true},
    {"hyperpod", "smp", "ffn", "model.intermediate_size", true},
    {"hyperpod", "smp", "vocab", "model.vocab_size", true},
    {"hyperpod", "smp", "experts", "model.num_local_experts", true},
    {"hyperpod", "smp", "top_k", "model.num_experts_per_tok", true},
    {"hyperpod", "smp", "model_name", "model.hf_model_name_or_path", true},
    // hyperpod nemo1
    {"hyperpod", "nemo1", "nodes", "trainer.num_nodes", false},
    {"hyperpod", "nemo1", "gpus_per_node", "trainer.devices", false},
    {"hyperpod", "nemo1", "tp", "model.tensor_model_parallel_size", false},
    {"hyperpod", "nemo1", "pp", "model.pipeline_model_parallel_size", false},
    {"hyperpod", "nemo1", "vp", "model.virtual_pipeline_model_parallel_size", false},
    {"hyperpod", "nemo1", "cp", "model.context_parallel_size", false},
    {"hyperpod", "nemo1", "mbs", "model.micro_batch_size", false},
    {"hyperpod", "nemo1", "sequence_parallel", "model.sequence_parallel", false},
    {"hyperpod", "nemo1", "recompute", "model.activations_checkpoint_granularity", false},
    {"hyperpod", "nemo1", "fp8", "model.fp8", false},
    {"hyperpod", "nemo1", "gbs", "model.global_batch_size", true},
    {"hyperpod", "nemo1", "seq_len", "model.encoder_seq_length", true},
    {"hyperpod", "nemo1", "layers", "model.num_layers", true},
    {"hyperpod", "nemo1", "hidden", "model.hidden_size", true},
    {"hyperpod", "nemo1", "heads", "model.num_attention_heads", true},
    {"hyperpod", "nemo1", "kv_heads", "model.num_query_groups", true},
    {"hyperpod", "nemo1", "ffn", "model.ffn_hidden_size", true},
    {"hyperpod", "nemo1", "precision", "trainer.precision", true},
    // hyperpod checkpointless
    {"hyperpod", "checkpointless", "nodes", "trainer.num_nodes", false},
    {"hyperpod", "checkpointless", "gpus_per_node", "trainer.devices", false},
    {"hyperpod", "checkpointless", "tp", "strategy.tensor_model_parallel_size", false},
    {"hyperpod", "checkpointless", "pp", "strategy.pipeline_model_parallel_size", false},
    {"hyperpod", "checkpointless", "vp", "strategy.virtual_pipeline_model_parallel_size", false},
    {"hyperpod", "checkpointless", "cp", "strategy.context_parallel_size", false},
    {"hyperpod", "checkpointless", "ep", "strategy.expert_model_parallel_size", false},
    {"hyperpod", "checkpointless", "mbs", "data.micro_batch_size", false},
    {"hyperpod", "checkpointless", "sequence_parallel", "strategy.sequence_parallel", false},
    {"hyperpod", "checkpointless", "overlap_param_gather", "ddp.overlap_param_gather", false},
    {"hyperpod", "checkpointless", "overlap_grad_reduce", "ddp.overlap_grad_reduce", false},
    {"hyperpod", "checkpointless", "distributed_optimizer", "optim.config.use_distributed_optimizer",
     false},
    {"hyperpod", "checkpointless", "gbs", "data.global_batch_size", true},
    {"hyperpod", "checkpointless", "seq_len", "data.seq_length", true},
    {"hyperpod", "checkpointless", "precision", "plugins.precision", true},
    {"hyperpod", "checkpointless", "vocab", "model.config.vocab_size", true},
    // hyperpod llmft
    {"hyperpod", "llmft", "nodes", "trainer.num_nodes", false},
    {"hyperpod", "llmft", "gpus_per_node", "trainer.devices", false},
    {"hyperpod", "llmft", "mbs", "training_config.training_args.micro_train_batch_size", false},
    {"hyperpod", "llmft", "cp", "training_config.training_args.ring_attn_size", false},
    {"hyperpod", "llmft", "recompute", "training_config.training_args.gradient_checkpointing", false},
    {"hyperpod", "llmft", "sharding",
     "training_config.training_args.strategy.fsdp_config.sharding_strategy", false},
    {"hyperpod", "llmft", "attention_backend", "training_config.model_config.attn_implementation",
     false},
    {"hyperpod", "llmft", "gbs", "training_config.training_args.train_batch_size", true},
    {"hyperpod", "llmft", "seq_len", "training_config.training_args.max_len", true},
    {"hyperpod", "llmft", "model_name", "training_config.model_config.model_name_or_path", true},
    // axolotl
    {"axolotl", "", "mbs", "micro_batch_size", false},
    {"axolotl", "", "tp", "tensor_parallel_size", false},
    {"axolotl", "", "cp", "context_parallel_size", false},
    {"axolotl", "", "ep", "expert_parallel_size", false},
    {"axolotl", "", "dp_shard", "dp_shard_size", false},
    {"axolotl", "", "dp_replicate", "dp_replicate_size", false},
    {"axolotl", "", "recompute", "gradient_checkpointing", false},
    {"axolotl", "", "attention_backend", "attn_implementation", false},
    {"axolotl", "", "compile", "torch_compile", false},
    {"axolotl", "", "grad_accum", "gradient_accumulation_steps", true},
    {"axolotl", "", "seq_len", "sequence_len", true},
    {"axolotl", "", "precision", "bf16", true},
    {"axolotl", "", "model_name", "base_model", true},
    // bridge
    {"bridge", "", "tp", "model.tensor_model_parallel_size", false},
    {"bridge", "", "pp", "model.pipeline_model_parallel_size", false},
    {"bridge", "", "vp", "model.virtual_pipeline_model_parallel_size", false},
    {"bridge", "", "cp", "model.context_parallel_size", false},
    {"bridge", "", "ep", "model.expert_model_parallel_size", false},
    {"bridge", "", "etp", "model.expert_tensor_parallel_size", false},
    {"bridge", "", "mbs", "train.micro_batch_size", false},
    {"bridge", "", "sequence_parallel", "model.sequence_parallel", false},
    {"bridge", "", "recompute", "model.recompute_granularity", false},
    {"bridge", "", "recompute_method", "model.recompute_method", false},
    {"bridge", "", "recompute_layers", "model.recompute_num_layers", false},
    {"bridge", "", "overlap_grad_reduce", "ddp.overlap_grad_reduce", false},
    {"bridge", "", "overlap_param_gather", "ddp.overlap_param_gather", false},
    {"bridge", "", "distributed_optimizer", "ddp.use_distributed_optimizer", false},
    {"bridge", "", "tp_comm_overlap", "comm_overlap.tp_comm_overlap", false},
    {"bridge", "", "cuda_graphs", "model.cuda_graph_impl", false},
    {"bridge", "", "moe_dispatcher", "model.moe_token_dispatcher_type", false},
    {"bridge", "", "gbs", "train.global_batch_size", true},
    {"bridge", "", "seq_len", "model.seq_length", true},
    {"bridge", "", "precision", "mixed_precision", true},
};

TEST(LeverCatalog, AdapterCriticalKeysAreExact) {
  for (const auto& c : kCritical) {
    SCOPED_TRACE(std::string(c.framework) + "/" + c.dialect + "/" + c.name);
    const LeverCatalog& cat = lever_catalog(c.framework);
    if (c.plan) {
      const PlanKey* pk = cat.plan_key(c.name, c.dialect);
      ASSERT_NE(pk, nullptr);
      EXPECT_EQ(pk->key, c.key);
      EXPECT_EQ(pk->dialect, c.dialect);
      // Plan keys are frozen: never a lever.
      EXPECT_EQ(cat.by_key(c.key, c.dialect), nullptr);
    } else {
      const LeverDef* l = cat.by_name(c.name, c.dialect);
      ASSERT_NE(l, nullptr);
      EXPECT_EQ(l->key, c.key);
      if (std::string(c.framework) == "hyperpod") {
        EXPECT_EQ(l->dialect, c.dialect);
      }
      EXPECT_EQ(cat.by_key(c.key, c.dialect), l);
    }
  }
}

TEST(LeverCatalog, AdapterCriticalTypes) {
  const auto& mlm = lever_catalog("megatron");
  EXPECT_EQ(mlm.by_name("recompute")->type, LeverType::Enum);
  EXPECT_EQ(mlm.by_name("recompute")->values, (std::vector<std::string>{"full", "selective"}));
  EXPECT_EQ(mlm.by_name("recompute_activations")->type, LeverType::Bool);
  EXPECT_EQ(mlm.by_name("tp")->type, LeverType::Int);
  EXPECT_EQ(mlm.by_name("tp")->min, 1.0);
  EXPECT_EQ(mlm.by_name("tp")->default_value, "1");

  const auto& am = lever_catalog("automodel");
  EXPECT_EQ(am.by_name("sharding")->values,
            (std::vector<std::string>{"fsdp2", "megatron_fsdp", "ddp"}));
  EXPECT_EQ(am.by_name("fp8")->safety, LeverSafety::Numerics);

  const auto& tt = lever_catalog("torchtitan");
  EXPECT_EQ(tt.by_name("recompute")->values,
            (std::vector<std::string>{"none", "selective", "full", "memory_budget"}));
  EXPECT_EQ(tt.by_name("fp8")->type, LeverType::List);
  EXPECT_EQ(tt.by_name("fp8")->safety, LeverSafety::Numerics);

  const auto& hp = lever_catalog("hyperpod");
  EXPECT_EQ(hp.by_name("recompute", "smp")->type, LeverType::Bool);
  EXPECT_EQ(hp.by_name("recompute", "llmft")->type, LeverType::Bool);
  const LeverDef* smp_fp8 = hp.by_name("fp8", "smp");
  EXPECT_EQ(smp_fp8->default_value, "true");
  EXPECT_EQ(smp_fp8->safety, LeverSafety::Numerics);
  EXPECT_EQ(smp_fp8->allow_name, "fp8");

  const auto& br = lever_catalog("bridge");
  const PlanKey* seq = br.plan_key("seq_len");
  ASSERT_NE(seq, nullptr);
  EXPECT_EQ(seq->aliases, (std::vector<std::string>{"dataset.seq_length"}));
}

TEST(LeverCatalog, EveryLeverIsWellFormed) {
  const std::set<std::string> dialects = {"smp", "nemo1", "checkpointless", "llmft"};
  for (const auto& fw : kFrameworks) {
    const LeverCatalog& cat = lever_catalog(fw);
    for (const auto& l : cat.levers) {
      SCOPED_TRACE(fw + "/" + l.name);
      EXPECT_FALSE(l.name.empty());
      EXPECT_FALSE(l.trades.empty());
      EXPECT_NE(l.key.empty(), l.pattern.empty()) << "needs exactly one of key/pattern";
      if (l.type == LeverType::Enum) {
        EXPECT_FALSE(l.values.empty());
      } else {
        EXPECT_TRUE(l.values.empty());
      }
      if (l.safety == LeverSafety::Numerics) {
        EXPECT_FALSE(l.allow_name.empty());
      } else {
        EXPECT_TRUE(l.allow_name.empty());
      }
      if (l.min && l.max) {
        EXPECT_LE(*l.min, *l.max);
      }
      if (fw == "hyperpod") {
        const std::string& where = l.key.empty() ? l.pattern : l.key;
        if (l.dialect.empty()) {
          EXPECT_EQ(where.rfind("env.", 0), 0u) << "only env levers span all dialects";
        } else {
          EXPECT_TRUE(dialects.count(l.dialect));
        }
      } else if (fw == "torchtitan") {
        EXPECT_TRUE(l.dialect.empty() || l.dialect == "toml" || l.dialect == "python") << l.dialect;
      } else {
        EXPECT_TRUE(l.dialect.empty());
      }
      // A lever's own key finds it again.
      if (!l.key.empty()) {
        EXPECT_EQ(cat.by_key(l.key, l.dialect), &l);
      }
      for (const auto& a : l.aliases) EXPECT_EQ(cat.by_key(a, l.dialect), &l);
    }
    for (const auto& r : cat.refused) {
      SCOPED_TRACE(fw + "/refused/" + r.key);
      EXPECT_FALSE(r.reason.empty());
      // A refused key is never an exact lever key.
      for (const auto& l : cat.levers) EXPECT_FALSE(!l.key.empty() && glob_match(r.key, l.key));
    }
  }
}

TEST(LeverCatalog, CanonicalNamesAreUsedWhereTheKnobExists) {
  // Every framework has these under the canonical name.
  for (const auto& fw : kFrameworks) {
    SCOPED_TRACE(fw);
    const LeverCatalog& cat = lever_catalog(fw);
    const std::string dialect = fw == "hyperpod" ? "checkpointless" : "";
    for (const char* name : {"tp", "cp", "mbs"}) {
      EXPECT_NE(cat.by_name(name, dialect), nullptr) << name;
    }
    EXPECT_NE(cat.by_name("cuda_device_max_connections", dialect), nullptr);
    EXPECT_NE(cat.by_name("env_nccl", dialect), nullptr);
  }
}

struct FrozenKey {
  const char* framework;
  const char* dialect;
  const char* key;
};

// Objective-changing settings are never levers.
const FrozenKey kFrozen[] = {
    {"megatron", "", "--global-batch-size"},
    {"megatron", "", "--lr"},
    {"megatron", "", "--seq-length"},
    {"megatron", "", "--seed"},
    {"megatron", "", "--num-layers"},
    {"megatron", "", "--hidden-dropout"},
    {"megatron", "", "--moe-router-force-load-balancing"},
    {"megatron", "", "--moe-expert-capacity-factor"},
    {"megatron", "", "--moe-pad-expert-input-to-capacity"},
    {"megatron", "", "--moe-router-topk"},
    {"megatron", "", "--moe-aux-loss-coeff"},
    {"megatron", "", "--dataloader-type"},
    {"megatron", "", "--calculate-per-token-loss"},
    {"megatron", "", "--rampup-batch-size"},
    {"megatron", "", "--cross-entropy-fusion-impl-te"},
    {"automodel", "", "step_scheduler.global_batch_size"},
    {"automodel", "", "optimizer.lr"},
    {"automodel", "", "model.backend.fake_balanced_gate"},
    {"automodel", "", "model.backend.fake_gate_noise"},
    {"automodel", "", "dataset.seq_len"},
    {"automodel", "", "peft.dim"},
    {"automodel", "", "packed_sequence.packed_sequence_size"},
    {"automodel", "", "seed"},
    {"torchtitan", "", "training.global_batch_size"},
    {"torchtitan", "", "training.seq_len"},
    {"torchtitan", "", "training.steps"},
    {"torchtitan", "", "debug.moe_force_load_balance"},
    {"torchtitan", "", "debug.seed"},
    {"torchtitan", "", "optimizer.lr"},
    {"torchtitan", "", "lr_scheduler.warmup_steps"},
    {"hyperpod", "smp", "model.moe_load_balancing"},
    {"hyperpod", "smp", "model.global_token_shuffle"},
    {"hyperpod", "smp", "model.optim.lr"},
    {"hyperpod", "smp", "model.max_context_width"},
    {"hyperpod", "smp", "model.peft.rank"},
    {"hyperpod", "nemo1", "model.global_batch_size"},
    {"hyperpod", "nemo1", "model.hidden_dropout"},
    {"hyperpod", "llmft", "training_config.training_args.learning_rate"},
    {"hyperpod", "llmft", "training_config.training_args.packing_samples"},
    {"hyperpod", "llmft", "training_config.training_args.uneven_batch.use_uneven_batch"},
    {"axolotl", "", "gradient_accumulation_steps"},
    {"axolotl", "", "learning_rate"},
    {"axolotl", "", "sample_packing"},
    {"axolotl", "", "lora_r"},
    {"axolotl", "", "liger_use_token_scaling"},
    {"axolotl", "", "sequence_len"},
    {"axolotl", "", "neftune_noise_alpha"},
    {"axolotl", "", "expert_parallel_token_capacity"},
    {"bridge", "", "train.global_batch_size"},
    {"bridge", "", "model.seq_length"},
    {"bridge", "", "model.moe_router_force_load_balancing"},
    {"bridge", "", "model.moe_expert_capacity_factor"},
    {"bridge", "", "optimizer.lr"},
    {"bridge", "", "rng.seed"},
    {"bridge", "", "dataset.seq_length"},
};

TEST(LeverCatalog, ObjectiveSettingsAreNeverLevers) {
  for (const auto& f : kFrozen) {
    SCOPED_TRACE(std::string(f.framework) + " " + f.key);
    EXPECT_EQ(lever_catalog(f.framework).by_key(f.key, f.dialect), nullptr);
  }
}

TEST(LeverCatalog, GreySettingsNeedAnAllowName) {
  const std::vector<std::pair<std::string, std::string>> grey = {
      {"megatron", "--fp8-format"},
      {"megatron", "--fp8-recipe"},
      {"megatron", "--grad-reduce-in-bf16"},
      {"megatron", "--use-precision-aware-optimizer"},
      {"megatron", "--moe-router-dtype"},
      {"megatron", "--deterministic-mode"},
      {"megatron", "--fp4-format"},
      {"automodel", "fp8.enabled"},
      {"automodel", "model.backend.rms_norm"},
      {"automodel", "distributed.mp_policy.reduce_dtype"},
      {"torchtitan", "model.converters"},
      {"torchtitan", "training.dtype"},
      {"torchtitan", "debug.deterministic"},
      {"axolotl", "fp8"},
      {"axolotl", "tf32"},
      {"axolotl", "fp32_norms"},
      {"bridge", "mixed_precision.fp8"},
      {"bridge", "ddp.grad_reduce_in_fp32"},
      {"bridge", "optimizer.use_precision_aware_optimizer"},
  };
  for (const auto& [fw, key] : grey) {
    SCOPED_TRACE(fw + " " + key);
    const LeverDef* l = lever_catalog(fw).by_key(key);
    ASSERT_NE(l, nullptr);
    EXPECT_EQ(l->safety, LeverSafety::Numerics);
    EXPECT_FALSE(l->allow_name.empty());
  }
  const auto& hp = lever_catalog("hyperpod");
  EXPECT_EQ(hp.by_key("model.fp8", "smp")->safety, LeverSafety::Numerics);
  EXPECT_EQ(hp.by_key("model.fp8", "nemo1")->safety, LeverSafety::Numerics);
  EXPECT_EQ(hp.by_key("ddp.grad_reduce_in_fp32", "checkpointless")->safety, LeverSafety::Numerics);
  // Throughput levers need no opt-in.
  EXPECT_EQ(lever_catalog("megatron").by_name("tp")->safety, LeverSafety::Throughput);
}

TEST(GlobMatch, Cases) {
  EXPECT_TRUE(glob_match("env.NCCL_*", "env.NCCL_BUFFSIZE"));
  EXPECT_TRUE(glob_match("env.NCCL_*", "env.NCCL_"));
  EXPECT_FALSE(glob_match("env.NCCL_*", "env.TORCH_NCCL_X"));
  EXPECT_FALSE(glob_match("env.NCCL_*", "env.NCCL"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("*", "anything"));
  EXPECT_TRUE(glob_match("", ""));
  EXPECT_FALSE(glob_match("", "x"));
  EXPECT_TRUE(glob_match("a?c", "abc"));
  EXPECT_FALSE(glob_match("a?c", "ac"));
  EXPECT_TRUE(glob_match("env.NVTE_*FP8*", "env.NVTE_FP8_DPA_BWD"));
  EXPECT_TRUE(glob_match("env.NVTE_*FP8*", "env.NVTE_USE_FP8"));
  EXPECT_FALSE(glob_match("env.NVTE_*FP8*", "env.NVTE_FUSED_ATTN"));
  EXPECT_TRUE(glob_match("callbacks[*].tp_comm_overlap", "callbacks[2].tp_comm_overlap"));
  EXPECT_FALSE(glob_match("callbacks[*].tp_comm_overlap", "callbacks[2].gc_interval_train"));
  EXPECT_TRUE(glob_match("a*b*c", "aXXbYYc"));
  EXPECT_TRUE(glob_match("a*b*c", "abbbc"));
  EXPECT_FALSE(glob_match("a*b*c", "abbbcd"));
  EXPECT_TRUE(glob_match("**x", "yyx"));
}

TEST(LeverCatalog, ByKeyFindsAliasesAndPatterns) {
  const auto& mlm = lever_catalog("megatron");
  EXPECT_EQ(mlm.by_key("--tensor_model_parallel_size"), mlm.by_name("tp"));
  EXPECT_EQ(mlm.by_key("--nproc-per-node"), mlm.by_name("gpus_per_node"));
  // `--a_b` and `--a-b` are the same Megatron flag even without an alias entry.
  EXPECT_EQ(mlm.by_key("--overlap_param_gather_with_optimizer_step"),
            mlm.by_name("overlap_param_gather_with_optimizer_step"));
  EXPECT_EQ(mlm.by_key("--moe-router-padding-for-fp8"),
            mlm.by_name("moe_router_padding_for_quantization"));
  // Exact env keys win over their family's pattern.
  EXPECT_EQ(mlm.by_key("env.CUDA_DEVICE_MAX_CONNECTIONS"), mlm.by_name("cuda_device_max_connections"));
  EXPECT_EQ(mlm.by_key("env.NCCL_NVLS_ENABLE"), mlm.by_name("nccl_nvls_enable"));
  const LeverDef* nccl = mlm.by_key("env.NCCL_BUFFSIZE");
  ASSERT_NE(nccl, nullptr);
  EXPECT_EQ(nccl->name, "env_nccl");
  EXPECT_EQ(nccl->pattern, "env.NCCL_*");
  EXPECT_EQ(mlm.by_key("env.TORCH_NCCL_ASYNC_ERROR_HANDLING")->name, "env_torch_nccl");
  EXPECT_EQ(mlm.by_key("env.FI_PROVIDER")->name, "env_efa");
  EXPECT_EQ(mlm.by_key("env.NVTE_FUSED_ATTN")->name, "nvte_fused_attn");
  // Refused members of a family never match the family.
  EXPECT_EQ(mlm.by_key("env.NCCL_ALGO"), nullptr);
  EXPECT_EQ(mlm.by_key("env.NVTE_ALLOW_NONDETERMINISTIC_ALGO"), nullptr);
  EXPECT_EQ(mlm.by_key("env.NVTE_USE_FAST_MATH"), nullptr);
  EXPECT_EQ(mlm.by_key("env.NVTE_FP8_DPA_BWD"), nullptr);
  EXPECT_EQ(mlm.by_key("env.CUBLAS_WORKSPACE_CONFIG"), nullptr);
  EXPECT_EQ(mlm.by_key("env.LD_LIBRARY_PATH"), nullptr);
  EXPECT_EQ(mlm.by_key("--no-such-flag"), nullptr);
  EXPECT_EQ(mlm.by_key("tensor-model-parallel-size"), nullptr);

  // The same refused set in every catalog.
  for (const auto& fw : kFrameworks) {
    SCOPED_TRACE(fw);
    const auto& cat = lever_catalog(fw);
    std::set<std::string> refused;
    for (const auto& r : cat.refused) refused.insert(r.key);
    for (const char* k : {"env.NCCL_ALGO", "env.NVTE_ALLOW_NONDETERMINISTIC_ALGO",
                          "env.NVTE_USE_FAST_MATH", "env.CUBLAS_WORKSPACE_CONFIG",
                          "env.NVIDIA_TF32_OVERRIDE"}) {
      EXPECT_TRUE(refused.count(k)) << k;
      EXPECT_EQ(cat.by_key(k), nullptr) << k;
    }
    EXPECT_NE(cat.by_key("env.NCCL_SOCKET_IFNAME"), nullptr);
  }

  const auto& am = lever_catalog("automodel");
  EXPECT_EQ(am.by_key("ci.nodes"), am.by_name("nodes"));
  EXPECT_EQ(am.by_key("model.backend.cuda_graph.enabled")->name, "backend_cuda_graph");
  const auto& br = lever_catalog("bridge");
  EXPECT_EQ(br.by_key("optimizer.use_distributed_optimizer"), br.by_name("distributed_optimizer"));
  const auto& ax = lever_catalog("axolotl");
  EXPECT_EQ(ax.by_key("sequence_parallel_degree"), ax.by_name("cp"));
  EXPECT_EQ(ax.by_key("fsdp_config.fsdp_offload_params"), ax.by_name("offload"));
}

TEST(LeverCatalog, HyperPodDialectFiltering) {
  const auto& hp = lever_catalog("hyperpod");
  EXPECT_EQ(hp.by_name("tp", "smp")->key, "model.tensor_model_parallel_degree");
  EXPECT_EQ(hp.by_name("tp", "nemo1")->key, "model.tensor_model_parallel_size");
  EXPECT_EQ(hp.by_name("tp", "checkpointless")->key, "strategy.tensor_model_parallel_size");
  EXPECT_EQ(hp.by_name("tp", "llmft"), nullptr);
  EXPECT_NE(hp.by_name("tp"), nullptr);  // no dialect: the first one

  EXPECT_EQ(hp.by_key("model.tensor_model_parallel_size", "smp"), nullptr);
  EXPECT_EQ(hp.by_key("model.tensor_model_parallel_size", "nemo1")->dialect, "nemo1");
  EXPECT_EQ(hp.by_key("model.tensor_model_parallel_degree", "nemo1"), nullptr);
  EXPECT_EQ(hp.by_key("trainer.num_nodes", "llmft")->dialect, "llmft");
  EXPECT_EQ(hp.by_key("trainer.num_nodes", "smp")->dialect, "smp");
  EXPECT_EQ(hp.by_key("model.fp8", "checkpointless"), nullptr);
  EXPECT_EQ(hp.by_key("callbacks[3].tp_comm_overlap", "checkpointless")->name, "tp_comm_overlap");
  EXPECT_EQ(hp.by_key("callbacks[3].tp_comm_overlap", "smp"), nullptr);
  // Environment levers span all dialects.
  for (const char* d : {"smp", "nemo1", "checkpointless", "llmft"}) {
    EXPECT_NE(hp.by_key("env.NCCL_DEBUG", d), nullptr) << d;
    EXPECT_EQ(hp.by_key("env.NCCL_ALGO", d), nullptr) << d;
  }

  EXPECT_EQ(hp.plan_key("gbs", "smp"), nullptr);  // SMP implies the global batch
  EXPECT_EQ(hp.plan_key("gbs", "nemo1")->key, "model.global_batch_size");
  EXPECT_EQ(hp.plan_key("gbs", "checkpointless")->key, "data.global_batch_size");
  EXPECT_EQ(hp.plan_key("gbs", "llmft")->key, "training_config.training_args.train_batch_size");
  EXPECT_EQ(hp.plan_key("seq_len", "nemo1")->aliases,
            (std::vector<std::string>{"model.data.seq_length"}));
}

TEST(LeverCatalog, MostSpecificPatternWins) {
  const std::string yaml = R"(framework: megatron
title: T
env_root: ""
levers:
  - {name: env_any, pattern: "env.*", type: string, trades: "any"}
  - {name: env_nccl, pattern: "env.NCCL_*", type: string, trades: "nccl"}
refused:
  - {key: env.NCCL_ALGO, reason: "determinism"}
)";
  const LeverCatalog cat = parse_lever_catalog("t.yaml", yaml);
  EXPECT_EQ(cat.by_key("env.NCCL_PROTO")->name, "env_nccl");
  EXPECT_EQ(cat.by_key("env.FOO")->name, "env_any");
  EXPECT_EQ(cat.by_key("env.NCCL_ALGO"), nullptr);
  EXPECT_EQ(cat.by_key("other"), nullptr);
}

// Parses `yaml` and returns the InputError it must raise.
InputError parse_error(const std::string& yaml) {
  try {
    parse_lever_catalog("bad.yaml", yaml);
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no InputError for:\n" << yaml;
  return InputError(SourceLocation{}, "", "");
}

const char* kHeader = "framework: megatron\ntitle: T\nenv_root: \"\"\nlevers:\n";

TEST(ParseLeverCatalog, MinimalCatalog) {
  const LeverCatalog cat = parse_lever_catalog(
      "ok.yaml", std::string(kHeader) +
                     "  - name: tp\n"
                     "    key: --tensor-model-parallel-size\n"
                     "    aliases: [--tp]\n"
                     "    type: int\n"
                     "    min: 1\n"
                     "    max: 64\n"
                     "    default: 1\n"
                     "    trades: \"less memory\"\n"
                     "    constraints: [\"heads % tp == 0\"]\n"
                     "  - name: fp8\n"
                     "    key: --fp8-format\n"
                     "    type: enum\n"
                     "    values: [e4m3, hybrid]\n"
                     "    safety: numerics\n"
                     "    allow: fp8\n"
                     "    trades: \"faster\"\n"
                     "plan_keys:\n"
                     "  - {name: gbs, key: --global-batch-size}\n");
  ASSERT_EQ(cat.levers.size(), 2u);
  const LeverDef& tp = cat.levers[0];
  EXPECT_EQ(tp.name, "tp");
  EXPECT_EQ(tp.aliases, (std::vector<std::string>{"--tp"}));
  EXPECT_EQ(tp.min, 1.0);
  EXPECT_EQ(tp.max, 64.0);
  EXPECT_EQ(tp.default_value, "1");
  EXPECT_EQ(tp.constraints, (std::vector<std::string>{"heads % tp == 0"}));
  EXPECT_EQ(tp.safety, LeverSafety::Throughput);
  EXPECT_EQ(cat.levers[1].type, LeverType::Enum);
  EXPECT_EQ(cat.levers[1].allow_name, "fp8");
  EXPECT_EQ(cat.plan_key("gbs")->key, "--global-batch-size");
  EXPECT_TRUE(cat.refused.empty());
}

TEST(ParseLeverCatalog, MissingKeyNamesTheLine) {
  const InputError e = parse_error(std::string(kHeader) +
                                   "  - name: ok\n"
                                   "    key: --ok\n"
                                   "    type: bool\n"
                                   "    trades: \"x\"\n"
                                   "  - name: tp\n"  // line 9
                                   "    type: int\n"
                                   "    trades: \"x\"\n");
  EXPECT_EQ(e.where().file, "bad.yaml");
  EXPECT_EQ(e.where().line, 9);
  EXPECT_NE(std::string(e.what()).find("bad.yaml:9"), std::string::npos) << e.what();
  EXPECT_NE(e.message().find("key"), std::string::npos);
}

TEST(ParseLeverCatalog, UnknownTypeNamesTheLine) {
  const InputError e = parse_error(std::string(kHeader) +
                                   "  - name: tp\n"
                                   "    key: --tp\n"
                                   "    type: integer\n"  // line 7
                                   "    trades: \"x\"\n");
  EXPECT_EQ(e.where().line, 7);
  EXPECT_EQ(e.key(), "type");
  EXPECT_NE(e.message().find("integer"), std::string::npos);
}

TEST(ParseLeverCatalog, UnknownFieldNamesTheLine) {
  const InputError e = parse_error(std::string(kHeader) +
                                   "  - name: tp\n"
                                   "    key: --tp\n"
                                   "    type: int\n"
                                   "    trade: \"x\"\n");  // line 8
  EXPECT_EQ(e.where().line, 8);
  EXPECT_EQ(e.key(), "trade");
  const InputError top = parse_error("framework: megatron\ntitle: T\nenv_root: \"\"\nlevers: []\nextra: 1\n");
  EXPECT_EQ(top.where().line, 5);
}

TEST(ParseLeverCatalog, RejectsInconsistentLevers) {
  const std::string lever = "  - name: x\n    key: --x\n    trades: \"t\"\n";
  // enum without values
  EXPECT_EQ(parse_error(std::string(kHeader) + lever + "    type: enum\n").where().line, 5);
  // values on a non-enum
  parse_error(std::string(kHeader) + lever + "    type: int\n    values: [a]\n");
  // numerics without allow, allow without numerics
  parse_error(std::string(kHeader) + lever + "    type: bool\n    safety: numerics\n");
  parse_error(std::string(kHeader) + lever + "    type: bool\n    allow: fp8\n");
  parse_error(std::string(kHeader) + lever + "    type: bool\n    safety: maybe\n");
  // default outside the enum
  parse_error(std::string(kHeader) + lever + "    type: enum\n    values: [a]\n    default: b\n");
  // min above max, min on a bool, non-numeric min
  parse_error(std::string(kHeader) + lever + "    type: int\n    min: 4\n    max: 2\n");
  parse_error(std::string(kHeader) + lever + "    type: bool\n    min: 1\n");
  parse_error(std::string(kHeader) + lever + "    type: int\n    min: one\n");
  // no trades, no type, both key and pattern, bad name
  parse_error(std::string(kHeader) + "  - {name: x, key: --x, type: int}\n");
  parse_error(std::string(kHeader) + "  - {name: x, key: --x, trades: t}\n");
  parse_error(std::string(kHeader) + "  - {name: x, key: --x, pattern: \"env.*\", type: int, trades: t}\n");
  parse_error(std::string(kHeader) + "  - {name: X-y, key: --x, type: int, trades: t}\n");
  // duplicate name, duplicate key (also as a -/_ spelling)
  parse_error(std::string(kHeader) + "  - {name: x, key: --x, type: int, trades: t}\n" +
              "  - {name: x, key: --y, type: int, trades: t}\n");
  parse_error(std::string(kHeader) + "  - {name: x, key: --a-b, type: int, trades: t}\n" +
              "  - {name: y, key: --a_b, type: int, trades: t}\n");
  // dialect outside hyperpod, unknown dialect
  parse_error(std::string(kHeader) + "  - {name: x, key: --x, type: int, trades: t, dialect: smp}\n");
  const std::string hp = "framework: hyperpod\ntitle: T\nenv_root: \"-\"\nlevers:\n";
  parse_error(hp + "  - {name: x, key: a.b, type: int, trades: t, dialect: nemo2}\n");
  // the same name in two dialects is fine
  const LeverCatalog ok = parse_lever_catalog(
      "ok.yaml", hp + "  - {name: x, key: a.b, type: int, trades: t, dialect: smp}\n" +
                     "  - {name: x, key: a.b, type: int, trades: t, dialect: nemo1}\n");
  EXPECT_EQ(ok.by_name("x", "nemo1")->dialect, "nemo1");
  // a plan key that is also a lever
  parse_error(std::string(kHeader) + "  - {name: x, key: --x, type: int, trades: t}\n" +
              "plan_keys:\n  - {name: gbs, key: --x}\n");
  // refused without reason
  parse_error(std::string(kHeader) + "  - {name: x, key: --x, type: int, trades: t}\n" +
              "refused:\n  - {key: env.X}\n");
}

TEST(ParseLeverCatalog, RejectsMalformedDocuments) {
  EXPECT_GT(parse_error("framework: megatron\ntitle: [unclosed\n").where().line, 0);
  parse_error("- a\n- b\n");
  parse_error("title: T\nenv_root: \"\"\nlevers: []\n");                         // no framework
  parse_error("framework: deepspeed\ntitle: T\nenv_root: \"\"\nlevers: []\n");   // unknown one
  parse_error("framework: megatron\ntitle: T\nlevers: []\n");                    // no env_root
  parse_error("framework: megatron\ntitle: T\nenv_root: \"\"\n");                // no levers
  parse_error("framework: megatron\ntitle: T\nenv_root: \"\"\nlevers: {a: 1}\n");
}

}  // namespace
}  // namespace attune::recipe
