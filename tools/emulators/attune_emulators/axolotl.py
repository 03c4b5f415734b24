"""axolotl 0.18.0 (axolotl-ai-cloud/axolotl 067b021, `v0.18.0-9`) as its entry
points behave, for the framework emulators:

- `axolotl train CONFIG [--launcher accelerate|torchrun|python] [opts] [-- launcher args]`
  and `axolotl preprocess CONFIG [opts]`: the click group of axolotl.cli.main
  (logo, option parsing and click's usage errors, the exec of the launcher
  command line exactly as cli/utils/train.py builds it);
- `python -m axolotl.cli.train CONFIG [--key value ...]` (what the launcher runs
  on every rank) and `python -m axolotl.cli.preprocess CONFIG`: python-fire's
  argument handling, load_cfg (PyYAML, CLI overrides, plugins, the pydantic
  validation of AxolotlConfigWCapabilities with its error text, normalize_config),
  the dataset preparation and its cache, the world-size checks of the parallelism
  config, then the HF Trainer's run: the tqdm bar, the per-logging_steps dict with
  axolotl's extra keys, evaluation, checkpoint-N saves and rotation, resume, the
  end-of-training summary and final save, SIGINT/SIGTERM handling, exit codes.

Everything reproduced is cited in the framework section of docs/frameworks.md;
data, tokenizers, weights and the hub are the emulated node's (present, not read).
"""

import json
import math
import os
import signal
import sys
import time
import uuid

from . import harness

VERSION = "0.18.0"
SITE = "/usr/local/lib/python3.11/site-packages"  # where tracebacks say axolotl lives (emulator's choice)
CONSOLE = "/usr/local/bin/axolotl"
PYDANTIC_URL = "https://errors.pydantic.dev/2.12/v/"  # pydantic==2.12.5 (pyproject.toml)
TITLE = "AxolotlConfigWCapabilities"
DEFAULT_PREPARED = "last_run_prepared"  # common/const.py

# The emulator's own choices where only the data could say (docs: "not determinable").
ROWS_PER_DATASET = 10000      # rows each `datasets:` entry yields after tokenisation
TOKENS_PER_ROW = 512          # average tokenised length of a row
PACKING_EFF = 0.98            # MultipackBatchSampler efficiency
CAPABILITIES = {"bf16": True, "fp8": True, "tf32": True, "compute_capability": "sm_90"}
TORCH_VERSION = "2.11.0"
STARTUP_S = {"config": 5.0, "tokenize": 90.0, "load_prepared": 2.0, "model": 60.0, "trainer": 10.0}

LOGO = """
     #@@ #@@      @@# @@#
    @@  @@          @@  @@           =@@#                               @@                 #@    =@@#.
    @@    #@@@@@@@@@    @@           #@#@=                              @@                 #@     .=@@
      #@@@@@@@@@@@@@@@@@            =@# @#     ##=     ##    =####=+    @@      =#####+  =#@@###.   @@
    @@@@@@@@@@/  +@@/  +@@          #@  =@=     #@=   @@   =@#+  +#@#   @@    =@#+  +#@#   #@.      @@
    @@@@@@@@@@  ##@@  ##@@         =@#   @#      =@# @#    @@      @@   @@    @@      #@   #@       @@
     @@@@@@@@@@@@@@@@@@@@          #@=+++#@=      =@@#     @@      @@   @@    @@      #@   #@       @@
                                  =@#=====@@     =@# @#    @@      @@   @@    @@      #@   #@       @@
    @@@@@@@@@@@@@@@@  @@@@        #@      #@=   #@=  +@@   #@#    =@#   @@.   =@#    =@#   #@.      @@
                                 =@#       @#  #@=     #@   =#@@@@#=    +#@@=  +#@@@@#=    .##@@+   @@
    @@@@  @@@@@@@@@@@@@@@@
"""

# ---------------------------------------------------------------- tables from the source
# The fields of AxolotlConfigWCapabilities in pydantic's field order (the classes of
# utils/schemas/*.py over the reversed MRO), each `name:kind[=default][!][@alias]`:
# kind b bool|None, B bool, i int|None, I int, f float|None, F float, s str|None,
# S str, n int|float|None, a Literal['auto']|bool|None, r str|float, x not checked;
# `!` required (no default), `=JSON` the default, `@alias` the validation alias.
_FIELDS = """
max_packed_sequence_len:i rope_scaling:x noisy_embedding_alpha:f dpo_beta:f evaluation_strategy:s
eval_table_size:i eval_max_new_tokens:i dpo_use_logits_to_keep:b dpo_generate_during_eval:b dpo_norm_loss:b
rpo_alpha:f s2_attention:b flash_attn_rms_norm:b overrides_of_model_config:x@model_config
overrides_of_model_kwargs:x@model_kwargs type_of_model:s@model_type revision_of_model:s@model_revision
image_size:x image_resize_algorithm:x role_boundaries:x use_ray:B=false ray_run_name:s ray_num_workers:I=1
resources_per_worker:x gradio_title:s gradio_share:b gradio_server_name:s gradio_server_port:i
gradio_max_new_tokens:i gradio_temperature:f lisa_n_layers:i lisa_step_interval:i
lisa_layers_attribute:s="model.layers" use_otel_metrics:b=false otel_metrics_host:s="localhost"
otel_metrics_port:i=8000 use_trackio:b trackio_project_name:s trackio_run_name:s trackio_space_id:s
use_comet:b comet_api_key:s comet_workspace:s comet_project_name:s comet_experiment_key:s comet_mode:s
comet_online:b comet_experiment_config:x use_mlflow:b mlflow_tracking_uri:s mlflow_experiment_name:s
mlflow_run_name:s hf_mlflow_log_artifacts:b use_wandb:b wandb_name:s wandb_run_id:s wandb_mode:s
wandb_project:s wandb_entity:s wandb_watch:s wandb_log_model:s gradient_accumulation_steps:i=1
micro_batch_size:i=1 batch_size:i eval_batch_size:i auto_find_batch_size:b train_on_inputs:b=false
group_by_length:b learning_rate:r! embedding_lr:f embedding_lr_scale:f weight_decay:f=0.0
optimizer:x="adamw_torch_fused" optim_args:x optim_target_modules:x torchdistx_path:s lr_scheduler:s="cosine"
lr_scheduler_kwargs:x lr_quadratic_warmup:b cosine_min_lr_ratio:f cosine_constant_lr_ratio:f lr_div_factor:f
lr_groups:x adam_epsilon:f adam_epsilon2:f adam_beta1:f adam_beta2:f adam_beta3:f dion_lr:f dion_momentum:f
dion_rank_fraction:f=1.0 dion_rank_multiple_of:i=1 qgalore_rank:i=256 qgalore_update_proj_gap:i=200
qgalore_scale:f=0.25 qgalore_proj_type:s="std" qgalore_proj_quant:b=true qgalore_proj_bits:i=4
qgalore_proj_group_size:i=256 qgalore_cos_threshold:f=0.4 qgalore_gamma_proj:i=2 qgalore_queue_size:i=5
max_grad_norm:f num_epochs:F=1.0 jagged_restart_steps:i jagged_restart_warmup_steps:i
jagged_restart_anneal_steps:i relora:b relora_prune_ratio:f relora_prune_method:x="magnitude"
relora_cpu_offload:b load_in_8bit:b=false load_in_4bit:b=false adapter:s lora_model_dir:s lora_r:i
lora_alpha:i lora_fan_in_fan_out:b lora_target_modules:x lora_target_parameters:x lora_target_linear:b
lora_modules_to_save:x lora_rank_pattern:x lora_alpha_pattern:x lora_dropout:f=0.0 peft_layers_to_transform:x
peft_layers_pattern:x peft:x peft_use_dora:b peft_use_rslora:b peft_layer_replication:x
peft_init_lora_weights:x peft_trainable_token_indices:x peft_ensure_weight_tying:b
peft_autocast_adapter_dtype:b qlora_sharded_model_loading:b=false lora_on_cpu:b gptq:b bnb_config_kwargs:x
loraplus_lr_ratio:f loraplus_lr_embedding:f=1e-06 merge_lora:b merge_method:x="memory_efficient"
output_dir:S="./model-out" hub_model_id:s hub_strategy:s hub_revision:s save_safetensors:b=true base_model:S!
base_model_config:s cls_model_config:s tokenizer_config:s tokenizer_use_fast:b tokenizer_legacy:b
tokenizer_use_mistral_common:b tokenizer_type:s processor_type:s processor_kwargs:x
tokenizer_save_jinja_files:b=true trust_remote_code:b experimental_skip_move_to_device:b=true use_kernels:b
model_quantization_config:x model_quantization_config_kwargs:x use_onebitllms:b strict:b=false
resume_from_checkpoint:s auto_resume_from_checkpoints:b resize_token_embeddings_to_32x:b
mean_resizing_embeddings:b=false shrink_embeddings:b embeddings_skip_upcast:b reinit_weights:b trainer_cls:s
rl:x trl:x vllm:x ebft:x qat:x quantization:x reward_model:b dynamic_checkpoint:x process_reward_model:b
center_rewards_coefficient:f num_labels:i dpo_use_weighting:b dpo_label_smoothing:f precompute_ref_log_probs:b
dpo_use_liger_kernel:b dpo_padding_free:b dpo_loss_type:x dpo_loss_weights:x datasets:x test_datasets:x
shuffle_merged_datasets:b=true shuffle_before_merging_datasets:b=false dataset_prepared_path:s
dataset_shard_num:i dataset_shard_idx:i skip_prepare_dataset:b=false num_dataset_shards_to_save:i
pretraining_dataset:x dataset_processes:i dataset_num_proc:i dataset_exact_deduplication:b
dataset_keep_in_memory:b dataloader_pin_memory:b dataloader_num_workers:i dataloader_prefetch_factor:i
dataloader_drop_last:b accelerator_config:x remove_unused_columns:b push_dataset_to_hub:s hf_use_auth_token:b
device:x device_map:x world_size:i local_rank:i ddp:b seed:i ddp_timeout:i ddp_bucket_cap_mb:i
ddp_broadcast_buffers:b ddp_find_unused_parameters:b do_causal_lm_eval:b eval_causal_lm_metrics:x
do_bench_eval:b bench_dataset:s bench_split:s metric_for_best_model:s greater_is_better:b
loss_watchdog_threshold:f loss_watchdog_patience:i gc_steps:i torch_empty_cache_steps:i gc_collect_steps:i
bf16:a="auto" fp16:b fp8:b fp8_enable_fsdp_float8_all_gather:b bfloat16:b float16:b tf32:a="auto" float32:b
gradient_checkpointing:x=false gradient_checkpointing_kwargs:x selective_checkpointing:x
activation_offloading:x=false layer_offloading:b=false freeze_mm_modules:b unfrozen_parameters:x
sequence_len:I=512 excess_length_strategy:x eval_sequence_len:i min_sample_len:i max_prompt_len:i
sample_packing:b sample_packing_group_size:i=100000 sample_packing_bin_size:i=200
sample_packing_sequentially:b sample_packing_mp_start_method:s eval_sample_packing:b pad_to_sequence_len:b
pad_to_multiple_of:i curriculum_sampling:b multipack_real_batches:b batch_flattening:a use_pose:b
pose_split_on_token_ids:x pose_max_context_len:i pose_num_chunks:i pretrain_multipack_buffer_size:i
pretrain_multipack_attn:b=true pretraining_sample_concatenation:b streaming:b
streaming_multipack_buffer_size:i=10000 xformers_attention:b sdp_attention:b flex_attention:b
flex_attn_compile_kwargs:x flash_attention:b flash_attn_cross_entropy:b flash_attn_fuse_mlp:b flash_optimum:b
sage_attention:b eager_attention:b attn_implementation:s gemma4_hybrid_attn_impl:b large_head_attention:s
flash_attn_d512:b sdpa_varlen:b fused_attn_kernel:b experts_implementation:s quantize_moe_experts:B=false
scaling_softmax:b scaling_softmax_factor:f scaling_softmax_bias:f lora_mlp_kernel:b lora_qkv_kernel:b
lora_o_kernel:b lora_embedding_kernel:b chunked_cross_entropy:b chunked_cross_entropy_num_chunks:i use_eaft:b
eaft_alpha:f=1.0 eaft_k:i=20 tiled_mlp:b tiled_mlp_num_shards:i tiled_mlp_use_original_mlp:b=true
llama4_linearized_experts:b deepspeed:x deepcompile:b fsdp:x fsdp_config:x fsdp_version:i fp32_norms:b
fp32_norm_classes:x fsdp_final_state_dict_type:x val_set_size:f=0.0 dp_shard_size:i dp_replicate_size:i
sequence_parallel_degree:i context_parallel_size:i heads_k_stride:i ring_attn_func:x tensor_parallel_size:i
special_tokens:x tokens:x added_tokens_overrides:x torch_compile:a torch_compile_backend:s
torch_compile_mode:x torch_compile_options:x max_steps:i warmup_steps:i warmup_ratio:f eval_steps:n
evals_per_epoch:i eval_strategy:s save_steps:n saves_per_epoch:i save_strategy:s save_total_limit:i
save_first_step:b logging_steps:i early_stopping_patience:i load_best_model_at_end:b=false
save_only_model:b=false use_tensorboard:b profiler_steps:i profiler_steps_start:i=0
include_tokens_per_second:b include_tkps:b=true neftune_noise_alpha:f orpo_alpha:f simpo_gamma:f cpo_alpha:f
kto_desirable_weight:f kto_undesirable_weight:f rl_beta:f max_memory:x gpu_memory_limit:x low_cpu_mem_usage:b
chat_template:x chat_template_jinja:s chat_template_kwargs:x eot_tokens:x default_system_message:s
fix_untrained_tokens:x is_preprocess:b preprocess_iterable:b total_num_tokens:i total_supervised_tokens:i
sample_packing_eff_est:f axolotl_config_path:s is_falcon_derived_model:b is_llama_derived_model:b
is_mistral_derived_model:b is_qwen_derived_model:b plugins:x generate_samples:b=false
num_generation_samples:i=3 generation_max_new_tokens:i=50 generation_temperature:f=0.7 generation_top_p:f
generation_top_k:i generation_prompt_ratio:f=0.5 generation_do_sample:b=true
"""
# The input args the corpus plugins merge in (integrations/*/args.py).
_PLUGIN_FIELDS_LigerArgs = """
liger_rope:b liger_rms_norm:b liger_rms_norm_gated:b liger_layer_norm:b liger_swiglu:b liger_glu_activation:b
liger_cross_entropy:b liger_fused_linear_cross_entropy:b liger_use_token_scaling:b
"""
_PLUGIN_FIELDS_CutCrossEntropyArgs = """
cut_cross_entropy:b=true
"""
_PLUGIN_FIELDS_ExpertParallelArgs = """
expert_parallel_size:I=1 expert_parallel_backend:x="deep_ep" expert_parallel_num_nvl_bytes:I=268435456
expert_parallel_num_rdma_bytes:I=0 expert_parallel_token_capacity:i
expert_parallel_fallback_on_unsupported:B=true
"""
# The generated click options of cli/config_options.py: `name` takes a value (a string),
# `name/` is a `--name/--no-name` flag, `name=int|float|str` a typed dot option.
_CONFIG_OPTIONS = """
max-packed-sequence-len rope-scaling noisy-embedding-alpha dpo-beta evaluation-strategy eval-table-size
eval-max-new-tokens dpo-use-logits-to-keep/ dpo-generate-during-eval/ dpo-norm-loss/ rpo-alpha s2-attention/
flash-attn-rms-norm/ overrides-of-model-config overrides-of-model-kwargs type-of-model revision-of-model
image-size image-resize-algorithm role-boundaries use-ray/ ray-run-name ray-num-workers resources-per-worker
gradio-title gradio-share/ gradio-server-name gradio-server-port gradio-max-new-tokens gradio-temperature
lisa-n-layers lisa-step-interval lisa-layers-attribute use-otel-metrics/ otel-metrics-host otel-metrics-port
use-trackio/ trackio-project-name trackio-run-name trackio-space-id use-comet/ comet-api-key comet-workspace
comet-project-name comet-experiment-key comet-mode comet-online/ comet-experiment-config use-mlflow/
mlflow-tracking-uri mlflow-experiment-name mlflow-run-name hf-mlflow-log-artifacts/ use-wandb/ wandb-name
wandb-run-id wandb-mode wandb-project wandb-entity wandb-watch wandb-log-model gradient-accumulation-steps
micro-batch-size batch-size eval-batch-size auto-find-batch-size/ train-on-inputs/ group-by-length/
learning-rate embedding-lr embedding-lr-scale weight-decay optimizer optim-args optim-target-modules
torchdistx-path lr-scheduler lr-scheduler-kwargs lr-quadratic-warmup/ cosine-min-lr-ratio
cosine-constant-lr-ratio lr-div-factor lr-groups adam-epsilon adam-epsilon2 adam-beta1 adam-beta2 adam-beta3
dion-lr dion-momentum dion-rank-fraction dion-rank-multiple-of qgalore-rank qgalore-update-proj-gap
qgalore-scale qgalore-proj-type qgalore-proj-quant/ qgalore-proj-bits qgalore-proj-group-size
qgalore-cos-threshold qgalore-gamma-proj qgalore-queue-size max-grad-norm num-epochs jagged-restart-steps
jagged-restart-warmup-steps jagged-restart-anneal-steps relora/ relora-prune-ratio relora-prune-method
relora-cpu-offload/ load-in-8bit/ load-in-4bit/ adapter lora-model-dir lora-r lora-alpha lora-fan-in-fan-out/
lora-target-modules lora-target-parameters lora-target-linear/ lora-modules-to-save lora-rank-pattern
lora-alpha-pattern lora-dropout peft-layers-to-transform peft-layers-pattern peft.loftq-config peft-use-dora/
peft-use-rslora/ peft-layer-replication peft-init-lora-weights/ peft-trainable-token-indices
peft-ensure-weight-tying/ peft-autocast-adapter-dtype/ qlora-sharded-model-loading/ lora-on-cpu/ gptq/
bnb-config-kwargs loraplus-lr-ratio loraplus-lr-embedding merge-lora/ merge-method output-dir hub-model-id
hub-strategy hub-revision save-safetensors/ base-model base-model-config cls-model-config tokenizer-config
tokenizer-use-fast/ tokenizer-legacy/ tokenizer-use-mistral-common/ tokenizer-type processor-type
processor-kwargs tokenizer-save-jinja-files/ trust-remote-code/ experimental-skip-move-to-device/ use-kernels/
model-quantization-config model-quantization-config-kwargs use-onebitllms/ strict/ resume-from-checkpoint
auto-resume-from-checkpoints/ resize-token-embeddings-to-32x/ mean-resizing-embeddings/ shrink-embeddings/
embeddings-skip-upcast/ reinit-weights/ trainer-cls rl trl.beta=float trl.max-completion-length=int
trl.use-vllm/ trl.vllm-mode trl.vllm-server-host=str trl.vllm-server-port=int trl.vllm-server-timeout=int
trl.vllm-guided-decoding-regex=str trl.reward-funcs trl.reward-weights trl.generation-batch-size=int
trl.num-generations=int trl.log-completions/ trl.num-completions-to-print=int trl.importance-sampling-level
trl.sync-ref-model/ trl.ref-model-mixup-alpha=float trl.ref-model-sync-steps=int trl.scale-rewards/
trl.temperature=float trl.top-p=float trl.top-k=int trl.min-p=float trl.repetition-penalty=float
trl.generation-kwargs trl.chat-template-kwargs trl.num-iterations=int trl.epsilon=float trl.epsilon-high=float
trl.use-liger-loss/ trl.loss-type=str trl.mask-truncated-completions/ trl.vllm-enable-sleep-mode/
trl.rollout-func=str trl.multi-objective-aggregation trl.use-data-producer/ trl.async-prefetch/
trl.prefetch-depth=int trl.vllm-sync-interval=int trl.streaming-partial-batch/ trl.streaming-min-groups=int
trl.vllm-importance-sampling-correction/ trl.vllm-importance-sampling-mode
trl.vllm-importance-sampling-cap=float trl.off-policy-mask-threshold=float trl.use-bias-correction-kl/
trl.reward-num-workers=int trl.replay-buffer-size=int trl.replay-recompute-logps/
trl.reroll-start-fraction=float trl.reroll-max-groups=int trl.skip-zero-advantage-batches/ trl.vllm-lora-sync/
vllm.device=str vllm.tensor-parallel-size=int vllm.data-parallel-size=int vllm.gpu-memory-utilization=float
vllm.dtype=str vllm.max-model-len=int vllm.enable-prefix-caching/ vllm.host=str vllm.port=int
vllm.enable-reasoning/ vllm.reasoning-parser=str vllm.enforce-eager/ vllm.serve-module=str
vllm.worker-extension-cls=str ebft.feature-layers ebft.embed-method ebft.use-whitening/
ebft.alignment-coef=float ebft.diversity-coef=float ebft.ce-coef=float ebft.adaptive-max-tokens/
ebft.gt-length-multiplier=float ebft.mode ebft.stride=int ebft.context-length=int ebft.generate-max-len=int
ebft.n-samples-per-prompt=int ebft.temperature=float ebft.top-p=float ebft.rl-coef=float
ebft.advantage-estimator ebft.min-completion-prefix=int qat.activation-dtype qat.weight-dtype
qat.quantize-embedding/ qat.group-size=int qat.fake-quant-after-n-steps=int quantization.weight-dtype
quantization.activation-dtype quantization.quantize-embedding/ quantization.group-size=int reward-model/
dynamic-checkpoint.enabled/ dynamic-checkpoint.check-interval=int dynamic-checkpoint.trigger-file-path=str
process-reward-model/ center-rewards-coefficient num-labels dpo-use-weighting/ dpo-label-smoothing
precompute-ref-log-probs/ dpo-use-liger-kernel/ dpo-padding-free/ dpo-loss-type dpo-loss-weights datasets
test-datasets shuffle-merged-datasets/ shuffle-before-merging-datasets/ dataset-prepared-path
dataset-shard-num dataset-shard-idx skip-prepare-dataset/ num-dataset-shards-to-save pretraining-dataset
dataset-processes dataset-num-proc dataset-exact-deduplication/ dataset-keep-in-memory/ dataloader-pin-memory/
dataloader-num-workers dataloader-prefetch-factor dataloader-drop-last/ accelerator-config
remove-unused-columns/ push-dataset-to-hub hf-use-auth-token/ device device-map world-size local-rank ddp/
seed ddp-timeout ddp-bucket-cap-mb ddp-broadcast-buffers/ ddp-find-unused-parameters/ do-causal-lm-eval/
eval-causal-lm-metrics do-bench-eval/ bench-dataset bench-split metric-for-best-model greater-is-better/
loss-watchdog-threshold loss-watchdog-patience gc-steps torch-empty-cache-steps gc-collect-steps bf16 fp16/
fp8/ fp8-enable-fsdp-float8-all-gather/ bfloat16/ float16/ tf32 float32/ gradient-checkpointing
gradient-checkpointing-kwargs selective-checkpointing.save selective-checkpointing.save-sliding-window/
selective-checkpointing.recompute-layer-types selective-checkpointing.offload/ activation-offloading
layer-offloading/ freeze-mm-modules/ unfrozen-parameters sequence-len excess-length-strategy eval-sequence-len
min-sample-len max-prompt-len sample-packing/ sample-packing-group-size sample-packing-bin-size
sample-packing-sequentially/ sample-packing-mp-start-method eval-sample-packing/ pad-to-sequence-len/
pad-to-multiple-of curriculum-sampling/ multipack-real-batches/ batch-flattening use-pose/
pose-split-on-token-ids pose-max-context-len pose-num-chunks pretrain-multipack-buffer-size
pretrain-multipack-attn/ pretraining-sample-concatenation/ streaming/ streaming-multipack-buffer-size
xformers-attention/ sdp-attention/ flex-attention/ flex-attn-compile-kwargs flash-attention/
flash-attn-cross-entropy/ flash-attn-fuse-mlp/ flash-optimum/ sage-attention/ eager-attention/
attn-implementation gemma4-hybrid-attn-impl/ large-head-attention flash-attn-d512/ sdpa-varlen/
fused-attn-kernel/ experts-implementation quantize-moe-experts/ scaling-softmax/ scaling-softmax-factor
scaling-softmax-bias lora-mlp-kernel/ lora-qkv-kernel/ lora-o-kernel/ lora-embedding-kernel/
chunked-cross-entropy/ chunked-cross-entropy-num-chunks use-eaft/ eaft-alpha eaft-k tiled-mlp/
tiled-mlp-num-shards tiled-mlp-use-original-mlp/ llama4-linearized-experts/ deepspeed deepcompile/ fsdp
fsdp-config.fsdp-version=int fsdp-config.activation-checkpointing/ fsdp-config.offload-params/
fsdp-config.sync-module-states/ fsdp-config.cpu-ram-efficient-loading/ fsdp-config.cpu-offload-pin-memory/
fsdp-config.use-orig-params/ fsdp-config.state-dict-type fsdp-config.final-state-dict-type
fsdp-config.auto-wrap-policy fsdp-config.transformer-layer-cls-to-wrap=str fsdp-config.min-num-params=int
fsdp-config.reshard-after-forward/ fsdp-config.mixed-precision-policy=str fsdp-version fp32-norms/
fp32-norm-classes fsdp-final-state-dict-type val-set-size dp-shard-size dp-replicate-size
sequence-parallel-degree context-parallel-size heads-k-stride ring-attn-func tensor-parallel-size
special-tokens.bos-token=str special-tokens.eos-token=str special-tokens.pad-token=str
special-tokens.unk-token=str special-tokens.additional-special-tokens tokens added-tokens-overrides
torch-compile torch-compile-backend torch-compile-mode torch-compile-options max-steps warmup-steps
warmup-ratio eval-steps evals-per-epoch eval-strategy save-steps saves-per-epoch save-strategy
save-total-limit save-first-step/ logging-steps early-stopping-patience load-best-model-at-end/
save-only-model/ use-tensorboard/ profiler-steps profiler-steps-start include-tokens-per-second/ include-tkps/
neftune-noise-alpha orpo-alpha simpo-gamma cpo-alpha kto-desirable-weight kto-undesirable-weight rl-beta
max-memory gpu-memory-limit low-cpu-mem-usage/ chat-template chat-template-jinja chat-template-kwargs
eot-tokens default-system-message fix-untrained-tokens is-preprocess/ preprocess-iterable/ total-num-tokens
total-supervised-tokens sample-packing-eff-est axolotl-config-path is-falcon-derived-model/
is-llama-derived-model/ is-mistral-derived-model/ is-qwen-derived-model/ plugins generate-samples/
num-generation-samples generation-max-new-tokens generation-temperature generation-top-p generation-top-k
generation-prompt-ratio generation-do-sample/
"""


def _parse_fields(text):
    out = []
    for item in text.split():
        name, _, rest = item.partition(":")
        alias = None
        if "@" in rest:
            rest, alias = rest.split("@", 1)
        required = rest.endswith("!")
        rest = rest.rstrip("!")
        kind, eq, default = rest.partition("=")
        out.append((name, kind, json.loads(default) if eq else None, required, alias))
    return out


PLUGIN_ARGS = {
    "liger": _PLUGIN_FIELDS_LigerArgs,
    "cut_cross_entropy": _PLUGIN_FIELDS_CutCrossEntropyArgs,
    "expert_parallel": _PLUGIN_FIELDS_ExpertParallelArgs,
}
# integrations/ at 067b021: the packages a `plugins:` entry can name
INTEGRATIONS = {"cut_cross_entropy", "densemixer", "diffusion", "expert_parallel", "grokfast", "hatchery", "kd",
                "kernels", "liger", "llm_compressor", "lm_eval", "mora", "nemo_gym", "spectrum", "swanlab"}


# ---------------------------------------------------------------- the process


class _State:
    def __init__(self):
        self.w = harness.worker()
        self.dist = False          # axolotl's distributed state exists (is_main_process = global rank 0)
        self.tee = None            # output_dir/debug.log (utils/tee.py)
        self.error_handled = False  # telemetry/errors.py ERROR_HANDLED
        self.run_id = str(uuid.uuid4())
        self.entry = "module"      # module | python-launcher | preprocess-cli
        self.sigint_saves = None   # output_dir once train.py's SIGINT handler is installed
        self.sim = 0.0             # simulated seconds this process has spent (what its timings print)
        self.explicit_resume = False


S = _State()


def _write(stream, text):
    stream.write(text)
    stream.flush()
    if S.tee is not None:
        try:
            S.tee.write(text)
            S.tee.flush()
        except OSError:
            pass


def _out(text):
    _write(sys.stdout, text + "\n")


def _err(text):
    _write(sys.stderr, text + "\n")


def _local_rank():
    return int(os.environ.get("LOCAL_RANK", "0") or 0)


def _is_main():
    """utils/distributed.py is_main_process."""
    if not S.dist:
        return os.environ.get("LOCAL_RANK", "0") == "0"
    return S.w.rank == 0


def _asctime():
    t = harness.wall_time()
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t)) + ",%03d" % int((t % 1.0) * 1000)


def _log(level, name, msg, main_only=True):
    """An axolotl logger record: MultiProcessAdapter, then the `concise_color`
    format of logging_config.py (colour codes stripped by colorama off a tty)."""
    if main_only and not _is_main():
        return
    lr = _local_rank()
    rank_fmt = " [RANK:{}]".format(lr) if lr != 0 else ""
    _out("[{}] [{}] [{}]{} {}".format(_asctime(), level, name, rank_fmt, msg))


def info(name, msg, main_only=True):
    _log("INFO", name, msg, main_only)


def warning(name, msg, main_only=True):
    _log("WARNING", name, msg, main_only)


def error(name, msg, main_only=True):
    _log("ERROR", name, msg, main_only)


def _telemetry_enabled():
    """telemetry/manager.py: on by default, on global rank 0, unless opted out."""
    rank = os.environ.get("RANK", os.environ.get("GLOBAL_RANK", os.environ.get(
        "SLURM_PROCID", os.environ.get("OMPI_COMM_WORLD_RANK", "0"))))
    if int(rank or 0) != 0:
        return False
    for var in ("AXOLOTL_DO_NOT_TRACK", "DO_NOT_TRACK"):
        if os.environ.get(var, "").strip().lower() in ("1", "true"):
            return False
    return True


def _p(rel):
    return "{}/{}".format(SITE, rel)


def _entry_frames():
    """How the process got to do_cli."""
    if S.entry == "python-launcher":
        return [(CONSOLE, 8, "<module>"), (_p("axolotl/cli/main.py"), 497, "main"),
                (_p("axolotl/cli/main.py"), 129, "train"), (_p("axolotl/cli/utils/train.py"), 128, "launch_training"),
                (_p("axolotl/cli/utils/train.py"), 225, "_launch_python_training")]
    if S.entry == "preprocess-cli":
        return [(CONSOLE, 8, "<module>"), (_p("axolotl/cli/main.py"), 497, "main"),
                (_p("axolotl/cli/main.py"), 76, "preprocess")]
    mod = "preprocess" if S.entry == "preprocess" else "train"
    return [("<frozen runpy>", 198, "_run_module_as_main"), ("<frozen runpy>", 88, "_run_code"),
            (_p("axolotl/cli/{}.py".format(mod)), 125 if mod == "preprocess" else 206, "<module>"),
            (_p("fire/core.py"), 135, "Fire"), (_p("fire/core.py"), 468, "_Fire"),
            (_p("fire/core.py"), 684, "_CallAndUpdateTrace")]


def _send_errors_frame():
    """telemetry/errors.py send_errors' wrapper line (enabled: inside the try)."""
    return (_p("axolotl/telemetry/errors.py"), 127 if _telemetry_enabled() else 124, "wrapper")


def fail(exc_type, message, frames, telemetry=True, code=1):
    """An uncaught exception in the training process. Functions wrapped by
    @send_errors log the telemetry line first (once, on the main process)."""
    if telemetry and _telemetry_enabled() and not S.error_handled:
        S.error_handled = True
        error("axolotl.telemetry.errors", "Error captured in telemetry. Run ID: {}".format(S.run_id))
    if S.tee is not None:
        lines = ["Traceback (most recent call last):"]
        lines += ['  File "{}", line {}, in {}'.format(*f) for f in frames]
        lines.append("{}: {}".format(exc_type, message) if message else exc_type)
        try:
            S.tee.write("\n".join(lines) + "\n")
            S.tee.flush()
        except OSError:
            pass
    harness.fail_with_traceback(exc_type, message, frames, code=code)


# ---------------------------------------------------------------- python-fire (fire/core.py, fire/parser.py 0.7.1)


def _fire_value(text):
    """parser.DefaultParseValue: a Python literal, bare words read as strings."""
    import ast

    try:
        root = ast.parse(text, mode="eval")
        if isinstance(root.body, ast.BinOp):
            raise ValueError(text)
        for node in ast.walk(root):
            for field, child in ast.iter_fields(node):
                if isinstance(child, list):
                    for i, item in enumerate(child):
                        if isinstance(item, ast.Name) and item.id not in ("True", "False", "None"):
                            child[i] = ast.Constant(item.id)
                elif isinstance(child, ast.Name) and child.id not in ("True", "False", "None"):
                    setattr(node, field, ast.Constant(child.id))
        return ast.literal_eval(root)
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return text


def _is_flag(arg):
    import re

    return bool(re.match(r"^-[a-zA-Z]$", arg) or re.match(r"^-[a-zA-Z]=", arg)
                or arg.startswith("--") or re.match(r"^-[a-zA-Z]", arg))


def fire_parse(argv):
    """fire.Fire(do_cli) with do_cli(config=Path("examples/"), **kwargs):
    (config, kwargs in command-line order, unconsumed positional args)."""
    args = list(argv)
    if "--" in args:  # SeparateFlagArgs: what follows the last `--` is for Fire itself
        cut = len(args) - 1 - args[::-1].index("--")
        flag_args, args = args[cut + 1:], args[:cut]
        if any(a in ("--help", "-h", "--interactive", "-i", "--completion", "--trace") for a in flag_args):
            harness.emulator_fault("python-fire's own flags ({}) are not emulated".format(" ".join(flag_args)))
    kwargs, positional = {}, []
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
            continue
        if _is_flag(arg):
            has_eq = "=" in arg
            stripped = arg.lstrip("-")
            key, value = stripped.split("=", 1) if has_eq else (stripped, None)
            key = key.replace("-", "_")
            bool_syntax = not has_eq and (i + 1 == len(args) or _is_flag(args[i + 1]))
            if has_eq:
                pass
            elif bool_syntax:
                value = "True"
            else:
                value = args[i + 1]
                skip = True
            kwargs[key] = _fire_value(value)
        else:
            positional.append(arg)
    if "config" in kwargs:
        config = kwargs.pop("config")
    elif positional:
        config = _fire_value(positional.pop(0))
    else:
        config = "examples"  # the default Path("examples/"), as str(Path) spells it
    return config, kwargs, positional


def _fire_unconsumed(positional, prog):
    """Fire calls do_cli first; an argument left over is its error afterwards (exit 2)."""
    _err("ERROR: Could not consume arg: {}".format(positional[0]))
    _err("Usage: {} {}".format(prog, " ".join(positional)))
    _err("")
    _err("For detailed information on this command, run:")
    _err("  {} {} --help".format(prog, " ".join(positional)))
    sys.exit(2)


# ---------------------------------------------------------------- load_cfg (cli/config.py)


def _coerce_value(value, existing=None):
    """cli/config.py _coerce_value."""
    if not isinstance(value, str):
        return value
    if existing is not None:
        if isinstance(existing, bool):
            return value.lower() in ("true", "1", "yes")
        if isinstance(existing, int):
            try:
                return int(value)
            except ValueError:
                return value
        if isinstance(existing, float):
            try:
                return float(value)
            except ValueError:
                return value
        return value
    lower = value.lower()
    if lower in ("true", "yes"):
        return True
    if lower in ("false", "no"):
        return False
    if lower in ("null", "none", "~"):
        return None
    try:
        return int(value)
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        pass
    return value


def _read_config(config):
    """The YAML as load_cfg opens it (local paths; a directory picks its one YAML)."""
    frames = _entry_frames() + [(_p("axolotl/cli/{}.py".format("preprocess" if S.entry in ("preprocess", "preprocess-cli") else "train")),
                                 114 if S.entry in ("preprocess", "preprocess-cli") else 111, "do_cli"),
                                _send_errors_frame()]
    if isinstance(config, str) and config.startswith("https://"):
        harness.emulator_fault("remote configs (https://) are not emulated")
    path = config if isinstance(config, (str, int)) else str(config)
    if isinstance(path, str) and os.path.isdir(path):
        names = sorted(n for n in os.listdir(path) if n.endswith((".yml",)))
        names += sorted(n for n in os.listdir(path) if n.endswith((".yaml",)))
        if not names:
            fail("ValueError", "No YAML config files found in the specified directory. Are you using a .yml extension?",
                 frames + [(_p("axolotl/cli/config.py"), 250, "load_cfg"), (_p("axolotl/cli/config.py"), 181, "choose_config")])
        if len(names) > 1:
            harness.emulator_fault("choose_config's interactive prompt (several YAML files in {}) is not emulated".format(path))
        path = os.path.join(path, names[0])
        info("axolotl.cli.config", "Using default YAML file '{}'".format(path))
    import yaml

    try:
        f = open(path, encoding="utf-8")
    except OSError as e:
        fail(type(e).__name__, "[Errno {}] {}: {!r}".format(e.errno, e.strerror, path),
             frames + [(_p("axolotl/cli/config.py"), 253, "load_cfg")])
    try:
        with f:
            data = yaml.safe_load(f)
    except yaml.YAMLError as e:
        fail("{}.{}".format(type(e).__module__, type(e).__name__), str(e),
             frames + [(_p("axolotl/cli/config.py"), 254, "load_cfg")])
    if data is None:
        data = {}
    if not isinstance(data, dict):
        fail("TypeError", "'{}' object is not a mapping".format(type(data).__name__) if not isinstance(data, list)
             else "cannot convert dictionary update sequence element #0 to a sequence",
             frames + [(_p("axolotl/cli/config.py"), 254, "load_cfg")])
    return path, data


def _apply_overrides(cfg, kwargs):
    """load_cfg: flat kwargs, then `parent__child` ones (strict: only keys of the YAML)."""
    keys = set(cfg.keys())
    strict = cfg.get("strict")
    nested = {}
    for key, value in kwargs.items():
        if "__" in key:
            parent, child = key.split("__", 1)
            nested.setdefault(parent, {})[child] = value
        elif key in keys or not strict:
            cfg[key] = _coerce_value(value, cfg.get(key))
    for parent, children in nested.items():
        if parent not in keys and strict:
            continue
        if cfg.get(parent) is None:
            cfg[parent] = {}
        if not isinstance(cfg[parent], dict):
            warning("axolotl.cli.config", "Overwriting non-dict value for '{}' with nested CLI overrides".format(parent))
            cfg[parent] = {}
        for child, value in children.items():
            cfg[parent][child] = _coerce_value(value, cfg[parent].get(child))


def _prepare_plugins(cfg):
    """cli/config.py prepare_plugins -> integrations/base.py PluginManager.register."""
    loaded = []
    for name in cfg.get("plugins") or []:
        info("axolotl.integrations.base", "Attempting to load plugin: {}".format(name))
        module = str(name).rsplit(".", 1)[0]
        rel = module[len("axolotl.integrations."):] if module.startswith("axolotl.integrations.") else module
        package = rel.split(".")[0]
        if "." not in str(name) or package not in INTEGRATIONS:
            error("axolotl.integrations.base", "Failed to load plugin: {}".format(name))
            _err("Traceback (most recent call last):")
            _err('  File "{}", line 337, in load_plugin'.format(_p("axolotl/integrations/base.py")))
            _err("ModuleNotFoundError: No module named '{}'".format(module))
            _out("Error: No module named '{}'".format(module))
            continue
        info("axolotl.integrations.base", "Plugin loaded successfully: {}".format(name))
        loaded.append(package)
    return loaded


# ---------------------------------------------------------------- pydantic (2.12.5 / pydantic-core 2.41.5)


class ValidationFailed(Exception):
    """pydantic_core.ValidationError: line errors (loc tuple, message, type, input)."""

    def __init__(self, lines):
        super().__init__()
        self.lines = lines


class RawError(Exception):
    """A validator raising something other than ValueError: pydantic lets it through."""

    def __init__(self, exc_type, message):
        super().__init__(message)
        self.exc_type, self.message = exc_type, message


def _trunc(text):
    """pydantic-core tools.rs write_truncated_to_limited_bytes(.., 50)."""
    if len(text) > 50:
        return text[:25] + "..." + text[-24:]
    return text


def render_validation_error(lines, title=TITLE):
    """ValidationError.__str__ (validation_exception.rs display / pretty)."""
    out = ["{} validation error{} for {}".format(len(lines), "" if len(lines) == 1 else "s", title)]
    for loc, msg, etype, value in lines:
        if loc:
            out.append(".".join("`{}`".format(p) if "." in str(p) else str(p) for p in loc))
        out.append("  {} [type={}, input_value={}, input_type={}]".format(
            msg, etype, _trunc(repr(value)), type(value).__qualname__))
        out.append("    For further information visit {}{}".format(PYDANTIC_URL, etype))
    return "\n".join(out)


_INT_RE = None


def _lax_int(v):
    """(ok, value or (message, type)) for an int field in lax mode (input_python.rs validate_int)."""
    global _INT_RE
    if isinstance(v, bool):
        return True, int(v)
    if isinstance(v, int):
        return True, v
    if isinstance(v, str):
        if _INT_RE is None:
            import re

            _INT_RE = re.compile(r"^\s*[+-]?(\d+(_\d+)*)(\.0+)?\s*$")
        m = _INT_RE.match(v)
        if m and not v.strip().startswith("+-"):
            return True, int(v.strip().split(".")[0].replace("_", ""))
        return False, ("Input should be a valid integer, unable to parse string as an integer", "int_parsing")
    if isinstance(v, float):
        if math.isinf(v) or math.isnan(v):
            return False, ("Input should be a finite number", "finite_number")
        if v % 1 != 0:
            return False, ("Input should be a valid integer, got a number with a fractional part", "int_from_float")
        return True, int(v)
    return False, ("Input should be a valid integer", "int_type")


def _lax_float(v):
    if isinstance(v, bool):
        return True, float(v)
    if isinstance(v, (int, float)):
        return True, float(v)
    if isinstance(v, str):
        try:
            return True, float(v.strip())
        except ValueError:
            pass
        s = v
        if "_" in s and not s.startswith("_") and not s.endswith("_") and "__" not in s:
            try:
                return True, float(s.replace("_", ""))
            except ValueError:
                pass
        return False, ("Input should be a valid number, unable to parse string as a number", "float_parsing")
    return False, ("Input should be a valid number", "float_type")


def _lax_bool(v):
    if isinstance(v, bool):
        return True, v
    if isinstance(v, str):
        low = v.lower()
        if v == "0" or low in ("f", "n", "no", "off", "false"):
            return True, False
        if v == "1" or low in ("t", "y", "on", "yes", "true"):
            return True, True
        return False, ("Input should be a valid boolean, unable to interpret input", "bool_parsing")
    if isinstance(v, int):
        if v in (0, 1):
            return True, bool(v)
        return False, ("Input should be a valid boolean, unable to interpret input", "bool_parsing")
    if isinstance(v, float) and v % 1 == 0 and not math.isinf(v):
        if v in (0.0, 1.0):
            return True, bool(v)
        return False, ("Input should be a valid boolean, unable to interpret input", "bool_parsing")
    return False, ("Input should be a valid boolean", "bool_type")


def _lax_str(v):
    if isinstance(v, str):
        return True, v
    return False, ("Input should be a valid string", "string_type")


_SCALAR = {"i": _lax_int, "I": _lax_int, "f": _lax_float, "F": _lax_float, "b": _lax_bool, "B": _lax_bool,
           "s": _lax_str, "S": _lax_str}


def check_field(name, kind, v):
    """(value, [line errors]) for one field (None accepted where the type is `X | None`)."""
    if kind == "x":
        return v, []
    if v is None and kind in ("i", "f", "b", "s", "n", "a"):
        return None, []
    if kind in _SCALAR:
        ok, got = _SCALAR[kind](v)
        return (got, []) if ok else (None, [((name,), got[0], got[1], v)])
    if kind == "n":  # int | float: smart union, exact types first
        if isinstance(v, int) and not isinstance(v, bool):
            return v, []
        if isinstance(v, float):
            return v, []
        ok_i, got_i = _lax_int(v)
        if ok_i:
            return got_i, []
        ok_f, got_f = _lax_float(v)
        if ok_f:
            return got_f, []
        return None, [((name, "int"), got_i[0], got_i[1], v), ((name, "float"), got_f[0], got_f[1], v)]
    if kind == "a":  # Literal['auto'] | bool
        if v == "auto" and isinstance(v, str):
            return v, []
        ok, got = _lax_bool(v)
        if ok:
            return got, []
        return None, [((name, "literal['auto']"), "Input should be 'auto'", "literal_error", v),
                      ((name, "bool"), got[0], got[1], v)]
    if kind == "r":  # str | float, then HyperparametersConfig.convert_learning_rate
        if isinstance(v, str):
            if v:
                try:
                    return float(v), []
                except ValueError as e:
                    return None, [((name,), "Value error, {}".format(e), "value_error", v)]
            return v, []
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v), []
        ok, got = _lax_float(v)
        if ok:
            return got, []
        return None, [((name, "str"), "Input should be a valid string", "string_type", v),
                      ((name, "float"), got[0], got[1], v)]
    return v, []


# ---------------------------------------------------------------- the validators (utils/schemas/*.py)
# Model validators run as pydantic orders them: the "before" ones in reverse of
# their collection order (AxolotlConfigWCapabilities' own first, then
# AxolotlInputConfig's, the schema classes', the plugins' args, then the mixins of
# ValidationMixin in base order), the "after" ones in collection order (the mixins
# of ValidationMixin last-base-first, the plugins', then the subclasses').

V = "axolotl.utils.schemas.validation"
C = "axolotl.utils.schemas.config"
LEGACY_ATTN = [("xformers_attention", "xformers"), ("sage_attention", "sage"), ("flex_attention", "flex_attention"),
               ("flash_attention", "flash_attention_2"), ("sdp_attention", "sdpa"), ("eager_attention", "eager")]
CANONICAL_ATTN = {"eager", "sdpa", "flash_attention_2", "flash_attention_3", "flex_attention", "xformers", "sage", "fp8"}
SHORT_ATTN = {"flash": "flash_attention_2", "flex": "flex_attention", "sdp": "sdpa"}
ATTN_PACKING = {"flash_attention_2", "flash_attention_3", "flex_attention", "xformers", "sage",
                "kernels-community/flash-attn2", "kernels-community/flash-attn3", "kernels-community/sage-attention"}
ATTN_FLASH_LIB = {"flash_attention_2", "flash_attention_3", "kernels-community/flash-attn2",
                  "kernels-community/flash-attn3"}


class _Val(Exception):
    pass


def _t(x):
    return bool(x)


def _b_wcap(d):
    if d.get("dataset_exact_deduplication") and d.get("skip_prepare_dataset"):
        raise _Val("dataset_exact_deduplication=True has no effect when skip_prepare_dataset=True. Deduplication runs "
                   "as part of the prepare pipeline, which is skipped. Either set skip_prepare_dataset: false or "
                   "disable dataset_exact_deduplication.")
    if d.get("dataset_exact_deduplication") and (d.get("streaming") or d.get("pretraining_dataset")):
        raise RawError("NotImplementedError", "dataset_exact_deduplication is not available for streaming datasets. ")
    if d.get("dataset_processes") is not None:
        if d.get("dataset_num_proc") is None:
            d["dataset_num_proc"] = d["dataset_processes"]
            warning(C, "dataset_processes is deprecated and will be removed in a future version. Please use "
                       "dataset_num_proc instead.")
        else:
            warning(C, "Both dataset_processes and dataset_num_proc are set. Using dataset_num_proc and ignoring "
                       "dataset_processes.")
        del d["dataset_processes"]
    elif d.get("dataset_num_proc") is None:
        d["dataset_num_proc"] = int(os.environ.get("AXOLOTL_DATASET_NUM_PROC") or os.environ.get(
            "AXOLOTL_DATASET_PROCESSES") or os.environ.get("RUNPOD_CPU_COUNT") or os.cpu_count() or 1)
    if d.get("dataloader_num_workers") is None and d.get("dataloader_pin_memory") is None \
            and d.get("dataloader_prefetch_factor") is None:
        d["dataloader_num_workers"] = d["capabilities"].get("n_gpu", 1)
        d["dataloader_pin_memory"] = True
        d["dataloader_prefetch_factor"] = 256
    kernels = ("lora_mlp_kernel", "lora_qkv_kernel", "lora_o_kernel", "lora_embedding_kernel")
    caps = d.get("capabilities") or {}
    fsdp = d.get("fsdp_config") is not None
    fsdp2 = fsdp and str(d.get("fsdp_version")) == "2"
    if (not d.get("rl") and not d.get("nvfp4_merge_aware") and d.get("adapter") in ("lora", "qlora")
            and not any(d.get(k) is not None for k in kernels)
            and not (d.get("adapter") == "lora" and d.get("load_in_8bit")) and not d.get("trust_remote_code")):
        multi = caps.get("n_gpu", 0) > 1
        if not multi or not fsdp or fsdp2:
            for k in kernels:
                d[k] = True
            warning(C, "Auto-enabling LoRA kernel optimizations for faster training. Please explicitly set "
                       "`lora_*_kernel` config values to `false` to disable. See "
                       "https://docs.axolotl.ai/docs/lora_optims.html for more info.")
    if d.get("quantize_moe_experts"):
        if d.get("lora_target_linear"):
            raise _Val("lora_target_linear is not compatible with quantize_moe_experts. Use lora_target_parameters "
                       "to target expert weights instead.")
    if any(d.get(k) for k in kernels) and caps.get("n_gpu", 0) > 1 and fsdp and not fsdp2:
        raise _Val("lora_mlp_kernel, lora_qkv_kernel, and lora_o_kernel are not compatible with FSDP1.")


def _b_input(d):
    impl = d.get("attn_implementation")
    flags = [f for f, _ in LEGACY_ATTN if d.get(f)]
    if impl and flags:
        raise _Val("attn_implementation={!r} cannot be combined with legacy attention flags ({}). The legacy flags "
                   "are deprecated \u2014 set only `attn_implementation`.".format(impl, ", ".join(sorted(flags))))
    if not impl and flags:
        for flag, canonical in LEGACY_ATTN:
            if flag in flags:
                d["attn_implementation"] = canonical
                warning(C, "`{}: true` is deprecated and will be removed in a future release. Use "
                           "`attn_implementation: {}` instead.".format(flag, canonical))
                break
    for flag, _ in LEGACY_ATTN:
        d.pop(flag, None)


def _b_lora_config(d):
    if d.get("adapter") is not None and d.get("lora_dropout") is None:
        d["lora_dropout"] = 0.0
    if not d.get("adapter") and not d.get("inference") and (d.get("load_in_8bit") or d.get("load_in_4bit")):
        raise _Val("load_in_8bit and load_in_4bit are not supported without setting an adapter for training.If you "
                   "want to full finetune, please turn off load_in_8bit and load_in_4bit.")
    if d.get("adapter") and d.get("adapter") not in ("lora", "qlora", "llama-adapter"):
        raise _Val("Adapter '{}' is not built in and was not registered by a plugin. Add the plugin that provides "
                   "this adapter to `plugins:`.".format(d.get("adapter")))


def _b_liger(d):
    if d.get("liger_use_token_scaling") and not d.get("liger_fused_linear_cross_entropy"):
        raise _Val("`liger_use_token_scaling: true` requires `liger_fused_linear_cross_entropy` enabled.")
    tp = d.get("tensor_parallel_size", 1)
    if d.get("liger_rms_norm") and isinstance(tp, (int, float)) and tp > 1:
        raise _Val("`liger_rms_norm` is incompatible with tensor parallelism, see "
                   "https://github.com/linkedin/Liger-Kernel/issues/826")
    if d.get("liger_glu_activation") is True and d.get("tiled_mlp") is True and not d.get("tiled_mlp_use_original_mlp"):
        raise _Val("You cannot have both `liger_glu_activation` and `tiled_mlp` set without "
                   "`tiled_mlp_use_original_mlp: true`.")
    if d.get("liger_swiglu") is not None:
        if d.get("liger_glu_activation") is not None:
            raise _Val("You cannot have both `liger_swiglu` and `liger_glu_activation` set.")
        warning("axolotl.integrations.liger.args", "The 'liger_swiglu' argument is deprecated and will be removed in "
                "a future release. Please use 'liger_glu_activation' instead.")
        d["liger_glu_activation"] = d.pop("liger_swiglu")


def _b_cce(d):
    if d.get("chunked_cross_entropy"):
        raise _Val("Cut Cross Entropy does not support chunked cross entropy. Please set `chunked_cross_entropy` to "
                   "`False` or disable Cut Cross Entropy.")
    if d.get("cut_cross_entropy") and not (d.get("bf16") or d.get("fp16")):
        raise _Val("Cut Cross Entropy requires fp16/bf16 training for backward pass. Please set `bf16` or `fp16` to "
                   "`True`.")


def _b_dataset(d):
    if d.get("skip_prepare_dataset") and d.get("remove_unused_columns") is None:
        info(V, "setting `remove_unused_columns: false` for skip_prepare_dataset")
        d["remove_unused_columns"] = False
    if d.get("sample_packing") and d.get("eval_table_size") and d.get("eval_sample_packing") is not False:
        raise _Val("eval_table_size and eval_sample_packing are not supported together with sample_packing. Please "
                   "set 'eval_sample_packing' to false.")
    if d.get("sample_packing") and d.get("eval_sample_packing") is None and not d.get("eval_table_size"):
        info(V, "explicitly setting `eval_sample_packing` to match `sample_packing`")
        d["eval_sample_packing"] = True
    if d.get("sample_packing") and d.get("eval_sample_packing") is False and d.get("remove_unused_columns") is None:
        info(V, "setting `remove_unused_columns: false` for when sample_packing and eval_sample_packing don't match")
        d["remove_unused_columns"] = False
    if d.get("do_bench_eval") and not d.get("test_datasets") and not d.get("val_set_size"):
        warning(V, "`do_bench_eval` needs a test dataset to run evals, adding an empty test_dataset.")
        d["test_datasets"] = [{"path": "axolotl-ai-co/empty-test-ds"}]
    if d.get("test_datasets") and d.get("val_set_size"):
        raise _Val("non-zero val_set_size should not be used with test_datasets configuration")
    if d.get("push_dataset_to_hub") and d.get("hf_use_auth_token") is not True:
        raise _Val("Require cfg.hf_use_auth_token to be True for push_dataset_to_hub")
    if d.get("pretraining_dataset") and not d.get("streaming"):
        warning(V, "Setting `pretraining_dataset` without explicitly setting `streaming: true` is deprecated. In a "
                   "future release, streaming will not be automatically enabled when using pretraining_dataset. "
                   "Please explicitly set `streaming: true` in your configuration to maintain current behavior.")
    if d.get("datasets") is None and d.get("pretraining_dataset") is None:
        raise _Val("either datasets or pretraining_dataset is required")
    found = [f for f in ("unsloth_cross_entropy_loss", "unsloth_lora_mlp", "unsloth_lora_qkv", "unsloth_lora_o",
                         "unsloth_rms_norm", "unsloth_rope") if d.get(f)]
    if found:
        raise _Val("`{}` {} been removed. Please use `lora_mlp_kernel`, `lora_qkv_kernel`, `lora_o_kernel` instead. "
                   "See: https://docs.axolotl.ai/docs/lora_optims.html".format(
                       "`, `".join(found), "has" if len(found) == 1 else "have"))


def _b_training(d):
    if d.get("pretraining_dataset") and d.get("include_tokens_per_second", False):
        raise _Val("pretraining_dataset and include_tokens_per_second cannot be used together.")
    if d.get("evaluation_strategy") is not None and d.get("eval_strategy") is None:
        info(V, "explicitly setting `eval_strategy` from the `evaluation_strategy`")
        d["eval_strategy"] = d.get("evaluation_strategy")
    if d.get("fp8") and not d.get("torch_compile"):
        warning(V, "torch_compile is strongly recommended for FP8 training in order to see speed improvements. "
                   "Please consider setting `torch_compile: true` in your config.")
    if d.get("fp8_enable_fsdp_float8_all_gather") and not d.get("fsdp_version", None) == 2:
        raise _Val("fp8_enable_fsdp_float8_all_gather requires FSDP2 (fsdp_version: 2) to be used.")
    if d.get("noisy_embedding_alpha") and not d.get("neftune_noise_alpha"):
        d["neftune_noise_alpha"] = d["noisy_embedding_alpha"]
        del d["noisy_embedding_alpha"]
    elif d.get("noisy_embedding_alpha") and d.get("neftune_noise_alpha"):
        raise _Val("noisy_embedding_alpha is deprecated, use neftune_noise_alpha; both are set, please remove the "
                   "deprecated noisy_embedding_alpha setting")
    if d.get("eval_strategy") and d.get("eval_steps") and d.get("eval_strategy") != "steps":
        raise _Val("eval_strategy and eval_steps mismatch. Please set eval_strategy to 'steps' or remove eval_steps.")
    if d.get("val_set_size") == 0 and (d.get("eval_steps") or d.get("eval_strategy")) and not d.get("test_datasets") \
            and d.get("eval_strategy") != "no":
        raise _Val("eval_steps and eval_strategy are not supported with val_set_size == 0")
    if d.get("evals_per_epoch") and d.get("eval_steps"):
        raise _Val("eval_steps and evals_per_epoch are mutually exclusive and cannot be used together.")
    if d.get("evals_per_epoch") and d.get("eval_strategy") and d.get("eval_strategy") != "steps":
        raise _Val("eval_strategy must be empty or set to `steps` when used with evals_per_epoch.")
    if d.get("do_bench_eval") and not (d.get("evals_per_epoch") or d.get("eval_steps")):
        raise _Val("do_bench_eval requires evals_per_epoch or eval_steps to be set.")
    if d.get("hub_model_id") and d.get("save_strategy") not in ["steps", "epoch", None]:
        warning(V, "hub_model_id is set without any models being saved. To save a model, set save_strategy.")
    if d.get("save_strategy") and d.get("save_steps") and d.get("save_strategy") != "steps":
        raise _Val("save_strategy and save_steps mismatch. Please set save_strategy to 'steps' or remove save_steps.")
    if d.get("saves_per_epoch") and d.get("save_steps"):
        raise _Val("save_steps and saves_per_epoch are mutually exclusive and cannot be used together.")
    if d.get("warmup_steps") and d.get("warmup_ratio"):
        raise _Val("warmup_steps and warmup_ratio are mutually exclusive")
    if d.get("eval_batch_size") and d.get("micro_batch_size") and d.get("eval_batch_size") != d.get("micro_batch_size"):
        warning(V, "eval_batch_size != micro_batch_size. This can lead to VRAM instability.")
    if d.get("gradient_accumulation_steps") and d.get("batch_size"):
        raise _Val("please set only one of gradient_accumulation_steps or batch_size")
    if d.get("sample_packing"):
        if d.get("pad_to_sequence_len") is False:
            warning(V, "`pad_to_sequence_len: true` is recommended when using sample_packing")
        elif d.get("pad_to_sequence_len") is None:
            info(V, "Setting `pad_to_sequence_len: true` to prevent memory leaks when sample_packing")
            d["pad_to_sequence_len"] = True
    fields = ("micro_batch_size", "gradient_accumulation_steps", "batch_size")
    if sum(1 for f in fields if d.get(f)) < 2:
        raise _Val("At least two of {} must be set".format(", ".join(fields)))


def _b_optimization(d):
    fsdp_config = d.get("fsdp_config") or {}
    version = d.get("fsdp_version", None)
    if isinstance(fsdp_config, dict):
        if not version and fsdp_config and fsdp_config.get("version"):
            v = fsdp_config.pop("version")
            d["fsdp_version"] = v
            d["fsdp_config"]["fsdp_version"] = v
        elif not version and fsdp_config and fsdp_config.get("fsdp_version"):
            d["fsdp_version"] = fsdp_config.get("fsdp_version")
        if version and fsdp_config and not fsdp_config.get("fsdp_version"):
            d["fsdp_config"]["fsdp_version"] = version
        if fsdp_config and not d.get("fsdp_version"):
            d["fsdp_version"] = 1
            d["fsdp_config"]["fsdp_version"] = 1
    fc = d.get("fsdp_config")
    if fc and isinstance(fc, dict):
        if any(k.startswith("fsdp_") and k != "fsdp_version" for k in fc):
            warning(V, "Configuring FSDP fields with the `fsdp_` prefix is deprecated. Please omit the `fsdp_` prefix "
                       "from the any fields in `fsdp_config`.")
            d["fsdp_config"] = {(k.replace("fsdp_", "") if k.startswith("fsdp_") and k != "fsdp_version" else k): v
                                for k, v in fc.items()}
        fc = d["fsdp_config"]
        if fc.get("cpu_offload_pin_memory") is False:
            if str(d.get("fsdp_version")) != "2":
                raise _Val("FSDP1 does not support disabling cpu_offload_pin_memory, please set `fsdp_version` to 2")
            if not fc.get("offload_params"):
                raise _Val("disabling cpu_offload_pin_memory requires enabling offload_params")
    if d.get("fsdp_config", {}) and str(d.get("fsdp_version")) != "2":
        warning(V, "FSDP1 is deprecated and will be removed in an upcoming release of Axolotl (transformers plans to "
                   "in v5.20). We recommend migrating to fsdp_version: 2 for better performance and compatibility. "
                   "See https://docs.axolotl.ai/docs/multi-gpu.html#sec-fsdp for details on migrating your config.")
    enabled = [k for k in ("cut_cross_entropy", "chunked_cross_entropy", "liger_cross_entropy",
                           "liger_fused_linear_cross_entropy") if d.get(k)]
    if len(enabled) > 1:
        raise _Val("Only one cross entropy optimization can be enabled at a time. Found {} enabled: {}. Please "
                   "disable all but one.".format(len(enabled), ", ".join(enabled)))


def _b_system(d):
    if d.get("max_memory") is not None and d.get("gpu_memory_limit") is not None:
        raise _Val("max_memory and gpu_memory_limit are mutually exclusive and cannot be used together.")
    if d.get("deepspeed") and d.get("fsdp"):
        raise _Val("deepspeed and fsdp cannot be used together.")
    if d.get("model_quantization_config") and (d.get("load_in_8bit") or d.get("load_in_4bit")):
        raise _Val("model_quantization_config and load_in_8bit or load_in_4bit cannot be used together.")


def _b_pretraining(d):
    if d.get("streaming") and d.get("sample_packing") and d.get("datasets") and len(d.get("datasets")) > 1:
        raise RawError("NotImplementedError", "Sample packing with multiple streaming datasets is not yet supported")
    if d.get("streaming") and not d.get("max_steps"):
        raise _Val("max_steps must be set when using streaming datasets. Trainer cannot infer dataset length for "
                   "iterable datasets.")
    if d.get("streaming") and d.get("val_set_size"):
        raise _Val("val_set_size is not supported with streaming datasets. Use test_datasets to specify evaluation "
                   "datasets when streaming is enabled.")
    if d.get("pretraining_dataset") and d.get("val_set_size"):
        raise _Val("val_set_size is not supported with pretraining_dataset. Use test_datasets to specify evaluation "
                   "datasets for pretraining.")
    if d.get("pretraining_dataset") and d.get("group_by_length"):
        warning(V, "You probably want to disable group_by_length as it will force a streamed dataset to download "
                   "completely.")
    if d.get("pretraining_dataset") and not d.get("max_steps"):
        raise _Val("max_steps must be set when using iterable pretraining_dataset, Trainer can't infer length and "
                   "schedule optimizer/learning rate without it!")


def _after_validators(m, plugins):
    """The after validators that matter here, in pydantic's order; `m` is the model."""
    # ComplexValidationMixin
    if m.get("early_stopping_patience"):
        if not m.get("save_steps") or not m.get("eval_steps"):
            raise _Val("`early_stopping_patience` requires save_steps and eval_steps to be set. eval_steps should "
                       "evenly divide save_steps.")
    if not m.get("tensor_parallel_size"):
        m["tensor_parallel_size"] = 1
    if m.get("sequence_parallel_degree") and not m.get("context_parallel_size"):
        warning(V, "`sequence_parallel_degree` is deprecated, use `context_parallel_size`")
        m["context_parallel_size"] = m["sequence_parallel_degree"]
    cp = m.get("context_parallel_size")
    if not cp:
        m["context_parallel_size"] = 1
    elif cp > 1:
        if m.get("attn_implementation") not in ATTN_FLASH_LIB:
            raise _Val("context_parallel_size > 1 requires flash attention (attn_implementation: flash_attention_2 "
                       "or flash_attention_3).")
        if m.get("sample_packing") and (m.get("micro_batch_size") or 1) > 1:
            raise _Val("micro_batch_size must be set to 1 when sample_packing is enabled due to a `ring-flash-attn` "
                       "requirement")
        warning(V, "Sequence parallelism (SP) is enabled with context_parallel_size={}. Please note that logged "
                   "losses may differ slightly to the non-SP losses due to transformers Trainer implementation "
                   "details. Please see https://github.com/axolotl-ai-cloud/axolotl/pull/2495#issuecomment-2784022042 "
                   "for more details.".format(cp))
        if m.get("ring_attn_func") is None:
            m["ring_attn_func"] = "varlen_llama3" if m.get("sample_packing") else "batch_ring"
    # ModelCompatibilityValidationMixin
    base = str(m.get("base_model") or "").lower()
    if "falcon" in base and m.get("fsdp"):
        raise _Val("FSDP is not supported for falcon models")
    if "mpt" in base and m.get("gradient_checkpointing"):
        raise _Val("gradient_checkpointing is not supported for MPT models")
    if m.get("activation_offloading") and not m.get("gradient_checkpointing"):
        raise _Val("activation_offloading requires gradient_checkpointing")
    # OptimizationValidationMixin
    opt = str(m.get("optimizer") or "")
    fc = m.get("fsdp_config") or {}
    if fc and opt and "8bit" in opt and fc.get("offload_params") and str(m.get("fsdp_version")) != "2":
        raise _Val("FSDP Offload not compatible with {}".format(opt))
    if fc and opt and "8bit" in opt and str(m.get("fsdp_version")) == "2" and opt in ("adamw_8bit", "adamw_bnb_8bit"):
        raise _Val("FSDP2 not compatible with {}, use `adamw_torch_8bit` instead".format(opt))
    # LoRAValidationMixin
    if m.get("adapter") in ("lora", "qlora") and m.get("flash_attn_fuse_mlp"):
        raise _Val("Fused modules are not supported with LoRA/QLoRA")
    # TrainingValidationMixin
    if (not (m.get("bf16") or m.get("bfloat16")) and (m.get("fp16") or m.get("float16")) and not m.get("adapter")
            and m.get("attn_implementation") not in ATTN_FLASH_LIB and m.get("sample_packing")):
        warning(V, "Full fine tune w/o FA2 w/ sample packing and fp16/float16 is likely to raise errors. Try LoRA.")
    # AttentionValidationMixin
    impl = m.get("attn_implementation")
    if m.get("sample_packing") and not (impl in ATTN_PACKING or impl in ("sdpa", "eager")):
        if impl:
            warning(V, "`sample_packing` with `attn_implementation={!r}` does not handle cross-sample "
                       "decontamination. Use a packing-capable backend (e.g. flash_attention_2, flex_attention, "
                       "sdpa, eager) to isolate samples.".format(impl))
        else:
            warning(V, "`sample_packing` without an attention backend does not handle cross-sample "
                       "decontamination. Set `attn_implementation` to a packing-capable backend (e.g. "
                       "flash_attention_2).")
    if m.get("scaling_softmax") and impl != "flex_attention":
        raise _Val("scaling_softmax requires flex attention. Add `attn_implementation: flex_attention` to your config.")
    # the plugins' args
    if "liger" in plugins and m["tensor_parallel_size"] > 1 and m.get("liger_fused_linear_cross_entropy"):
        raise _Val("Tensor parallelism is not compatible with liger losses.")
    if "expert_parallel" in plugins:
        ep = m.get("expert_parallel_size", 1)
        if ep < 1:
            raise _Val("expert_parallel_size must be >= 1 (got {!r}). Use 1 to disable EP.".format(ep))
    # LoraConfig
    if m.get("adapter") == "qlora" and not m.get("merge_lora"):
        if m.get("load_in_8bit"):
            raise _Val("Can't load qlora in 8bit")
        if m.get("gptq"):
            raise _Val("Can't load qlora if gptq")
        if not m.get("load_in_4bit"):
            raise _Val("Require cfg.load_in_4bit to be True for qlora")
    # AxolotlConfigWCapabilities
    caps = m["capabilities"]
    if caps.get("bf16"):
        if not m.get("bf16") and not m.get("bfloat16"):
            info(C, "bf16 support detected, but not enabled for this configuration.")
    if m.get("tf32") == "auto":
        m["tf32"] = caps.get("tf32")
    if m.get("fp8") and not caps.get("fp8"):
        raise _Val("fp8 requested, but fp8 is not supported on this GPU")


def _plugin_fields(plugins):
    out = []
    for p in reversed(plugins):  # the last plugin's args class comes first in the reversed MRO
        if p in PLUGIN_ARGS:
            out += _parse_fields(PLUGIN_ARGS[p])
    return out


def validate_config(cfg, plugins):
    """utils/config/__init__.py validate_config -> AxolotlConfigWCapabilities(**cfg,
    capabilities=..., env_capabilities=...).model_dump(exclude_none=True)."""
    caps = {"bf16": CAPABILITIES["bf16"], "fp8": CAPABILITIES["fp8"], "tf32": CAPABILITIES["tf32"],
            "n_gpu": int(os.environ.get("WORLD_SIZE", "1") or 1),
            "compute_capability": CAPABILITIES["compute_capability"]}
    data = dict(cfg)
    data["capabilities"] = caps
    data["env_capabilities"] = {"torch_version": TORCH_VERSION}
    try:
        _b_wcap(data)
        _b_input(data)
        _b_lora_config(data)
        for p in plugins:
            if p == "liger":
                _b_liger(data)
            elif p == "cut_cross_entropy":
                _b_cce(data)
        _b_dataset(data)
        _b_training(data)
        if data.get("sample_packing") and data.get("rl"):
            raise _Val("`sample_packing: true` does not work with RLHF training")
        _b_optimization(data)
        _b_system(data)
        _b_pretraining(data)
    except _Val as e:
        raise ValidationFailed([((), "Value error, {}".format(e), "value_error", data)])
    fields = _plugin_fields(plugins) + _parse_fields(_FIELDS)
    model, lines = {}, []
    for name, kind, default, required, alias in fields:
        key = alias if alias and alias in data else name
        if key not in data:
            if required:
                lines.append(((alias or name,), "Field required", "missing", data))
            elif default is not None:
                model[name] = default
            continue
        value = data[key]
        if name == "attn_implementation" and value is not None:
            if not isinstance(value, str):
                raise RawError("TypeError", "attn_implementation must be a string, got {}".format(type(value).__name__))
            if value not in CANONICAL_ATTN and "/" not in value:
                if value in SHORT_ATTN:
                    msg = "attn_implementation={!r} is not accepted. Use the canonical name {!r} instead.".format(
                        value, SHORT_ATTN[value])
                else:
                    msg = ("attn_implementation={!r} is not a recognized backend. Expected one of: {}, or a hub-kernel "
                           "path containing '/'.".format(value, sorted(CANONICAL_ATTN)))
                lines.append(((name,), "Value error, " + msg, "value_error", value))
                continue
        if name == "datasets" and isinstance(value, list):
            bad = [ds for ds in value if isinstance(ds, dict) and isinstance(ds.get("type"), str)
                   and ds["type"].startswith("sharegpt")]
            if bad:
                lines.append(((name,), "Value error, `type: sharegpt.*` is deprecated. Please use `type: "
                               "chat_template` instead.", "value_error", value))
                continue
        got, errs = check_field(alias or name, kind, value)
        if errs:
            lines.extend(errs)
            continue
        if name == "seed" and got is None:
            info(V, "`seed` not set in config; setting to 42")
            got = 42
        if name == "batch_size" and got:
            warning("axolotl.utils.schemas.training", "batch_size is not recommended. Please use "
                    "gradient_accumulation_steps instead.\nTo calculate the equivalent gradient_accumulation_steps, "
                    "divide batch_size / micro_batch_size / number of gpus.")
        if name == "neftune_noise_alpha" and got is not None and got <= 0.0:
            lines.append(((name,), "Value error, neftune_noise_alpha must be > 0.0", "value_error", value))
            continue
        model[name] = got
    if lines:
        raise ValidationFailed(lines)
    model["capabilities"] = caps
    model["env_capabilities"] = data["env_capabilities"]
    try:
        _after_validators(model, plugins)
    except _Val as e:
        raise ValidationFailed([((), "Value error, {}".format(e), "value_error", data)])
    impl = model.get("attn_implementation")
    model["attn_supports_packing"] = impl in ATTN_PACKING
    model["attn_decontaminates_packing"] = impl in ATTN_PACKING or impl in ("sdpa", "eager")
    model["attn_uses_flash_lib"] = impl in ATTN_FLASH_LIB
    model["attn_needs_dtype_cast"] = impl is not None and impl not in ("eager", "sdpa")
    return {k: v for k, v in model.items() if v is not None}


# ---------------------------------------------------------------- load_cfg, normalize_config


def _validation_frames():
    return (_entry_frames() + [(_p("axolotl/cli/{}.py".format("preprocess" if S.entry in ("preprocess", "preprocess-cli")
                                                               else "train")),
                                114 if S.entry in ("preprocess", "preprocess-cli") else 111, "do_cli"),
                               _send_errors_frame(), (_p("axolotl/cli/config.py"), 311, "load_cfg"),
                               (_p("axolotl/utils/config/__init__.py"), 483, "validate_config"),
                               (_p("axolotl/utils/config/__init__.py"), 100, "_model_with_inherited_default_fallback"),
                               (_p("pydantic/main.py"), 250, "__init__")])


def _open_debug_log(cfg):
    """utils/tee.py prepare_debug_log: output_dir/debug.log, appended when resuming."""
    out = cfg["output_dir"]
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "debug.log")
    if not (cfg.get("resume_from_checkpoint") or cfg.get("auto_resume_from_checkpoints")):
        try:
            os.unlink(path)
        except OSError:
            pass
    if os.environ.get("AXOLOTL_TEE_STDOUT", "1").lower() in ("0", "false", "no"):
        return
    try:
        S.tee = open(path, "a", encoding="utf-8")
    except OSError:
        S.tee = None


def _normalize(cfg):
    """utils/config/__init__.py normalize_config (the parts that do not need the model's config)."""
    cfg["gradient_accumulation_steps"] = cfg.get("gradient_accumulation_steps") or (
        cfg.get("batch_size") // cfg.get("micro_batch_size"))
    cfg["batch_size"] = cfg.get("batch_size") or cfg["micro_batch_size"] * cfg["gradient_accumulation_steps"]
    if cfg.get("eval_batch_size") is None:
        cfg["eval_batch_size"] = cfg.get("micro_batch_size")
    cfg["world_size"] = int(os.environ.get("WORLD_SIZE", "1") or 1)
    cfg["local_rank"] = _local_rank()
    cfg["eval_table_size"] = cfg.get("eval_table_size") or 0
    cfg["eval_max_new_tokens"] = cfg.get("eval_max_new_tokens") or 128
    cfg["eval_causal_lm_metrics"] = cfg.get("eval_causal_lm_metrics") or ["sacrebleu", "comet", "ter", "chrf"]
    cfg["device"] = "cuda:{}".format(cfg["local_rank"])
    cfg["device_map"] = "auto" if cfg["world_size"] == 1 else {"": cfg["local_rank"]}
    if any(v.startswith("ACCELERATE_USE_") for v in os.environ):
        cfg.pop("device_map", None)
    cfg["ddp"] = cfg["ddp"] if cfg.get("ddp") is not None else cfg["world_size"] != 1
    if cfg["world_size"] != 1:
        cfg["device_map"] = {"": cfg["local_rank"]}
        if cfg.get("fsdp") or cfg.get("fsdp_config") or cfg.get("ddp"):
            cfg["batch_size"] = cfg["batch_size"] * (cfg["world_size"] // (cfg.get("context_parallel_size") or 1)
                                                     // (cfg.get("tensor_parallel_size") or 1))
    # resolve_dtype: bf16 "auto" on a GPU with bf16
    if not cfg.get("fp16") and cfg.get("bf16") == "auto":
        cfg["bf16"] = bool(CAPABILITIES["bf16"])
    if cfg.get("fp16") and cfg.get("bf16") == "auto":
        cfg["bf16"] = False
    if cfg.get("bf16"):
        cfg["fp16"] = False
    cfg["torch_dtype"] = "torch.bfloat16" if (cfg.get("bf16") or cfg.get("bfloat16")) else (
        "torch.float16" if (cfg.get("load_in_8bit") or cfg.get("fp16") or cfg.get("float16")) else "torch.float32")
    if cfg.get("saves_per_epoch"):
        save_steps = 1.0 / (cfg["saves_per_epoch"] * cfg.get("num_epochs", 1.0))
        if save_steps < 1.0:
            cfg["save_steps"] = save_steps
        elif save_steps > 1:
            warning("axolotl.utils.config", "Invalid value for save_steps ({}) from saves_per_epoch and/or num_epochs. "
                    "Saving at training end only.".format(save_steps))
    if (cfg.get("val_set_size") or cfg.get("test_datasets")) and cfg.get("evals_per_epoch"):
        eval_steps = 1.0 / (cfg["evals_per_epoch"] * cfg.get("num_epochs", 1.0))
        if eval_steps < 1.0:
            cfg["eval_steps"] = eval_steps
        elif eval_steps > 1:
            warning("axolotl.utils.config", "Invalid value for eval_steps ({}) from evals_per_epoch and/or num_epochs. "
                    "Skipping evaluations.".format(eval_steps))
    if not cfg.get("base_model_config"):
        cfg["base_model_config"] = cfg["base_model"]
    cfg["tokenizer_config"] = cfg.get("tokenizer_config") or cfg.get("base_model_config") or cfg["base_model"]
    base = cfg["base_model"].lower()
    cfg["is_llama_derived_model"] = bool(cfg.get("is_llama_derived_model") or "llama" in base
                                         or (cfg.get("type_of_model") and "llama" in cfg["type_of_model"].lower()))
    cfg["is_falcon_derived_model"] = bool(cfg.get("is_falcon_derived_model") or "falcon" in base)
    cfg["is_mistral_derived_model"] = bool(cfg.get("is_mistral_derived_model") or "mistral" in base.split("/")[-1])
    if cfg.get("gradient_checkpointing") and cfg.get("unfrozen_parameters") is None \
            and cfg.get("gradient_checkpointing_kwargs") is None and cfg.get("rl") is None:
        cfg["gradient_checkpointing_kwargs"] = {"use_reentrant": True}
    if cfg.get("chat_template") and cfg.get("datasets"):
        for ds in cfg["datasets"]:
            if isinstance(ds, dict) and ds.get("type") in ("orpo.chat_template", "chat_template") \
                    and not ds.get("chat_template"):
                info("axolotl.utils.config", "updating dataset {} with `chat_template: {}` to match your "
                     "chat_template".format(ds.get("path"), cfg["chat_template"]))
                ds["chat_template"] = cfg["chat_template"]


def load_cfg(config, kwargs, is_preprocess=False):
    """cli/config.py load_cfg."""
    path, raw = _read_config(config)
    cfg = dict(raw)
    cfg["axolotl_config_path"] = path
    if is_preprocess:
        kwargs = {"is_preprocess": True, **kwargs}
    _apply_overrides(cfg, kwargs)
    plugins = _prepare_plugins(cfg)
    try:
        cfg = validate_config(cfg, plugins)
    except ValidationFailed as e:
        fail("pydantic_core._pydantic_core.ValidationError", render_validation_error(e.lines), _validation_frames())
    except RawError as e:
        fail(e.exc_type, e.message, _validation_frames())
    _open_debug_log(cfg)
    _normalize(cfg)
    dump = {k: v for k, v in cfg.items() if v is not None}
    for k in ("comet_api_key",):
        if k in dump:
            dump[k] = "[REDACTED]"
    info("axolotl.cli.config", "config:\n" + json.dumps(dump, indent=2, default=str, sort_keys=True))
    cfg["_plugins"] = plugins
    return cfg


# ---------------------------------------------------------------- datasets (utils/data/{sft,shared,lock}.py)


def _hash_value(v):
    if isinstance(v, dict):
        out = {}
        for k in sorted(v, key=str):
            item = _hash_value(v[k])
            if item is not None:
                out[str(k)] = item
        return out
    if isinstance(v, (list, tuple)):
        return [_hash_value(x) for x in v]
    return v


def _selected(obj, fields):
    out = {}
    for f in fields:
        v = _hash_value(obj.get(f) if isinstance(obj, dict) else None)
        if not (v is None or v is False or v == {} or v == []):
            out[f] = v
    return out


def dataset_hash(cfg):
    """shared.py generate_dataset_hash_from_config over the datasets as written
    (SFTDataset's defaults are not known here), tokenizer = tokenizer_config."""
    import hashlib

    def base(ds):
        vals = []
        for f in ("path", "type", "shards", "conversation", "split", "temperature"):
            v = ds.get(f) if isinstance(ds, dict) else None
            if f == "temperature":
                v = v or 1.0
            vals.append(str(v))
        return ":".join(vals)

    datasets = cfg.get("datasets") or []
    ds_str = "|".join(sorted(base(ds) for ds in datasets))
    extra = {}
    cfg_extra = _selected(cfg, ("added_tokens_overrides", "chat_template", "chat_template_jinja",
                                "chat_template_kwargs", "default_system_message", "eot_tokens",
                                "sample_packing_bin_size", "sample_packing_group_size", "sample_packing_sequentially",
                                "special_tokens", "train_on_inputs"))
    if cfg_extra:
        extra["cfg"] = cfg_extra
    ds_extra = []
    for ds in datasets:
        fields = _selected(ds, ("chat_template", "chat_template_jinja", "data_files", "drop_system_message", "ds_type",
                                "field", "field_chosen", "field_human", "field_messages", "field_model",
                                "field_rejected", "field_thinking", "field_tools", "input_format", "input_transform",
                                "max_completion_length", "message_field_content", "message_field_role",
                                "message_field_training", "message_field_training_detail",
                                "message_property_mappings", "name", "preprocess_shards", "revision", "roles",
                                "roles_to_train", "shards_idx", "split_thinking", "step_separator",
                                "template_thinking_key", "text_column", "train_on_eos", "train_on_eot",
                                "train_on_last_step_only"))
        if fields:
            ds_extra.append({"id": base(ds), "extra": fields})
    if ds_extra:
        extra["datasets"] = sorted(ds_extra, key=lambda x: json.dumps(x, sort_keys=True, separators=(",", ":")))
    text = "{}@{}@{}@{}@{}@{}|{}|{}".format(
        cfg.get("sequence_len"), cfg.get("sample_packing"), cfg.get("eval_sample_packing"), cfg.get("group_by_length"),
        cfg.get("kd_temperature") or 1.0, cfg.get("dataset_exact_deduplication") or False, ds_str,
        cfg.get("tokenizer_config"))
    if extra:
        text += "|" + json.dumps(_hash_value(extra), sort_keys=True, separators=(",", ":"))
    return hashlib.md5(text.encode("utf-8")).hexdigest()


def _prepared_root(cfg):
    return cfg.get("dataset_prepared_path") or DEFAULT_PREPARED


def _write_prepared(path, cfg, rows):
    """save_to_disk's layout, as small markers."""
    os.makedirs(path, exist_ok=True)
    harness.write_json(os.path.join(path, "dataset_info.json"), {
        "emulated": True, "rows": rows, "sequence_len": cfg.get("sequence_len")})
    harness.write_json(os.path.join(path, "state.json"), {
        "_data_files": [{"filename": "data-00000-of-00001.arrow"}], "_split": "train"})
    harness.write_file(os.path.join(path, "data-00000-of-00001.arrow"), "emulated prepared dataset\n")


def _rows(cfg):
    return ROWS_PER_DATASET * max(1, len(cfg.get("datasets") or []))


def _split_rows(cfg):
    """(train rows, eval rows): val_set_size as datasets' train_test_split takes it."""
    n = _rows(cfg)
    val = cfg.get("val_set_size") or 0
    if not val:
        return n, 0
    n_test = int(math.ceil(val * n)) if val < 1 else int(val)
    return max(0, n - n_test), n_test


def prepare_dataset(cfg, preprocess=False):
    """The FileLockLoader round of _prepare_standard_dataset (train split)."""
    import fcntl

    root = _prepared_root(cfg)
    os.makedirs(root, exist_ok=True)
    lock_path = os.path.join(root, "datasets_prep.lock")
    ready = os.path.join(root, "datasets_ready.flag")
    counter = os.path.join(root, "process_counter.txt")
    from pathlib import Path

    prepared = str(Path(root) / dataset_hash(cfg))
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            count = 0
            if os.path.exists(counter):
                text = open(counter).read().strip()
                count = int(text) if text else 0
            harness.write_file(counter, str(count + 1))
            _load_tokenized(cfg, prepared, preprocess)
            if not os.path.exists(ready):
                open(ready, "a").close()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    try:
        with open(lock_path, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                text = open(counter).read().strip()
                count = (int(text) if text else 0) - 1
                if count <= 0:
                    for p in (ready, counter):
                        try:
                            os.unlink(p)
                        except OSError:
                            pass
                else:
                    harness.write_file(counter, str(count))
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
    except FileNotFoundError:
        pass
    return prepared


def _load_tokenized(cfg, prepared, preprocess):
    """_load_tokenized_prepared_datasets -> load_preprocessed_dataset / _load_raw_datasets."""
    name = "axolotl.utils.data.shared"
    have = os.path.isdir(prepared) and any(os.scandir(prepared))
    if have and not cfg.get("skip_prepare_dataset") and not preprocess:
        info(name, "Loading prepared dataset from disk at {}...".format(prepared))
        harness.sleep(STARTUP_S["load_prepared"])
        return
    info(name, "Unable to find prepared dataset in {}".format(prepared))
    info("axolotl.utils.data.sft", "Loading raw datasets...", main_only=False)
    if not preprocess and not cfg.get("skip_prepare_dataset"):
        warning("axolotl.utils.data.sft", "Processing datasets during training can lead to VRAM instability. Please "
                "pre-process your dataset using `axolotl preprocess path/to/config.yml`.")
    harness.sleep(STARTUP_S["tokenize"] * max(1, len(cfg.get("datasets") or [])))
    if not cfg.get("skip_prepare_dataset"):
        _write_prepared(prepared, cfg, _rows(cfg))


def _dp_world(cfg):
    return max(1, cfg["world_size"] // (cfg.get("context_parallel_size") or 1) // (cfg.get("tensor_parallel_size") or 1))


def total_num_steps(cfg):
    """utils/trainer.py calculate_total_num_steps over the emulated rows."""
    n_train, _ = _split_rows(cfg)
    if not cfg["batch_size"]:  # normalize_config scaled it by world // cp // tp, which was 0
        packed = bool(cfg.get("sample_packing"))
        fail("ZeroDivisionError", "integer division or modulo by zero" if packed else "float division by zero",
             _entry_frames() + [(_p("axolotl/cli/train.py"), 139, "do_cli"), (_p("axolotl/cli/train.py"), 77, "do_train"),
                                _send_errors_frame(), (_p("axolotl/common/datasets.py"), 61, "load_datasets"),
                                (_p("axolotl/utils/data/utils.py"), 50, "wrapper"),
                                (_p("axolotl/utils/data/sft.py"), 65, "prepare_datasets"),
                                (_p("axolotl/utils/data/sft.py"), 117 if cfg.get("max_steps") else 120,
                                 "_prepare_standard_dataset"),
                                (_p("axolotl/utils/trainer.py"), 495 if packed else 521, "calculate_total_num_steps")])
    if cfg.get("sample_packing"):
        tokens = n_train * min(TOKENS_PER_ROW, cfg.get("sequence_len") or TOKENS_PER_ROW)
        bins = int(math.ceil(tokens / (cfg["micro_batch_size"] * cfg["sequence_len"] * PACKING_EFF)))
        loader_len = max(1, bins * cfg["micro_batch_size"] // cfg["batch_size"])
        steps = int(math.floor(loader_len * cfg.get("num_epochs", 1.0)))
        if cfg.get("dataloader_drop_last"):
            steps -= int(math.ceil(cfg.get("num_epochs", 1.0)))
        return steps
    return int(math.ceil(n_train * cfg.get("num_epochs", 1.0) / cfg["batch_size"]))


# ---------------------------------------------------------------- the training bar (tqdm, as transformers' ProgressCallback drives it)


def _fmt_interval(t):
    mins, s = divmod(int(t), 60)
    h, m = divmod(mins, 60)
    return "{:d}:{:02d}:{:02d}".format(h, m, s) if h else "{:02d}:{:02d}".format(m, s)


class Bar:
    """tqdm(total=max_steps, dynamic_ncols=True) writing to a non-tty stderr:
    each refresh is `\\r` + the bar (no width known: a 10-cell bar), padded over
    the previous text; tqdm.write clears the bar, prints on stdout, redraws it."""

    UTF = " " + "".join(chr(c) for c in range(0x258F, 0x2587, -1))
    ASCII = " 123456789#"

    def __init__(self, total, start_s):
        enc = (getattr(sys.stderr, "encoding", None) or "").lower()
        self.CHARSET = self.UTF if enc.replace("-", "").startswith("utf") else self.ASCII
        self.total, self.n, self.start = total, 0, start_s
        self.last_len = 0
        self.last_n, self.last_t = 0, start_s
        self.ema_dn = self.ema_dt = 0.0
        self.calls = 0
        self.refresh(start_s)

    def _ema(self, old, x):
        return 0.3 * x + 0.7 * old

    def text(self, now, overall=False):
        elapsed = max(0.0, now - self.start)
        if overall:
            rate = self.n / elapsed if elapsed else None
        elif self.calls:
            beta = 0.7 ** self.calls
            dn, dt = self.ema_dn / (1 - beta), self.ema_dt / (1 - beta)
            rate = dn / dt if dt else None
        else:
            rate = None
        frac = self.n / self.total if self.total else 0
        nsyms = len(self.CHARSET) - 1
        full, part = divmod(int(frac * 10 * nsyms), nsyms)
        bar = self.CHARSET[-1] * full
        if full < 10:
            bar += self.CHARSET[part] + " " * (10 - full - 1)
        remaining = (self.total - self.n) / rate if rate and self.total else None
        if rate:
            rate_fmt = "{:5.2f}s/it".format(1 / rate) if rate < 1 else "{:5.2f}it/s".format(rate)
        else:
            rate_fmt = "?it/s"
        return "{:3.0f}%|{}| {}/{} [{}<{}, {}]".format(
            frac * 100, bar, self.n, self.total, _fmt_interval(elapsed),
            _fmt_interval(remaining) if remaining is not None else "?", rate_fmt)

    def _print(self, s):
        _write(sys.stderr, "\r" + s + " " * max(self.last_len - len(s), 0))
        self.last_len = len(s)

    def refresh(self, now, overall=False):
        self._print(self.text(now, overall))

    def update(self, n, now):
        self.n += n
        dn, dt = self.n - self.last_n, now - self.last_t
        if dn and dt:
            self.ema_dn = self._ema(self.ema_dn, dn)
            self.ema_dt = self._ema(self.ema_dt, dt)
            self.calls += 1
        self.last_n, self.last_t = self.n, now
        self.refresh(now)

    def write(self, line, now):
        self._print("")
        _write(sys.stderr, "\r")
        _write(sys.stdout, line + "\n")
        self.refresh(now)

    def close(self, now):
        self.refresh(now, overall=True)
        _write(sys.stderr, "\n")


def _g4(v):
    """ProgressCallback.on_log: floats as f"{v:.4g}", the rest as they are."""
    return "{:.4g}".format(v) if isinstance(v, float) else v


def log_line(logs):
    shown = {k: _g4(v) for k, v in logs.items() if k != "total_flos"}
    return str(shown)


def lr_at(cfg, step, max_steps, warmup):
    """The HF schedulers transformers' get_scheduler builds for these names."""
    lr = float(cfg["learning_rate"])
    name = cfg.get("lr_scheduler") or "cosine"
    if name == "constant":
        return lr
    if step < warmup:
        return lr * step / max(1, warmup)
    if name == "constant_with_warmup":
        return lr
    if name == "linear":
        return lr * max(0.0, (max_steps - step) / max(1, max_steps - warmup))
    progress = (step - warmup) / max(1, max_steps - warmup)
    return lr * max(0.0, 0.5 * (1.0 + math.cos(math.pi * 2.0 * 0.5 * progress)))


# ---------------------------------------------------------------- train (cli/train.py do_train, train.py, the HF Trainer)


def _sleep(seconds):
    harness.sleep(seconds)
    S.sim += seconds


def _train_frames(*inner, line=639):
    """do_cli -> do_train -> train (line 639: setup_model_and_trainer, 652: execute_training)."""
    return (_entry_frames() + [(_p("axolotl/cli/train.py"), 139, "do_cli"), (_p("axolotl/cli/train.py"), 79, "do_train"),
                               _send_errors_frame(), (_p("axolotl/train.py"), line, "train")] + list(inner))


def _model_frames(*inner):
    return _train_frames((_p("axolotl/train.py"), 574, "setup_model_and_trainer"),
                         (_p("axolotl/train.py"), 84, "setup_model_and_tokenizer"),
                         (_p("axolotl/loaders/model.py"), 176, "load"), *inner)


def barrier(name):
    """What a collective does to the ranks' progress: none passes until every rank
    of the job has reached it (a file per rank; the job is torchrun's run id, the
    master address and Slurm's job/step)."""
    w = S.w
    if w.world_size <= 1 or not os.environ.get("TORCHELASTIC_RUN_ID"):
        return
    import hashlib

    key = "|".join(os.environ.get(k, "") for k in ("TORCHELASTIC_RUN_ID", "MASTER_ADDR", "SLURM_JOB_ID",
                                                   "SLURM_STEP_ID", "WORLD_SIZE"))
    d = os.path.join("/tmp/attune-emulate-axolotl", hashlib.sha256(key.encode()).hexdigest()[:16], name)
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, str(w.rank)), "a").close()
    deadline = time.monotonic() + max(5.0, int(os.environ.get("AXOLOTL_NCCL_TIMEOUT", "1800")) / harness.time_scale())
    while len(os.listdir(d)) < w.world_size and time.monotonic() < deadline:
        time.sleep(0.005)


def _init_dist():
    """PartialState: the device is set (a local rank past the GPUs fails as CUDA
    does) and is_main_process() becomes global rank 0."""
    if not S.dist:
        harness.check_device(S.w)
        S.dist = True


def parallel_config_kwargs(cfg, world):
    """utils/distributed.py _get_parallel_config_kwargs."""
    tp, cp = cfg.get("tensor_parallel_size") or 1, cfg.get("context_parallel_size") or 1
    dp_shard, dp_rep = cfg.get("dp_shard_size"), cfg.get("dp_replicate_size")
    is_fsdp = bool(cfg.get("fsdp") or cfg.get("fsdp_config"))
    ep = cfg.get("expert_parallel_size")
    pc, rem = {}, world
    if ep and ep > 1:
        if rem % ep != 0:
            return None, "expert_parallel_size ({}) must divide world_size ({}).".format(ep, world), 336
        rem //= ep
    if tp > 1:
        pc["tp_size"] = tp
        rem //= tp
    if cp > 1:
        pc["cp_size"] = cp
        rem //= cp
    if dp_shard is None and dp_rep in (None, 1):
        if rem > 1:
            pc["dp_shard_size"] = rem
            rem = 1
    if dp_rep and dp_rep > 1:
        pc["dp_replicate_size"] = dp_rep
        rem //= dp_rep
    if rem > 1 and dp_shard and dp_shard > 1:
        if not is_fsdp:
            return None, ("dp_shard_size was configured without a corresponding fsdp_config! Please ensure you have "
                          "configured FSDP using fsdp_config."), 361
        pc["dp_shard_size"] = dp_shard
        rem //= dp_shard
        if rem > 1 and "dp_replicate_size" not in pc:
            pc["dp_replicate_size"] = rem
            rem = 1
    if rem > 1 and "dp_shard_size" not in pc and is_fsdp:
        pc["dp_shard_size"] = rem
        rem = 1
    if rem > 1:
        return None, "The configured parallelisms are incompatible with the current world size ({})!\n{}".format(
            world, pc), 377
    return pc, None, None


def _uses_parallel_config(cfg):
    """loaders/model.py _apply_pre_model_load_setup."""
    use = bool(cfg.get("fsdp_config") or (cfg.get("tensor_parallel_size") or 1) > 1
               or (cfg.get("context_parallel_size") or 1) > 1)
    if cfg.get("fsdp_config") and cfg.get("fsdp_version") != 2:
        use = False
    return use


def world_size_checks(cfg):
    """The model loader's parallelism config and device mesh, the expert-parallel
    plugin's product check, and accelerate's total-size check at trainer creation."""
    world = cfg["world_size"]
    pc_frames = [(_p("axolotl/loaders/model.py"), 220, "_apply_pre_model_load_setup"),
                 (_p("axolotl/loaders/model.py"), 554, "_set_parallel_config")]
    total = None
    if _uses_parallel_config(cfg):
        pc, msg, line = parallel_config_kwargs(cfg, world)
        if msg:
            fail("ValueError", msg, _model_frames(*pc_frames, (_p("axolotl/utils/distributed.py"), 300,
                                                               "build_parallelism_config"),
                                                 (_p("axolotl/utils/distributed.py"), line,
                                                  "_get_parallel_config_kwargs")))
        if pc:
            total = 1
            for v in pc.values():
                total *= v
            if total > world:
                fail("RuntimeError", "Mesh should not be bigger than default world size {}, but found {} ranks!".format(
                    world, total), _model_frames(*pc_frames, (_p("axolotl/utils/distributed.py"), 314,
                                                              "build_parallelism_config"),
                                                 (_p("accelerate/parallelism_config.py"), 232, "build_device_mesh")))
    ep = cfg.get("expert_parallel_size") or 1
    if "expert_parallel" in cfg.get("_plugins", []) and ep > 1 and world > 1:
        dp_shard = cfg.get("dp_shard_size") or 1
        tp, cp = cfg.get("tensor_parallel_size") or 1, cfg.get("context_parallel_size") or 1
        product = ep * dp_shard * tp * cp
        if product != world:
            fail("ValueError", "expert_parallel: world_size ({}) must equal expert_parallel_size ({}) * dp_shard_size "
                 "({}) * tensor_parallel_size ({}) * context_parallel_size ({}) = {}.".format(
                     world, ep, dp_shard, tp, cp, product),
                 _model_frames((_p("axolotl/loaders/model.py"), 179, "load"),
                               (_p("axolotl/integrations/base.py"), 528, "pre_model_load"),
                               (_p("axolotl/integrations/expert_parallel/plugin.py"), 57, "pre_model_load"),
                               (_p("axolotl/integrations/expert_parallel/plugin.py"), 473, "_validate_mesh_axes")))
    return total


def _accelerate_check(cfg, total):
    if total is not None and total != cfg["world_size"] and (cfg.get("expert_parallel_size") or 1) <= 1:
        fail("ValueError", "ParallelismConfig total_size ({}) does not match num_processes ({}). Please adjust "
             "dp_replicate_size/ dp_shard_size/tp_size/cp_size/sp_size.".format(total, cfg["world_size"]),
             _train_frames((_p("axolotl/train.py"), 585, "setup_model_and_trainer"),
                           (_p("accelerate/parallelism_config.py"), 373, "_validate_accelerator")))


def _marker(path, what):
    harness.write_file(path, "emulated {}\n".format(what))


def _fsdp_sharded(cfg, final=False):
    fc = cfg.get("fsdp_config") or {}
    if not (cfg.get("fsdp_config") or cfg.get("fsdp")):
        return False
    kind = (fc.get("final_state_dict_type") if final else None) or fc.get("state_dict_type")
    return kind == "SHARDED_STATE_DICT"


def _save_model_files(cfg, out, rank0_only=True):
    weights = "adapter_model.safetensors" if cfg.get("adapter") else "model.safetensors"
    if S.w.rank == 0:
        os.makedirs(out, exist_ok=True)
        _marker(os.path.join(out, weights), "weights")
        if cfg.get("adapter"):
            harness.write_json(os.path.join(out, "adapter_config.json"), {"peft_type": "LORA", "r": cfg.get("lora_r")})
        else:
            harness.write_json(os.path.join(out, "config.json"), {"_name_or_path": cfg.get("base_model")})


class Run:
    """One HF Trainer.train() as axolotl configures it (core/builders/base.py)."""

    def __init__(self, cfg, total, calc_total, pred):
        self.cfg, self.pred = cfg, pred
        self.clock = harness.StepClock(pred)
        self.w = S.w
        self.world = cfg["world_size"]
        self.dpw = _dp_world(cfg)
        self.total = total
        self.max_steps = cfg.get("max_steps") or total or -1
        epochs = cfg.get("num_epochs", 1.0) or 1.0
        self.steps_per_epoch = max(1, int(round(calc_total / epochs))) if calc_total > 0 else max(1, self.max_steps)
        if cfg.get("warmup_steps") is not None:
            warm = cfg["warmup_steps"]
        elif cfg.get("warmup_ratio") is not None:
            warm = max(int(cfg["warmup_ratio"] * total), 0) if total else 0
        else:
            warm = min(int(0.03 * total), 100) if total else 0
        self.warmup = 2 if warm == 1 else warm
        if cfg.get("logging_steps") is not None:
            self.logging_steps = cfg["logging_steps"]
        else:
            self.logging_steps = 500 if not total else max(min(int(0.005 * total), 10), 1)
        if cfg.get("save_steps"):
            self.save_strategy, save = "steps", cfg["save_steps"]
            self.save_steps = int(math.ceil(self.max_steps * save)) if save < 1 else int(save)
        else:
            self.save_strategy, self.save_steps = cfg.get("save_strategy") or "epoch", 0
        self.save_total_limit = cfg.get("save_total_limit") or 4
        n_train, n_eval = _split_rows(cfg)
        if cfg.get("test_datasets"):
            n_eval = ROWS_PER_DATASET * len(cfg["test_datasets"])
        self.n_eval = n_eval
        self.eval_strategy, self.eval_steps, self.eval_on_start = "no", 0, False
        if not n_eval and cfg.get("val_set_size") == 0:
            pass
        elif cfg.get("eval_steps"):
            ev = cfg["eval_steps"]
            self.eval_strategy, self.eval_on_start = "steps", True
            self.eval_steps = int(math.ceil(self.max_steps * ev)) if ev < 1 else int(ev)
        elif cfg.get("eval_strategy"):
            self.eval_strategy, self.eval_on_start = cfg["eval_strategy"], True
        self.out = cfg["output_dir"]
        seq = cfg.get("sequence_len") or TOKENS_PER_ROW
        per_row = seq if (cfg.get("sample_packing") or cfg.get("pad_to_sequence_len")) else min(seq, TOKENS_PER_ROW)
        self.tokens_per_step = self.world * cfg["gradient_accumulation_steps"] * cfg["micro_batch_size"] * per_row
        self.bar = None
        self.log_history = []

    # -- output on world rank 0 (ProgressCallback, state.is_world_process_zero)
    def _print_logs(self, logs):
        self.log_history.append(dict(logs, step=self.g))
        if self.w.rank == 0 and self.bar is not None:
            self.bar.write(log_line(logs), S.sim)

    def _memory(self, logs):
        alloc = self.pred.peak_allocated_gib
        logs["memory/max_active (GiB)"] = round(alloc, 2)
        logs["memory/max_allocated (GiB)"] = round(alloc, 2)
        logs["memory/device_reserved (GiB)"] = round(self.pred.peak_reserved_gib, 2)

    def _epoch(self):
        return self.g / self.steps_per_epoch

    def evaluate(self):
        cfg = self.cfg
        if cfg.get("eval_sample_packing"):
            tokens = self.n_eval * min(TOKENS_PER_ROW, cfg.get("sequence_len") or TOKENS_PER_ROW)
            samples = max(1, int(math.ceil(tokens / ((cfg.get("eval_batch_size") or 1) * cfg["sequence_len"]
                                                      * PACKING_EFF))))
        else:
            samples = self.n_eval
        ebs = cfg.get("eval_batch_size") or cfg["micro_batch_size"]
        batches = int(math.ceil(samples / (ebs * self.dpw)))
        runtime = max(0.01, batches * self.pred.step_s / max(1, cfg["gradient_accumulation_steps"]) / 3.0)
        _sleep(runtime)
        eval_loss = harness.loss(max(1, self.g)) + 0.05
        logs = {"eval_loss": eval_loss, "eval_runtime": round(runtime, 4),
                "eval_samples_per_second": round(samples / runtime, 3),
                "eval_steps_per_second": round(math.ceil(samples / (ebs * self.world)) / runtime, 3)}
        try:
            logs["eval_ppl"] = round(math.exp(eval_loss), 5)
        except OverflowError:
            logs["eval_ppl"] = float("inf")
        self._memory(logs)
        logs["epoch"] = self._epoch() if self.g else 0
        self._print_logs(logs)

    def save_checkpoint(self):
        """Trainer._save_checkpoint: output_dir/checkpoint-<global_step>, then rotation.
        Every rank's own files (rng state, FSDP shards) are markers; rank 0 writes them all."""
        if self.w.rank != 0:
            return
        cfg, g = self.cfg, self.g
        ckpt = os.path.join(self.out, "checkpoint-{}".format(g))
        os.makedirs(ckpt, exist_ok=True)
        if cfg.get("include_tkps"):
            harness.write_json(os.path.join(ckpt, "tokens_state.json"),
                               {"total": self.tokens_total, "trainable": self.tokens_total})
        ranks = range(self.world)
        if _fsdp_sharded(cfg):
            for r in ranks:
                _marker(os.path.join(ckpt, "pytorch_model_fsdp_0", "__{}_0.distcp".format(r)), "model shard")
                if not cfg.get("save_only_model"):
                    _marker(os.path.join(ckpt, "optimizer_0", "__{}_0.distcp".format(r)), "optimizer shard")
        else:
            info("axolotl.core.trainers.base", "Saving model checkpoint to {}".format(ckpt))
            _save_model_files(cfg, ckpt)
            if not cfg.get("save_only_model"):
                _marker(os.path.join(ckpt, "optimizer.pt"), "optimizer state")
        if not cfg.get("save_only_model"):
            _marker(os.path.join(ckpt, "scheduler.pt"), "scheduler state")
            for r in ranks:
                _marker(os.path.join(ckpt, "rng_state_{}.pth".format(r) if self.world > 1 else "rng_state.pth"),
                        "rng state")
        _marker(os.path.join(ckpt, "training_args.bin"), "training arguments")
        harness.write_json(os.path.join(ckpt, "trainer_state.json"), {
            "global_step": g, "max_steps": self.max_steps, "epoch": self._epoch(),
            "logging_steps": self.logging_steps, "save_steps": self.save_steps, "eval_steps": self.eval_steps,
            "num_train_epochs": int(math.ceil(self.max_steps / self.steps_per_epoch)),
            "train_batch_size": cfg["micro_batch_size"], "log_history": self.log_history, "emulated": True})
        self.rotate()

    def rotate(self):
        """Trainer._rotate_checkpoints: keep the newest save_total_limit."""
        found = []
        for name in os.listdir(self.out):
            if name.startswith("checkpoint-") and name.split("-")[-1].isdigit() and \
                    os.path.isdir(os.path.join(self.out, name)):
                found.append((int(name.split("-")[-1]), name))
        found.sort()
        import shutil

        for _, name in found[:max(0, len(found) - self.save_total_limit)]:
            shutil.rmtree(os.path.join(self.out, name), ignore_errors=True)

    def train(self, resume):
        cfg = self.cfg
        self.g = 0
        self.tokens_total = 0
        if resume is not None:
            state_file = os.path.join(resume, "trainer_state.json")
            if not os.path.isdir(resume) or not os.path.isfile(state_file):
                fail("ValueError", "Can't find a valid checkpoint at {}".format(resume),
                     _train_frames((_p("axolotl/train.py"), 227, "execute_training"), line=652))
            try:
                self.g = int(harness.read_json(state_file).get("global_step", 0))
                self.log_history = list(harness.read_json(state_file).get("log_history", []))
            except (ValueError, OSError):
                self.g = 0
            tokens_file = os.path.join(resume, "tokens_state.json")
            if S.explicit_resume and os.path.isfile(tokens_file):
                try:
                    self.tokens_total = int(harness.read_json(tokens_file).get("total", 0))
                except (ValueError, OSError):
                    pass
                info("axolotl.utils.callbacks.tokens_per_second",
                     "Restored total_tokens: tensor({})".format(self.tokens_total))
        self.resume_step = self.g
        barrier("train-begin")  # the first collectives of the training loop
        start = S.sim
        if self.w.rank == 0:
            self.bar = Bar(self.max_steps, start)
        if self.eval_on_start:
            self.evaluate()
        prev_trainable, prev_t = None, None
        window, session_losses = [], []
        current = 0  # ProgressCallback.current_step: 0 at train begin, also when resuming
        saved_at = None
        while self.g < self.max_steps:
            step = self.g + 1
            if self.pred.ooms and step == max(1, self.pred.fails_at_step):
                fail("torch.OutOfMemoryError", harness.cuda_oom_message(self.pred, self.w.local_rank),
                     _train_frames((_p("axolotl/train.py"), 227, "execute_training"), line=652))
            _sleep(self.clock.seconds(step))
            self.g = step
            self.tokens_total += self.tokens_per_step
            loss = harness.loss(step)
            window.append(loss)
            session_losses.append(loss)
            if self.bar is not None:
                self.bar.update(self.g - current, S.sim)
            current = self.g
            should_log = self.g % self.logging_steps == 0
            should_eval = self.eval_strategy == "steps" and self.eval_steps and self.g % self.eval_steps == 0
            if should_eval and self.resume_step and self.g <= self.resume_step:
                info("axolotl.utils.callbacks", "Skipping evaluation at step {} (already completed before "
                     "resume)".format(self.g))
                should_eval = False
            should_save = self.save_strategy == "steps" and self.save_steps and self.g % self.save_steps == 0
            if cfg.get("save_first_step") and self.g == 1:
                should_save = True
            stop = self.g >= self.max_steps
            if stop and self.save_strategy == "steps":
                should_save = True
            if should_log:
                logs = {"loss": sum(window) / len(window), "grad_norm": harness.grad_norm(self.g),
                        "learning_rate": lr_at(cfg, self.g, self.max_steps, self.warmup)}
                window = []
                try:
                    logs["ppl"] = round(math.exp(logs["loss"]), 5)
                except OverflowError:
                    logs["ppl"] = float("inf")
                self._memory(logs)
                if cfg.get("include_tkps"):
                    if prev_trainable is not None and S.sim > prev_t:
                        logs["tokens/train_per_sec_per_gpu"] = round(
                            (self.tokens_total - prev_trainable) / max(1, self.world) / (S.sim - prev_t), 2)
                    prev_trainable, prev_t = self.tokens_total, S.sim
                    logs["tokens/trainable"] = self.tokens_total
                    logs["tokens/total"] = self.tokens_total
                logs["epoch"] = self._epoch()
                self._print_logs(logs)
            if should_eval:
                self.evaluate()
            if should_save:
                self.save_checkpoint()
                saved_at = self.g
            if stop or self.g % self.steps_per_epoch == 0:
                if self.save_strategy == "epoch" and saved_at != self.g:
                    self.save_checkpoint()
                    saved_at = self.g
                if self.eval_strategy == "epoch":
                    self.evaluate()
        runtime = max(1e-6, S.sim - start)
        samples = self.max_steps * cfg["micro_batch_size"] * cfg["gradient_accumulation_steps"] * self.dpw
        metrics = {"train_runtime": round(runtime, 4), "train_samples_per_second": round(samples / runtime, 3),
                   "train_steps_per_second": round(self.max_steps / runtime, 3),
                   "total_flos": 0.0,
                   "train_loss": sum(session_losses) / len(session_losses) if session_losses else 0.0}
        self._memory(metrics)
        metrics["epoch"] = self._epoch()
        self._print_logs(metrics)
        if self.bar is not None:
            self.bar.close(S.sim)


def _determine_last_checkpoint(cfg, update=True):
    """utils/train.py determine_last_checkpoint."""
    out = cfg["output_dir"]
    last = None
    try:
        names = [n for n in os.listdir(out) if n.startswith("checkpoint-") and n.split("-")[-1].isdigit()]
    except OSError:
        names = []
    if names:
        from pathlib import Path

        last = str(Path(out) / max(names, key=lambda n: int(n.split("-")[-1])))
        if not update:
            info("axolotl.utils.train", "Resuming from last checkpoint at {}".format(last))
            return last
    if cfg.get("resume_from_checkpoint") is None and cfg.get("auto_resume_from_checkpoints") and last is not None:
        cfg["resume_from_checkpoint"] = last
        info("axolotl.utils.train", "Using auto-resume functionality to resume from checkpoint at {}".format(last))
    return cfg.get("resume_from_checkpoint")


def _check_accelerate_config():
    """cli/checks.py check_accelerate_default_config."""
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "huggingface")
    path = os.path.join(home, "accelerate", "default_config.yaml")
    if os.path.exists(path):
        warning("axolotl.cli.checks", "accelerate config file found at {}. This can lead to unexpected errors".format(path))


def _check_user_token():
    """cli/checks.py check_user_token (the hub answers on the emulated node)."""
    if os.environ.get("HF_HUB_OFFLINE") == "1":
        info("axolotl.cli.checks", "Skipping HuggingFace token verification because HF_HUB_OFFLINE is set to True. "
             "Only local files will be used.")


def _load_datasets(cfg, preprocess=False):
    """common/datasets.py load_datasets -> prepare_datasets: the total step count."""
    if cfg.get("pretraining_dataset") or cfg.get("streaming"):
        return cfg.get("max_steps") or -1, cfg.get("max_steps") or -1
    prepare_dataset(cfg, preprocess=preprocess)
    if preprocess:
        return -1, -1
    calc = total_num_steps(cfg)
    if cfg.get("sample_packing"):
        _init_dist()  # reduce_and_broadcast initialises the distributed state
        info("axolotl.utils.trainer", "sample_packing_eff_est across ranks: {!r}".format(
            [PACKING_EFF] * cfg["world_size"]))
    total = min(calc, cfg["max_steps"]) if cfg.get("max_steps") else calc
    info("axolotl.utils.data.sft", "Maximum number of steps set at {}".format(total))
    return total, calc


def _save_trained_model(cfg):
    """train.py save_trained_model."""
    out = cfg["output_dir"]
    info("axolotl.train", "Training completed! Saving trained model to {}.".format(out))
    if cfg.get("fsdp_config") or cfg.get("fsdp"):
        if _fsdp_sharded(cfg, final=True):
            info("axolotl.train", "The final model was saved with a sharded state dict. Please ensure you merge the "
                 "sharded weights with `merge-sharded-fsdp-weights`.")
            _marker(os.path.join(out, "pytorch_model_fsdp_0", "__{}_0.distcp".format(S.w.rank)), "model shard")
            last = _determine_last_checkpoint(cfg, update=False)
            if last and not os.path.exists(os.path.join(out, "model.safetensors.index.json")):
                _save_model_files(cfg, out)
        else:
            info("axolotl.core.trainers.base", "Saving model checkpoint to {}".format(out))
            _save_model_files(cfg, out)
    elif S.w.local_rank == 0:
        _save_model_files(cfg, out)
    info("axolotl.train", "Model successfully saved to {}".format(out))
    if S.w.rank == 0:
        harness.write_file(os.path.join(out, "README.md"), "emulated model card\n")


def do_train(cfg):
    """cli/train.py do_train -> axolotl.train.train."""
    _check_accelerate_config()
    if _local_rank() == 0:
        _check_user_token()
    total, calc = _load_datasets(cfg)
    pred = harness.prediction(S.w)
    _init_dist()
    total_size = world_size_checks(cfg)
    _sleep(STARTUP_S["model"])
    _accelerate_check(cfg, total_size)
    _sleep(STARTUP_S["trainer"])
    out = cfg["output_dir"]
    os.makedirs(out, exist_ok=True)
    if cfg.get("adapter"):
        info("axolotl.train", "Pre-saving adapter config to {}...".format(out))
    info("axolotl.train", "Pre-saving tokenizer to {}...".format(out))
    info("axolotl.train", "Pre-saving model config to {}...".format(out))
    if S.w.rank == 0:
        harness.write_json(os.path.join(out, "tokenizer_config.json"), {"name_or_path": cfg.get("tokenizer_config")})
        harness.write_json(os.path.join(out, "config.json"), {"_name_or_path": cfg.get("base_model")})
    if S.w.local_rank == 0 and not cfg.get("use_ray"):
        S.sigint_saves = cfg  # setup_signal_handler: SIGINT on local rank 0 saves into output_dir
    S.explicit_resume = bool(cfg.get("resume_from_checkpoint"))
    resume = _determine_last_checkpoint(cfg)
    info("axolotl.train", "Starting trainer...")
    Run(cfg, total, calc, pred).train(resume)
    _save_trained_model(cfg)
    return 0


def do_preprocess(cfg, debug_num_examples=1, download=True, iterable=False):
    """cli/preprocess.py do_preprocess."""
    _check_accelerate_config()
    _check_user_token()
    if iterable:
        error("axolotl.cli.preprocess", "The --iterable CLI argument for 'axolotl preprocess' is no longer supported. "
              "For training, set 'streaming: true' in your YAML config or pass '--streaming' in your 'axolotl train' "
              "command for on-the-fly preprocessing.")
        return 0
    for key in ("skip_prepare_dataset", "pretraining_dataset"):
        if cfg.get(key):
            error("axolotl.cli.preprocess", "You have set `{}:`. `preprocess` is not needed. Run the 'axolotl train' "
                  "CLI directly instead.".format(key))
            return 0
    if not cfg.get("dataset_prepared_path"):
        warning("axolotl.cli.preprocess", "preprocess CLI called without dataset_prepared_path set, using default "
                "path: {}".format(DEFAULT_PREPARED))
        cfg["dataset_prepared_path"] = DEFAULT_PREPARED
    _load_datasets(cfg, preprocess=True)
    if debug_num_examples and debug_num_examples > 0:
        info("axolotl.common.datasets", "check_dataset_labels...")
        info("axolotl.common.datasets", "printing prompters...")
    info("axolotl.cli.preprocess", "Success! Preprocessed data path: `dataset_prepared_path: {}`".format(
        cfg["dataset_prepared_path"]))
    return 0


def _on_sigint():
    """train.py setup_signal_handler (local rank 0, once the trainer exists): save
    the model into output_dir and exit 0; elsewhere Python's KeyboardInterrupt."""
    cfg = S.sigint_saves
    if cfg is not None:
        out = cfg["output_dir"]
        weights = "adapter_model.safetensors" if cfg.get("adapter") else "model.safetensors"
        _marker(os.path.join(out, weights), "weights (saved on SIGINT)")
        harness.write_json(os.path.join(out, "config.json"), {"_name_or_path": cfg.get("base_model")})
        sys.exit(0)
    _err("Traceback (most recent call last):")
    for f in _entry_frames():
        _err('  File "{}", line {}, in {}'.format(*f))
    _err("KeyboardInterrupt")
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(1)
    sys.exit(130)


def _module_main(argv, preprocess):
    # cli/__init__.py, then fire.Fire(do_cli); SIGTERM keeps Python's default action (no handler in axolotl)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_XET_HIGH_PERFORMANCE", "1")
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    config, kwargs, rest = fire_parse(argv)
    prog = "preprocess.py" if preprocess else "train.py"  # fire names the program after sys.argv[0], the module file
    try:
        if preprocess:
            S.entry = "preprocess"
            code = _run_preprocess(config, kwargs)
        else:
            S.entry = "module"
            code = _run_train(config, kwargs)
    except KeyboardInterrupt:
        _on_sigint()
    if rest:
        _fire_unconsumed(rest, prog)
    return code


def _run_train(config, kwargs):
    _sleep(STARTUP_S["config"])
    cfg = load_cfg(config, kwargs)
    return do_train(cfg)


def _hf_cli_value(kwargs, name, default):
    """HfArgumentParser(...).parse_args_into_dataclasses(return_remaining_strings=True) over sys.argv."""
    value = default
    flag, dashed = "--" + name, "--" + name.replace("_", "-")
    argv = sys.argv[1:]
    for i, a in enumerate(argv):
        for f in (flag, dashed):
            if a == f:
                nxt = argv[i + 1] if i + 1 < len(argv) else None
                if isinstance(default, bool):
                    value = True if nxt is None or nxt.startswith("-") else nxt.lower() in ("true", "yes", "1", "y", "t")
                elif nxt is not None:
                    value = nxt
            elif a.startswith(f + "="):
                v = a.split("=", 1)[1]
                value = v.lower() in ("true", "yes", "1", "y", "t") if isinstance(default, bool) else v
    if isinstance(default, int) and not isinstance(default, bool):
        try:
            value = int(value)
        except (TypeError, ValueError):
            value = default
    return value


def _run_preprocess(config, kwargs):
    os.environ["AXOLOTL_IS_PREPROCESS"] = "1"
    kwargs = dict(kwargs)
    kwargs.pop("is_preprocess", None)
    _sleep(STARTUP_S["config"])
    cfg = load_cfg(config, kwargs, is_preprocess=True)
    cfg["is_preprocess"] = True
    return do_preprocess(cfg, _hf_cli_value(kwargs, "debug_num_examples", 1),
                         _hf_cli_value(kwargs, "download", True), _hf_cli_value(kwargs, "iterable", False))


def train_module_main(argv):
    """`python -m axolotl.cli.train CONFIG [--key value ...]` (torchrun/accelerate workers)."""
    return _module_main(argv, preprocess=False)


def preprocess_module_main(argv):
    """`python -m axolotl.cli.preprocess CONFIG [--key value ...]`."""
    return _module_main(argv, preprocess=True)


# ---------------------------------------------------------------- the `axolotl` console script (cli/main.py, click)

COMMANDS = ["preprocess", "train", "evaluate", "inference", "merge-sharded-fsdp-weights", "merge-lora", "fetch",
            "vllm-serve", "quantize", "delinearize-llama4", "generate-cli-config-options", "agent-docs",
            "config-schema"]


class UsageError(Exception):
    def __init__(self, message, usage):
        super().__init__(message)
        self.message, self.usage = message, usage


def _usage_error(message, usage):
    """click UsageError.show: usage, the help hint, a blank line, then the error; exit 2."""
    path = usage.split(" [")[0].replace("Usage: ", "")
    _err(usage)
    _err("Try '{} --help' for help.".format(path))
    _err("")
    _err("Error: " + message)
    sys.exit(2)


def _bare_error(message):
    """A BadOptionUsage from click's parser: shown without the usage lines (click 8.4)."""
    _err("Error: " + message)
    sys.exit(2)


def _did_you_mean(name, candidates):
    import difflib

    close = difflib.get_close_matches(name, list(candidates))
    if not close:
        return ""
    text = ", ".join(repr(p) for p in sorted(close))
    return " Did you mean {}?".format(text) if len(close) == 1 else " (Did you mean one of: {}?)".format(text)


class _Opt:
    def __init__(self, names, dest, kind, default=None, choices=None):
        self.names, self.dest, self.kind, self.default, self.choices = names, dest, kind, default, choices

    @property
    def takes_value(self):
        return self.kind != "flag"


def _command_options(command):
    """The command's click parameters in declaration order (after CONFIG)."""
    opts = []
    if command == "train":
        opts.append(_Opt(["--launcher"], "launcher", "choice", "accelerate", ["accelerate", "torchrun", "python"]))
        opts.append(_Opt(["--cloud"], "cloud", "path"))
        opts.append(_Opt(["--sweep"], "sweep", "path"))
        dataclass = [("debug", "flag", False), ("debug_text_only", "flag", False), ("debug_num_examples", "int", 0),
                     ("prompter", "str", None), ("shard", "flag", False)]
    else:
        opts.append(_Opt(["--cloud"], "cloud", "path"))
        dataclass = [("debug", "flag", False), ("debug_text_only", "flag", False), ("debug_num_examples", "int", 1),
                     ("prompter", "str", None), ("download", "flag", True), ("iterable", "flag", False)]
    for name, kind, default in dataclass:
        dashed = name.replace("_", "-")
        names = ["--" + dashed, "--no-" + dashed] if kind == "flag" else ["--" + dashed]
        opts.append(_Opt(names, name, kind, default))
    for item in _CONFIG_OPTIONS.split():
        name, _, typ = item.partition("=")
        if name.endswith("/"):
            name = name[:-1]
            opts.append(_Opt(["--" + name, "--no-" + name], name.replace("-", "_").replace(".", "__"), "flag"))
        else:
            opts.append(_Opt(["--" + name], name.replace("-", "_").replace(".", "__"), typ or "raw"))
    opts.append(_Opt(["--help"], "help", "help"))
    return opts


def _parse_command(prog, command, args):
    """click's parser (parser.py) and parameter processing (core.py) for one command:
    (config, launcher-ish named values, kwargs in click's order, extra args)."""
    usage = "Usage: {} {} [OPTIONS] CONFIG".format(prog, command)
    ignore_unknown = command == "train"
    opts = _command_options(command)
    by_name = {}
    for o in opts:
        for n in o.names:
            by_name[n] = o
    values, order, largs = {}, [], []
    rargs = list(args)
    while rargs:
        arg = rargs.pop(0)
        if arg == "--":
            break
        if arg[:1] == "-" and len(arg) > 1:
            long_opt, eq, explicit = arg.partition("=")
            o = by_name.get(long_opt)
            if o is None:
                if arg[:2] != "--":
                    if ignore_unknown:
                        largs.append(arg)
                        continue
                    _usage_error("No such option '-{}'.".format(arg[1]), usage)
                if ignore_unknown:
                    largs.append(arg)
                    continue
                _usage_error("No such option {!r}.{}".format(long_opt, _did_you_mean(long_opt, by_name)), usage)
            if o.kind == "help":
                harness.emulator_fault("click's --help text is not emulated")
            if o.takes_value:
                if eq:
                    value = explicit
                elif rargs:
                    value = rargs.pop(0)
                else:
                    _bare_error("Option {!r} requires an argument.".format(long_opt))
            else:
                if eq:
                    _bare_error("Option {!r} does not take a value.".format(long_opt))
                value = long_opt == o.names[0]
            values[o.dest] = (o, value)
            if o.dest not in order:
                order.append(o.dest)
        else:
            largs.append(arg)
    rest = largs + rargs
    config = rest[0] if rest else None
    extra = rest[1:]
    if extra and not ignore_unknown:
        _usage_error("Got unexpected extra argument{} ({})".format("s" if len(extra) > 1 else "", " ".join(extra)),
                     usage)
    order.append("config")
    declared = ["config"] + [o.dest for o in opts if o.kind != "help"]
    processing = order + [d for d in declared if d not in order]
    params = {}
    for dest in processing:
        if dest == "config":
            if config is None:
                _usage_error("Missing argument 'CONFIG'.", usage)
            if not os.path.exists(config):
                _usage_error("Invalid value for 'CONFIG': Path {!r} does not exist.".format(config), usage)
            params["config"] = config
            continue
        o = next(x for x in opts if x.dest == dest)
        if dest not in values:
            params[dest] = o.default
            continue
        value = values[dest][1]
        hint = "'{}'".format(o.names[0])
        if o.kind == "choice" and value not in o.choices:
            _usage_error("Invalid value for {}: {!r} is not one of {}.".format(
                hint, value, ", ".join(repr(c) for c in o.choices)), usage)
        if o.kind == "path" and not os.path.exists(value):
            _usage_error("Invalid value for {}: Path {!r} does not exist.".format(hint, value), usage)
        if o.kind == "int":
            try:
                value = int(value)
            except ValueError:
                _usage_error("Invalid value for {}: {!r} is not a valid integer.".format(hint, value), usage)
        if o.kind == "float":
            try:
                value = float(value)
            except ValueError:
                _usage_error("Invalid value for {}: {!r} is not a valid float.".format(hint, value), usage)
        params[dest] = value
    return params, extra


def _add_default_rdzv_args(args):
    """cli/utils/train.py _add_default_rdzv_args."""
    args = list(args)
    if any("--rdzv_endpoint" in a for a in args):
        if not any("--rdzv_backend" in a for a in args):
            args += ["--rdzv_backend", "c10d"]
        if not any("--rdzv_id" in a for a in args):
            args += ["--rdzv_id", str(uuid.uuid4())[:8]]
    return args


def _exec(cmd):
    """os.execvpe(cmd[0], cmd, os.environ) after flushing; a launcher missing from
    PATH is the FileNotFoundError Python raises there (click does not catch it)."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execvpe(cmd[0], cmd, os.environ)
    except OSError as e:
        import traceback

        frozen = [(f.filename, f.lineno, f.name) for f in traceback.extract_tb(e.__traceback__)
                  if f.filename.startswith("<frozen")]
        launcher = "_launch_accelerate_training" if cmd[0] == "accelerate" else "_launch_torchrun_training"
        frames = [(CONSOLE, 8, "<module>"), (_p("axolotl/cli/main.py"), 497, "main"),
                  (_p("axolotl/cli/main.py"), 129, "train"),
                  (_p("axolotl/cli/utils/train.py"), 124 if cmd[0] == "accelerate" else 126, "launch_training"),
                  (_p("axolotl/cli/utils/train.py"), 190 if cmd[0] == "accelerate" else 216, launcher)] + frozen
        harness.fail_with_traceback(type(e).__name__, str(e), frames)


def _launch(params, launcher_args):
    """cli/main.py train -> cli/utils/train.py launch_training."""
    config, launcher = params.pop("config"), params.pop("launcher")
    cloud, sweep = params.pop("cloud"), params.pop("sweep")
    kwargs = {k: v for k, v in params.items() if v is not None}
    if cloud:
        harness.emulator_fault("`--cloud` launches are not emulated")
    if sweep:
        harness.emulator_fault("`--sweep` launches are not emulated")
    if kwargs.get("use_ray"):
        harness.emulator_fault("Ray launches (use_ray) are not emulated")
    opts = ["--{}={}".format(k.replace("_", "-"), v) for k, v in kwargs.items()]
    if launcher == "accelerate":
        internal = []
        if "main_process_port" in kwargs:
            internal += ["--main_process_port", str(kwargs.pop("main_process_port"))]
        if "num_processes" in kwargs:
            internal += ["--num_processes", str(kwargs.pop("num_processes"))]
        opts = ["--{}={}".format(k.replace("_", "-"), v) for k, v in kwargs.items()]
        _exec(["accelerate", "launch"] + internal + launcher_args + ["-m", "axolotl.cli.train", config] + opts)
    if launcher == "torchrun":
        _exec(["torchrun"] + _add_default_rdzv_args(launcher_args) + ["-m", "axolotl.cli.train", config] + opts)
    S.entry = "python-launcher"
    try:
        return _run_train(config, kwargs)
    except KeyboardInterrupt:
        _on_sigint()


def _group_usage(prog):
    return "Usage: {} [OPTIONS] COMMAND [ARGS]...".format(prog)


def cli_main(argv=None):
    """The `axolotl` console script: axolotl.cli.main:main (a click group)."""
    argv = sys.argv[1:] if argv is None else argv
    prog = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "axolotl"
    usage = _group_usage(prog)
    i = 0
    while i < len(argv) and argv[i].startswith("-") and len(argv[i]) > 1:
        a = argv[i]
        if a == "--version":
            _out("{}, version {}".format(prog, VERSION))
            return 0
        if a == "--help":
            _out(usage + "\n\n  Axolotl CLI - Train and fine-tune large language models")
            return 0
        if a == "--":
            i += 1
            break
        _usage_error("No such option {!r}.{}".format(a.split("=")[0], _did_you_mean(a.split("=")[0],
                                                                                   ["--version", "--help"])), usage)
    if i >= len(argv):
        _err(usage + "\n\n  Axolotl CLI - Train and fine-tune large language models")
        return 2
    command, args = argv[i], argv[i + 1:]
    if command not in COMMANDS:
        _usage_error("No such command {!r}.{}".format(command, _did_you_mean(command, COMMANDS)), usage)
    # the group callback runs before the subcommand parses its arguments
    if os.environ.get("LOCAL_RANK", "0") == "0":
        _out(LOGO)
    if os.environ.get("PYTORCH_ALLOC_CONF") is None:
        os.environ["PYTORCH_ALLOC_CONF"] = "expandable_segments:True"
    os.environ.setdefault("XFORMERS_IGNORE_FLASH_VERSION_CHECK", "1")
    if command not in ("train", "preprocess"):
        harness.emulator_fault("`axolotl {}` is not emulated (only train and preprocess are)".format(command))
    params, extra = _parse_command(prog, command, args)
    if command == "train":
        return _launch(params, extra) or 0
    S.entry = "preprocess-cli"
    config, _ = params.pop("config"), params.pop("cloud")
    kwargs = {k: v for k, v in params.items() if v is not None}
    try:
        return _run_preprocess(config, kwargs)
    except KeyboardInterrupt:
        _on_sigint()
