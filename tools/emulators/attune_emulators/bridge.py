"""NVIDIA-NeMo Megatron-Bridge at commit 067f987df03b8355b03192d88d70f1709fedf51a
(package 0.7.0, Megatron-LM submodule 2a75ac12c54b, hydra-core 1.3.2,
omegaconf 2.3.1) as its training entry points behave, for the attune
emulators:

  scripts/training/run_recipe.py                      run_recipe_main
  tutorials/recipes/llama/00_quickstart_pretrain.py   quickstart_pretrain_main
  tutorials/recipes/llama/01_quickstart_finetune.py   quickstart_finetune_main
  tutorials/recipes/llama/02_pretrain_with_yaml.py    pretrain_with_yaml_main
  tutorials/recipes/llama/03_finetune_with_yaml.py    finetune_with_yaml_main
  examples/quantization/pretrain_quantized_llama3_8b.py          quantized_pretrain_main
  examples/models/qwen/qwen3_next/finetune_qwen3_next_80b_a3b.py  qwen3_next_finetune_main

Each checks its command line as the script's argparse does (same parser, same
errors, exit 2), builds the recipe's ConfigContainer values that decide the
run's layout, steps, logging and checkpoints, applies the YAML file (OmegaConf
merge, unknown keys warned and skipped when applied back) and the Hydra
overrides (OmegaConf struct mode: a key the config does not have fails), runs
Bridge's config validation (world size vs TP*PP*CP, batch divisibility, ...)
with the real messages, and then behaves like pretrain()/finetune(): start-up
lines, the per-step log line on the last rank every logger.log_interval (and
rank 0's `Step Time` line), evaluation boxes, torch_dist checkpoints as marker
files in the real layout with auto-resume from checkpoint.load, and SIGTERM
as the real process handles it. The frameworks doc section cites the source
of every behaviour.
"""

import json
import math
import os
import signal
import sys
from pathlib import Path

from . import harness, omegaconf_yaml

COMMIT = "067f987df03b8355b03192d88d70f1709fedf51a"


# ---------------------------------------------------------------- the config objects


class _Unset:
    """A field default the emulator does not know (a default_factory, a call)."""

    def __repr__(self):
        return "<unset>"


UNSET = _Unset()


class Obj:
    """One dataclass instance of the ConfigContainer tree: its class name and
    all of its dataclass fields in order (omegaconf_utils walks
    dataclasses.fields()). GPT builder configs proxy the fields of their
    nested `transformer` (megatron/training/models/gpt.py:189-214 @2a75ac1;
    models/gpt/model_config.py:39-62)."""

    def __init__(self, cls, table=None, **values):
        self.cls = cls
        self.f = {}
        for entry in FIELDS[table or cls]:
            if isinstance(entry, list):
                self.f[entry[0]] = entry[1]
            else:
                self.f[entry] = UNSET
        self.extra = {}
        self.proxy = None
        for k, v in values.items():
            self.set(k, v)

    def has(self, name):
        return name in self.f or name in self.extra or (self.proxy is not None and self.proxy.has(name))

    def raw(self, name):
        if name in self.f:
            return self.f[name]
        if name in self.extra:
            return self.extra[name]
        if self.proxy is not None:
            return self.proxy.raw(name)
        return UNSET

    def get(self, name, default=None):
        v = self.raw(name)
        return default if v is UNSET else v

    def set(self, name, value):
        if name in self.f:
            self.f[name] = value
            if name == "transformer" and isinstance(value, Obj):
                self.proxy = value
        elif self.proxy is not None and name in self.proxy.f:
            self.proxy.f[name] = value
        elif self.cls == "BridgeGPTModelConfig":
            raise AttributeError("Neither BridgeGPTModelConfig nor TransformerConfig declares a field named {!r}.".format(name))
        else:
            self.extra[name] = value


def gpt_model_config(**values):
    """AutoBridge(...).get_model_config() of a GPT family: BridgeGPTModelConfig
    with a nested TransformerConfig (model_bridge.py:701-733)."""
    model = Obj("BridgeGPTModelConfig")
    model.set("transformer", Obj("TransformerConfig"))
    for k, v in values.items():
        model.set(k, v)
    return model


def gpt_model_provider(**values):
    """AutoBridge(...).to_megatron_provider() / GPTModelProvider(): one flat dataclass."""
    model = Obj("GPTModelProvider", table="TransformerConfig")
    for entry in FIELDS["GPTModelProvider+"]:
        if isinstance(entry, list):
            model.f[entry[0]] = entry[1]
        else:
            model.f[entry] = UNSET
    for k, v in values.items():
        model.set(k, v)
    return model


def to_omegaconf(value):
    """_dataclass_to_omegaconf_dict (omegaconf_utils.py:230-346): dataclasses
    become dicts of their fields (attributes that are not fields are left out)."""
    if isinstance(value, Obj):
        return {k: to_omegaconf(v) for k, v in value.f.items()}
    if isinstance(value, dict):
        return {k: to_omegaconf(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_omegaconf(v) for v in value]
    return value


def to_plain(value):
    """A value as it would be written to YAML (unknown defaults left out)."""
    if isinstance(value, Obj):
        return {k: to_plain(v) for k, v in value.f.items() if v is not UNSET}
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items() if v is not UNSET}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    return value


# ---------------------------------------------------------------- recipes


COMMON_RECIPE_ENV_VARS = {  # recipes/utils/environment_utils.py:22-33
    "NCCL_GRAPH_REGISTER": 0,
    "NCCL_NVLS_ENABLE": 0,
    "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
    "TORCH_NCCL_AVOID_RECORD_STREAMS": 1,
    "TORCH_NCCL_HIGH_PRIORITY": 1,
}
DEFAULT_NULL_TOKENIZER_VOCAB_SIZE = 131072  # recipes/utils/tokenizer_utils.py


def _adam_cosine(lr_warmup_iters, max_lr, min_lr=None, adam_beta2=0.95):
    """recipes/utils/optimizer_utils.py:100-167"""
    min_lr = min_lr if min_lr is not None else 0.1 * max_lr
    optimizer = Obj("OptimizerConfig", optimizer="adam", lr=max_lr, min_lr=min_lr, weight_decay=0.1, bf16=True,
                    fp16=False, adam_beta1=0.9, adam_beta2=adam_beta2, adam_eps=1e-8, use_distributed_optimizer=True,
                    clip_grad=1.0)
    scheduler = Obj("SchedulerConfig", start_weight_decay=0.033, end_weight_decay=0.033,
                    weight_decay_incr_style="constant", lr_decay_style="cosine", lr_wsd_decay_style="minus_sqrt",
                    lr_wsd_decay_iters=None, lr_warmup_iters=lr_warmup_iters, lr_warmup_init=0.0, lr_decay_iters=None,
                    override_opt_param_scheduler=True)
    return optimizer, scheduler


def _output_dirs():
    run_output_dir = os.path.join(os.getcwd(), "nemo_experiments", "default")
    return os.path.join(run_output_dir, "checkpoints"), os.path.join(run_output_dir, "tb_logs")


def _container(**sections):
    cfg = Obj("ConfigContainer")
    defaults = {
        "rng": Obj("RNGConfig"), "rerun_state_machine": Obj("RerunStateMachineConfig"),
        "optimizer_config_override_provider": Obj("OptimizerConfigOverrideProvider"),
        "ddp": Obj("DistributedDataParallelConfig"), "validation": Obj("ValidationConfig"),
        "dist": Obj("DistributedInitConfig"), "profiling": Obj("ProfilingConfig"), "env_vars": {},
        "ft": None, "straggler": None, "nvrx_straggler": None, "peft": None, "comm_overlap": None,
        "mixed_precision": None, "tensor_inspect": None, "inprocess_restart": None,
    }
    defaults.update(sections)
    for k, v in defaults.items():
        cfg.set(k, v)
    return cfg


def _squad(seq_length, enable_offline_packing):
    """recipes/utils/dataset_utils.py:80-149 (default_squad_config)"""
    specs = None
    kwargs = {}
    if enable_offline_packing:
        kwargs["pad_to_max_length"] = True
        specs = Obj("PackedSequenceSpecs", packed_sequence_size=seq_length, pad_seq_to_mult=1)
    return Obj("GPTSFTDatasetConfig", seq_length=seq_length, hf_validation_proportion=0.1, do_validation=True,
               do_test=False, enable_offline_packing=enable_offline_packing, offline_packing_specs=specs,
               dataset_kwargs=kwargs, seed=5678, dataloader_type="batch", num_workers=1, data_sharding=True,
               pin_memory=True, persistent_workers=False)


def _pretrain_common():
    """recipes/common.py:37-133"""
    ckpt, tb = _output_dirs()
    optimizer, scheduler = _adam_cosine(500, 3e-4, 3e-5)
    return _container(
        model=None,
        train=Obj("TrainingConfig", train_iters=300000, global_batch_size=32, micro_batch_size=2, manual_gc=True,
                  manual_gc_interval=100, manual_gc_eval=100),
        validation=Obj("ValidationConfig", eval_interval=500, eval_iters=32),
        optimizer=optimizer, scheduler=scheduler,
        ddp=Obj("DistributedDataParallelConfig", check_for_nan_in_grad=True, grad_reduce_in_fp32=True,
                overlap_grad_reduce=True, overlap_param_gather=True, average_in_collective=True,
                data_parallel_sharding_strategy="optim_grads_params", use_distributed_optimizer=True),
        dataset=Obj("GPTDatasetConfig", random_seed=1234, reset_attention_mask=False, reset_position_ids=False,
                    eod_mask_loss=False, seq_length=4096, num_dataset_builder_threads=1, blend=None,
                    blend_per_split=None, split="9999,8,2", data_sharding=True, dataloader_type="single",
                    skip_getting_attention_mask_from_dataset=True),
        logger=Obj("LoggerConfig", log_interval=10, tensorboard_dir=tb, log_timers_to_tensorboard=True),
        tokenizer=Obj("TokenizerConfig", tokenizer_type="HuggingFaceTokenizer", tokenizer_model=None,
                      use_tokenizer_vocab_size=True),
        checkpoint=Obj("CheckpointConfig", save_interval=500, save=ckpt, load=ckpt, ckpt_format="torch_dist",
                       fully_parallel_save=True),
        rng=Obj("RNGConfig", seed=1234),
        mixed_precision="bf16_mixed",
    )


def _finetune_common(peft):
    """recipes/common.py:136-235 (_sft_common) and 238-344 (_peft_common)"""
    ckpt, tb = _output_dirs()
    optimizer, scheduler = _adam_cosine(50, 1e-4 if peft else 5e-6, 0.0, adam_beta2=0.98)
    cfg = _container(
        model=None,
        train=Obj("TrainingConfig", train_iters=1000, global_batch_size=128, micro_batch_size=1),
        validation=Obj("ValidationConfig", eval_interval=100, eval_iters=32),
        optimizer=optimizer, scheduler=scheduler,
        ddp=Obj("DistributedDataParallelConfig", check_for_nan_in_grad=True, grad_reduce_in_fp32=True),
        dataset=_squad(2048, True),
        logger=Obj("LoggerConfig", log_interval=1, tensorboard_dir=tb, log_timers_to_tensorboard=True),
        tokenizer=Obj("TokenizerConfig", tokenizer_type="HuggingFaceTokenizer", tokenizer_model=None),
        checkpoint=Obj("CheckpointConfig", save_interval=100, save=ckpt, load=ckpt, pretrained_checkpoint=None,
                       ckpt_format="torch_dist", fully_parallel_save=True),
        rng=Obj("RNGConfig", seed=5678),
        mixed_precision="bf16_mixed",
    )
    if peft:
        cfg.set("peft", _lora())
    return cfg


def _lora(dim=32, alpha=32):
    return Obj("LoRA", target_modules=["linear_qkv", "linear_proj", "linear_fc1", "linear_fc2"], dim=dim,
               alpha=alpha, dropout=0.0, dropout_position="pre", lora_A_init_method="xavier",
               lora_B_init_method="zero", a2a_experimental=False, lora_dtype=None)


def _peft_scheme(scheme):
    """recipes/utils/dataset_utils.py default_peft_config: LoRA or DoRA."""
    if scheme == "dora":
        return Obj("DoRA", target_modules=["linear_qkv", "linear_proj", "linear_fc1", "linear_fc2"])
    return _lora()


def _llama_parallel(model, tp=1, pp=1, cp=1, sp=False):
    for k, v in (("pipeline_model_parallel_layout", None), ("tensor_model_parallel_size", tp),
                 ("pipeline_model_parallel_size", pp), ("pipeline_dtype", None),
                 ("virtual_pipeline_model_parallel_size", None), ("context_parallel_size", cp),
                 ("sequence_parallel", sp)):
        model.set(k, v)


def _llama_pretrain(hf_path, cp):
    """recipes/llama/h100/llama3.py:44-142 (Llama 3.2 1B) and 235-317 (Llama 3 8B)"""
    cfg = _pretrain_common()
    model = gpt_model_config()
    model.extra_hf = hf_path
    cfg.set("model", model)
    cfg.get("tokenizer").set("tokenizer_type", "NullTokenizer")
    cfg.get("tokenizer").set("vocab_size", DEFAULT_NULL_TOKENIZER_VOCAB_SIZE)
    cfg.get("dataset").set("num_workers", 8)
    cfg.get("dataset").set("seq_length", 8192)
    _llama_parallel(model, cp=cp)
    model.set("seq_length", 8192)
    train = cfg.get("train")
    train.set("train_iters", 1168251)
    train.set("global_batch_size", 512)
    train.set("micro_batch_size", 1)
    cfg.get("validation").set("eval_interval", 2000)
    cfg.get("scheduler").set("lr_warmup_iters", 2000)
    for k, v in (("transformer_impl", "transformer_engine"), ("cuda_graph_impl", "none"),
                 ("cross_entropy_loss_fusion", True), ("cross_entropy_fusion_impl", "te")):
        model.set(k, v)
    cfg.get("optimizer").set("use_precision_aware_optimizer", False)
    cfg.get("checkpoint").set("save_interval", 500)
    ddp = cfg.get("ddp")
    for k, v in (("overlap_grad_reduce", True), ("overlap_param_gather", True), ("use_distributed_optimizer", True),
                 ("use_megatron_fsdp", False), ("grad_reduce_in_fp32", True), ("average_in_collective", True),
                 ("data_parallel_sharding_strategy", "no_shard")):
        ddp.set(k, v)
    cfg.set("env_vars", dict(COMMON_RECIPE_ENV_VARS))
    return cfg


def llama32_1b_pretrain():
    return _llama_pretrain("meta-llama/Llama-3.2-1B", cp=1)


def llama3_8b_pretrain():
    return _llama_pretrain("meta-llama/Meta-Llama-3-8B", cp=2)


def llama32_1b_sft():
    """recipes/llama/h100/llama3.py:1320-1432"""
    cfg = _finetune_common(peft=False)
    return _llama32_1b_finetune(cfg, fusion=True)


def llama32_1b_peft(peft_scheme="lora"):
    """recipes/llama/h100/llama3.py:2102-2216"""
    cfg = _finetune_common(peft=True)
    cfg.set("peft", _peft_scheme(peft_scheme))
    cfg = _llama32_1b_finetune(cfg, fusion=False)
    cfg.get("optimizer").set("use_distributed_optimizer", False)
    return cfg


def _llama32_1b_finetune(cfg, fusion):
    model = gpt_model_config()
    model.extra_hf = "meta-llama/Llama-3.2-1B"
    cfg.set("model", model)
    cfg.get("tokenizer").set("tokenizer_model", "meta-llama/Llama-3.2-1B")
    model.set("seq_length", 4096)
    cfg.get("dataset").set("seq_length", 4096)
    cfg.get("dataset").get("offline_packing_specs").set("packed_sequence_size", 4096)
    _llama_parallel(model)
    cfg.set("mixed_precision", "bf16_mixed")
    train = cfg.get("train")
    for k, v in (("train_iters", 1000), ("global_batch_size", 8), ("micro_batch_size", 1), ("manual_gc", True),
                 ("manual_gc_interval", 100), ("manual_gc_eval", 100)):
        train.set(k, v)
    cfg.get("validation").set("eval_interval", 30)
    cfg.get("validation").set("eval_iters", 32)
    cfg.get("logger").set("log_interval", 1)
    cfg.get("optimizer").set("adam_beta2", 0.98)
    cfg.get("optimizer").set("use_precision_aware_optimizer", False)
    cfg.get("scheduler").set("lr_warmup_iters", 50)
    cfg.get("scheduler").set("max_lr", 1e-4 if cfg.get("peft") is not None else 5e-6)  # not a field: an attribute
    for k, v in (("transformer_impl", "transformer_engine"), ("cuda_graph_impl", "none"),
                 ("cross_entropy_loss_fusion", fusion), ("cross_entropy_fusion_impl", "native")):
        model.set(k, v)
    ckpt = cfg.get("checkpoint")
    ckpt.set("save_interval", 50)
    ckpt.set("ckpt_format", "torch_dist")
    ddp = cfg.get("ddp")
    for k, v in (("overlap_grad_reduce", False), ("overlap_param_gather", False), ("check_for_nan_in_grad", True),
                 ("use_distributed_optimizer", False), ("grad_reduce_in_fp32", False)):
        ddp.set(k, v)
    cfg.get("rng").set("seed", 5678)
    cfg.set("env_vars", dict(COMMON_RECIPE_ENV_VARS))
    return cfg


def qwen3_next_80b_a3b_sft():
    """recipes/qwen/h100/qwen3_next.py:150-293"""
    cfg = _finetune_common(peft=False)
    cfg.set("dataset", _squad(2048, False))
    model = gpt_model_provider()
    model.extra_hf = "Qwen/Qwen3-Next-80B-A3B-Instruct"
    cfg.set("model", model)
    cfg.get("tokenizer").set("tokenizer_model", "Qwen/Qwen3-Next-80B-A3B-Instruct")
    model.set("seq_length", 2048)
    for k, v in (("pipeline_model_parallel_layout", None), ("tensor_model_parallel_size", 1),
                 ("pipeline_model_parallel_size", 2), ("pipeline_dtype", "torch.bfloat16"),
                 ("virtual_pipeline_model_parallel_size", None), ("context_parallel_size", 1),
                 ("expert_model_parallel_size", 8), ("expert_tensor_parallel_size", 1), ("sequence_parallel", False),
                 ("moe_token_dispatcher_type", "alltoall"), ("moe_flex_dispatcher_backend", "deepep"),
                 ("transformer_impl", "transformer_engine"), ("cuda_graph_impl", "none"),
                 ("cross_entropy_loss_fusion", True), ("cross_entropy_fusion_impl", "native"),
                 ("recompute_granularity", "selective"), ("recompute_modules", ["layernorm", "moe", "moe_act"])):
        model.set(k, v)
    cfg.set("mixed_precision", Obj("MixedPrecisionConfig", bf16=True, params_dtype="torch.bfloat16",
                                   pipeline_dtype="torch.bfloat16", autocast_enabled=False, grad_reduce_in_fp32=True))
    train = cfg.get("train")
    for k, v in (("train_iters", 1000), ("global_batch_size", 64), ("micro_batch_size", 1), ("manual_gc", True),
                 ("manual_gc_interval", 100), ("manual_gc_eval", 100)):
        train.set(k, v)
    cfg.get("validation").set("eval_interval", 30)
    cfg.get("validation").set("eval_iters", 32)
    cfg.get("logger").set("log_interval", 1)
    opt = cfg.get("optimizer")
    opt.set("adam_beta2", 0.98)
    opt.set("use_precision_aware_optimizer", False)
    opt.set("apply_wd_to_qk_layernorm", True)
    opt.set("min_lr", 5e-6)
    cfg.get("scheduler").set("lr_warmup_iters", 50)
    cfg.get("scheduler").set("lr_decay_iters", None)
    cfg.get("scheduler").set("max_lr", 5e-6)  # not a field: an attribute
    ckpt = cfg.get("checkpoint")
    ckpt.set("save_interval", 50)
    ckpt.set("ckpt_format", "torch_dist")
    ddp = cfg.get("ddp")
    for k, v in (("overlap_grad_reduce", True), ("overlap_param_gather", True), ("use_distributed_optimizer", True),
                 ("average_in_collective", True), ("data_parallel_sharding_strategy", "optim_grads_params"),
                 ("use_megatron_fsdp", False)):
        ddp.set(k, v)
    cfg.get("rng").set("seed", 5678)
    cfg.set("env_vars", dict(COMMON_RECIPE_ENV_VARS))
    return cfg


def vanilla_gpt_pretrain():
    """recipes/gpt/h100/vanilla_gpt.py:49-140"""
    ckpt, tb = _output_dirs()
    optimizer, scheduler = _adam_cosine(500, 3e-4, 3e-5)
    cfg = _container(
        model=gpt_model_provider(),
        train=Obj("TrainingConfig", train_iters=300000, global_batch_size=32, micro_batch_size=2),
        validation=Obj("ValidationConfig", eval_interval=500, eval_iters=32),
        optimizer=optimizer, scheduler=scheduler,
        ddp=Obj("DistributedDataParallelConfig", check_for_nan_in_grad=True, grad_reduce_in_fp32=True,
                overlap_grad_reduce=False, overlap_param_gather=False, use_distributed_optimizer=False),
        dataset=Obj("GPTDatasetConfig", random_seed=1234, seq_length=1024, blend=None, blend_per_split=None,
                    split="9999,8,2", dataloader_type="single", reset_position_ids=False,
                    reset_attention_mask=False, eod_mask_loss=False),
        logger=Obj("LoggerConfig", log_interval=10, tensorboard_dir=tb),
        tokenizer=Obj("TokenizerConfig", tokenizer_type="NullTokenizer", vocab_size=DEFAULT_NULL_TOKENIZER_VOCAB_SIZE),
        checkpoint=Obj("CheckpointConfig", save_interval=500, save=ckpt, ckpt_format="torch_dist"),
        rng=Obj("RNGConfig", seed=1234),
        dist=Obj("DistributedInitConfig"),
        mixed_precision="bf16_mixed",
    )
    cfg.set("env_vars", dict(COMMON_RECIPE_ENV_VARS))
    return cfg


# recipe function (its __name__) and the builder; the generic names are aliases
# (recipes/llama/llama3.py, recipes/qwen/qwen3_next.py, recipes/gpt/vanilla_gpt.py)
RECIPES = {
    "llama32_1b_pretrain_1gpu_h100_bf16_config": (llama32_1b_pretrain, False),
    "llama32_1b_sft_1gpu_h100_bf16_config": (llama32_1b_sft, False),
    "llama32_1b_peft_1gpu_h100_bf16_config": (llama32_1b_peft, True),
    "llama3_8b_pretrain_2gpu_h100_bf16_config": (llama3_8b_pretrain, False),
    "qwen3_next_80b_a3b_sft_16gpu_h100_bf16_config": (qwen3_next_80b_a3b_sft, False),
    "vanilla_gpt_pretrain_1gpu_h100_bf16_config": (vanilla_gpt_pretrain, False),
}
RECIPE_ALIASES = {
    "llama32_1b_pretrain_config": "llama32_1b_pretrain_1gpu_h100_bf16_config",
    "llama32_1b_sft_config": "llama32_1b_sft_1gpu_h100_bf16_config",
    "llama32_1b_peft_config": "llama32_1b_peft_1gpu_h100_bf16_config",
    "llama3_8b_pretrain_config": "llama3_8b_pretrain_2gpu_h100_bf16_config",
    "qwen3_next_80b_a3b_sft_config": "qwen3_next_80b_a3b_sft_16gpu_h100_bf16_config",
    "vanilla_gpt_pretrain_config": "vanilla_gpt_pretrain_1gpu_h100_bf16_config",
}


# ---------------------------------------------------------------- Hydra 1.3.2 overrides on OmegaConf 2.3.1


class HydraError(Exception):
    """What parse_hydra_overrides re-raises as OverridesError (omegaconf_utils.py:179-186)."""

    def __init__(self, message, cause_type):
        super().__init__(message)
        self.message = message
        self.cause_type = cause_type


_ESC_CHARS = "\\()[]{}:=, \t"
_UNQUOTED = set("/-\\+.$%*@?|")
_DIGITS = "0123456789"


def _is_char(c):
    return ("a" <= c <= "z") or ("A" <= c <= "Z")


def _int_unsigned(s, i):
    """fragment INT_UNSIGNED: '0' | [1-9] (('_')? DIGIT)*; returns the end or -1."""
    if i < len(s) and s[i] == "0":
        return i + 1
    if i < len(s) and s[i] in "123456789":
        j = i + 1
        while j < len(s):
            if s[j] in _DIGITS:
                j += 1
            elif s[j] == "_" and j + 1 < len(s) and s[j + 1] in _DIGITS:
                j += 2
            else:
                break
        return j
    return -1


def _digits_us(s, i):
    """DIGIT (('_')? DIGIT)*"""
    if i >= len(s) or s[i] not in _DIGITS:
        return -1
    j = i + 1
    while j < len(s):
        if s[j] in _DIGITS:
            j += 1
        elif s[j] == "_" and j + 1 < len(s) and s[j + 1] in _DIGITS:
            j += 2
        else:
            break
    return j


def _key_special(s, i):
    if i < len(s) and (_is_char(s[i]) or s[i] in "_$"):
        j = i + 1
        while j < len(s) and (_is_char(s[j]) or s[j] in _DIGITS or s[j] in "_-$"):
            j += 1
        return j
    return -1


def _lex_key(s, i):
    """One DEFAULT_MODE token of OverrideLexer.g4 at i: (type, end), or None."""
    c = s[i]
    if c == "=":
        j = i + 1
        while j < len(s) and s[j] in " \t":
            j += 1
        return "EQUAL", j
    if c in "~+@:/":
        return {"~": "TILDE", "+": "PLUS", "@": "AT", ":": "COLON", "/": "SLASH"}[c], i + 1
    first = _key_special(s, i)
    if first < 0:
        first = _int_unsigned(s, i)
        if first < 0:
            return None
        seg_only_int = True
    else:
        seg_only_int = False
    end, dots = first, 0
    while end < len(s) and s[end] == ".":
        nxt = _key_special(s, end + 1)
        if nxt < 0:
            nxt = _int_unsigned(s, end + 1)
        if nxt < 0:
            break
        end, dots = nxt, dots + 1
    if dots:
        return "DOT_PATH", end
    if seg_only_int:
        return None
    word = s[i:first]
    return ("KEY_SPECIAL" if "$" in word else "ID"), first


def _float_at(s, i):
    """FLOAT: [+-]? (POINT_FLOAT | EXPONENT_FLOAT | inf | nan); the end or -1."""
    j = i
    if j < len(s) and s[j] in "+-":
        j += 1
    low = s[j:j + 3].lower()
    best = -1
    if low in ("inf", "nan"):
        best = j + 3
    # POINT_FLOAT: INT_UNSIGNED '.' | INT_UNSIGNED? '.' DIGIT (('_')? DIGIT)*
    point = -1
    k = _int_unsigned(s, j)
    if k >= 0 and k < len(s) and s[k] == ".":
        point = k + 1
        d = _digits_us(s, k + 1)
        if d >= 0:
            point = d
    elif k < 0 and j < len(s) and s[j] == ".":
        d = _digits_us(s, j + 1)
        if d >= 0:
            point = d
    mant = max(point, k)
    if mant >= 0 and mant < len(s) and s[mant] in "eE":
        e = mant + 1
        if e < len(s) and s[e] in "+-":
            e += 1
        d = _digits_us(s, e)
        if d >= 0:
            best = max(best, d)
    best = max(best, point)
    return best


def _lex_value(s, i):
    """One VALUE_MODE token at i: (type, end), or None (longest match, first rule on ties)."""
    cands = []

    def ws_end(k):
        while k < len(s) and s[k] in " \t":
            k += 1
        return k

    k = ws_end(i)
    if k < len(s):
        for ch, typ in (("(", "POPEN"), (",", "COMMA"), (":", "COLON"), ("=", "EQUAL")):
            if s[k] == ch:
                cands.append((typ, ws_end(k + 1)))
        if s[k] == ")":
            cands.append(("PCLOSE", k + 1))
        if s[k] == "]":
            cands.append(("BRACKET_CLOSE", k + 1))
        if s[k] == "}":
            cands.append(("BRACE_CLOSE", k + 1))
    if s[i] == "[":
        cands.append(("BRACKET_OPEN", ws_end(i + 1)))
    if s[i] == "{":
        cands.append(("BRACE_OPEN", ws_end(i + 1)))
    f = _float_at(s, i)
    if f > i:
        cands.append(("FLOAT", f))
    j = i + 1 if s[i] in "+-" else i
    n = _int_unsigned(s, j)
    if n >= 0:
        cands.append(("INT", n))
    for word, typ in (("true", "BOOL"), ("false", "BOOL"), ("null", "NULL")):
        if s[i:i + len(word)].lower() == word:
            cands.append((typ, i + len(word)))
    if s[i] in _UNQUOTED:
        cands.append(("UNQUOTED_CHAR", i + 1))
    if _is_char(s[i]) or s[i] == "_":
        m = i + 1
        while m < len(s) and (_is_char(s[m]) or s[m] in _DIGITS or s[m] in "_-"):
            m += 1
        cands.append(("ID", m))
    if s[i] == "\\":
        m = i
        while m + 1 < len(s) and s[m] == "\\" and s[m + 1] in _ESC_CHARS:
            m += 2
        if m > i:
            cands.append(("ESC", m))
    if s[i] in " \t":
        cands.append(("WS", ws_end(i)))
    if s[i] in "'\"":
        q = s[i]
        m = i + 1
        while m < len(s):
            if s[m] == "\\":
                m += 2
                continue
            if s[m] == q:
                cands.append(("QUOTED_VALUE", m + 1))
                break
            m += 1
    if s.startswith("${", i):
        m = s.find("}", i + 2)
        if m > i + 2:
            cands.append(("INTERPOLATION", m + 1))
    if not cands:
        return None
    best = max(c[1] for c in cands)
    for c in cands:
        if c[1] == best:
            return c
    return None


def _lexer_error(override, index):
    prefix = "LexerNoViableAltException: "
    start = len(prefix) + index + 1
    return HydraError("{}{}\n{}".format(prefix, override, "^".rjust(start)), "LexerNoViableAltException")


def _tokenize(override):
    tokens, i, mode = [], 0, "key"
    while i < len(override):
        tok = _lex_key(override, i) if mode == "key" else _lex_value(override, i)
        if tok is None:
            raise _lexer_error(override, i)
        typ, end = tok
        tokens.append((typ, override[i:end], i))
        if mode == "key" and typ == "EQUAL":
            mode = "value"
        i = end
    return tokens


class _Sweep:
    def __init__(self, items):
        self.items = items


class _Quoted(str):
    pass


def _unescape_quoted(text):
    q = text[0]
    body = text[1:-1]
    out, i = [], 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body) and body[i + 1] in ("\\", q):
            out.append(body[i + 1])
            i += 2
        else:
            out.append(body[i])
            i += 1
    return "".join(out)


class _ValueParser:
    """OverrideParser.g4 `value` and the HydraOverrideVisitor's conversions."""

    def __init__(self, override, tokens):
        self.override, self.t, self.i = override, tokens, 0

    def peek(self):
        return self.t[self.i][0] if self.i < len(self.t) else "EOF"

    def fail(self):
        tok = self.t[self.i][1] if self.i < len(self.t) else "<EOF>"
        raise HydraError("mismatched input '{}'".format(tok), "RecognitionException")

    def value(self):
        first = self.element()
        if self.peek() == "COMMA":
            items = [first]
            while self.peek() == "COMMA":
                self.i += 1
                items.append(self.element())
            return _Sweep(items)
        return first

    def element(self):
        typ = self.peek()
        if typ == "BRACKET_OPEN":
            self.i += 1
            items = []
            if self.peek() != "BRACKET_CLOSE":
                items.append(self.element())
                while self.peek() == "COMMA":
                    self.i += 1
                    items.append(self.element())
            if self.peek() != "BRACKET_CLOSE":
                self.fail()
            self.i += 1
            return items
        if typ == "BRACE_OPEN":
            self.i += 1
            out = {}
            if self.peek() != "BRACE_CLOSE":
                while True:
                    key = self.primitive(dict_key=True)
                    if self.peek() != "COLON":
                        self.fail()
                    self.i += 1
                    out[str(key)] = self.element()
                    if self.peek() != "COMMA":
                        break
                    self.i += 1
            if self.peek() != "BRACE_CLOSE":
                self.fail()
            self.i += 1
            return out
        if typ == "ID" and self.i + 1 < len(self.t) and self.t[self.i + 1][0] == "POPEN":
            return self.function()
        return self.primitive()

    def function(self):
        name = self.t[self.i][1]
        self.i += 2
        args = []
        if self.peek() != "PCLOSE":
            args.append(self.element())
            while self.peek() == "COMMA":
                self.i += 1
                args.append(self.element())
        if self.peek() != "PCLOSE":
            self.fail()
        self.i += 1
        casts = {"int": int, "float": float, "str": str, "bool": lambda v: str(v).lower() == "true" if isinstance(v, str) else bool(v)}
        if name in casts and len(args) == 1:
            try:
                return casts[name](args[0])
            except (TypeError, ValueError):
                pass
        if name in ("choice", "range", "interval", "glob"):
            return _Sweep(args)
        raise HydraError("Error parsing override '{}'\nUnknown function '{}'".format(self.override, name),
                         "HydraException")

    def primitive(self, dict_key=False):
        allowed = {"ID", "NULL", "INT", "FLOAT", "BOOL", "UNQUOTED_CHAR", "ESC", "WS"}
        if not dict_key:
            allowed |= {"COLON", "INTERPOLATION"}
        if self.peek() == "QUOTED_VALUE" and not dict_key:
            text = self.t[self.i][1]
            self.i += 1
            return _Quoted(_unescape_quoted(text))
        parts = []
        while self.peek() in allowed:
            parts.append(self.t[self.i])
            self.i += 1
        if not parts:
            self.fail()
        if len(parts) == 1:
            typ, text, _ = parts[0]
            if typ == "INT":
                return int(text.replace("_", ""))
            if typ == "FLOAT":
                return float(text.replace("_", ""))
            if typ == "BOOL":
                return text.lower() == "true"
            if typ == "NULL":
                return None
        out = []
        for typ, text, _ in parts:
            if typ == "ESC":
                out.append(text[1::2])
            else:
                out.append(text)
        return "".join(out).strip()


class Override:
    def __init__(self, input_line, kind, key, package, value, has_value):
        self.input_line = input_line
        self.kind = kind  # "change", "add", "force_add", "delete"
        self.key = key
        self.package = package
        self.value = value
        self.has_value = has_value


def parse_override(text):
    """OverridesParser.parse_overrides (core/override_parser/overrides_parser.py:78-104 @v1.3.2)."""
    tokens = _tokenize(text)
    i, kind = 0, "change"
    if tokens and tokens[0][0] == "TILDE":
        kind, i = "delete", 1
    elif tokens and tokens[0][0] == "PLUS":
        kind, i = "add", 1
        if i < len(tokens) and tokens[i][0] == "PLUS":
            kind, i = "force_add", 2
    key_parts, package = [], None
    while i < len(tokens) and tokens[i][0] in ("ID", "KEY_SPECIAL", "DOT_PATH", "SLASH"):
        key_parts.append(tokens[i][1])
        i += 1
    if i < len(tokens) and tokens[i][0] == "AT":
        i += 1
        pk = []
        while i < len(tokens) and tokens[i][0] in ("ID", "KEY_SPECIAL", "DOT_PATH"):
            pk.append(tokens[i][1])
            i += 1
        package = "".join(pk)
    key = "".join(key_parts)
    if i >= len(tokens) or tokens[i][0] != "EQUAL":
        if kind == "delete" and i >= len(tokens) and key:
            return Override(text, kind, key, package, None, False)
        found = tokens[i][1] if i < len(tokens) else "<EOF>"
        if i >= len(tokens) and key:
            raise HydraError("Error parsing override '{}'\nmissing '=' at '<EOF>'".format(text), "HydraException")
        raise HydraError("mismatched input '{}'".format(found), "RecognitionException")
    i += 1
    value_tokens = tokens[i:]
    if not value_tokens:
        return Override(text, kind, key, package, "", True)
    vp = _ValueParser(text, value_tokens)
    value = vp.value()
    if vp.i != len(value_tokens):
        vp.fail()
    return Override(text, kind, key, package, value, True)


def _plain_value(v):
    if isinstance(v, _Quoted):
        return str(v)
    if isinstance(v, list):
        return [_plain_value(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain_value(x) for k, x in v.items()}
    return v


def _select(cfg, key):
    node = cfg
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _composition_error(message):
    return HydraError(message, "ConfigCompositionException")


def _could_not_override(o):
    return _composition_error("Could not override '{}'.\nTo append to your config use +{}".format(o.key, o.input_line))


def _merge_into(dst, src, o, force):
    for k, v in src.items():
        if k not in dst and not force:
            raise _could_not_override(o)
        if isinstance(dst.get(k), dict) and isinstance(v, dict):
            _merge_into(dst[k], v, o, force)
        else:
            dst[k] = v


def _update(cfg, o, value, force):
    """OmegaConf.update(cfg, key, value, merge=True[, force_add]) on a struct config (omegaconf.py:685-745)."""
    parts = o.key.split(".")
    root = cfg
    for part in parts[:-1]:
        nxt = root.get(part) if isinstance(root, dict) else None
        if not isinstance(nxt, dict):
            if part not in root and not force:
                raise _could_not_override(o)
            root[part] = {}
        root = root[part]
    last = parts[-1]
    if isinstance(value, (dict, list)) and isinstance(root.get(last), dict) and isinstance(value, dict):
        _merge_into(root[last], value, o, force)
        return
    if last not in root and not force:
        raise _could_not_override(o)
    root[last] = value


def apply_overrides_struct(cfg, overrides):
    """parse_hydra_overrides (omegaconf_utils.py:163-186): set_struct(cfg, True),
    parse every override, then ConfigLoaderImpl._apply_overrides_to_config
    (hydra/_internal/config_loader_impl.py:336-399 @v1.3.2)."""
    parsed = [parse_override(o) for o in overrides]
    for o in parsed:
        if o.package is not None:
            raise _composition_error("Override {} looks like a config group override, but config group '{}' does not exist."
                                     .format(o.input_line, o.key))
        value = o.value
        if isinstance(value, _Sweep):
            raise _composition_error("Error merging override {}".format(o.input_line))
        value = _plain_value(value)
        if o.kind == "delete":
            current = _select(cfg, o.key)
            if current is None:
                raise _composition_error("Could not delete from config. '{}' does not exist.".format(o.key))
            if o.has_value and value is not None and value != current:
                raise _composition_error("Could not delete from config. The value of '{}' is {} and not {}."
                                         .format(o.key, current, value))
            parent = _select(cfg, o.key.rpartition(".")[0]) if "." in o.key else cfg
            del parent[o.key.rpartition(".")[2]]
        elif o.kind == "add":
            if _select(cfg, o.key) is None or isinstance(value, (dict, list)):
                _update(cfg, o, value, force=True)
            else:
                raise _composition_error(
                    "Could not append to config. An item is already at '{}'.\nEither remove + prefix: '{}'\n"
                    "Or add a second + to add or override '{}': '+{}'\n".format(
                        o.key, o.input_line[1:], o.key, o.input_line))
        elif o.kind == "force_add":
            _update(cfg, o, value, force=True)
        else:
            _update(cfg, o, value, force=False)
    return cfg


def merge_yaml(dst, src):
    """OmegaConf.merge of the YAML onto the (not struct) config: new keys are added."""
    for k, v in src.items():
        if isinstance(dst.get(k), dict) and isinstance(v, dict):
            merge_yaml(dst[k], v)
        else:
            dst[k] = json.loads(json.dumps(v)) if isinstance(v, (dict, list)) else v
    return dst


class Warner:
    """The WARNING records of _apply_overrides, as logging prints them (every rank, stdout)."""

    def warn(self, message):
        harness.out("WARNING:megatron.bridge.training.utils.omegaconf_utils:" + message)


def apply_back(obj, values, warner):
    """_apply_overrides (omegaconf_utils.py:454-521): a key the object does not
    have is warned about and skipped; nested dataclasses recurse; anything
    else is set."""
    for key, value in values.items():
        if not obj.has(key):
            warner.warn("Key '{}' in overrides not found in config object {}. Skipping.".format(key, obj.cls))
            continue
        current = obj.raw(key)
        if isinstance(current, Obj) and isinstance(value, dict):
            apply_back(current, value, warner)
        else:
            obj.set(key, value)


# ---------------------------------------------------------------- the process


DIST_INIT_S = 8.0
TOKENIZER_S = 2.0
MODEL_BUILD_S = 25.0
CKPT_LOAD_S = 10.0
DATA_S = 6.0
CKPT_SAVE_S = 12.0
EVAL_ITER_FRACTION = 0.35  # one evaluation iteration, in training steps (forward only)
CHECKPOINT_VERSION = 3.0  # checkpointing.py:2090
_SIM = [0.0]  # simulated seconds this process has slept


def _sleep(seconds):
    _SIM[0] += seconds
    harness.sleep(seconds)

EXC_QUALNAMES = {
    "OverridesError": "megatron.bridge.training.utils.omegaconf_utils.OverridesError",
    "OutOfMemoryError": "torch.OutOfMemoryError",
    "AcceleratorError": "torch.AcceleratorError",
    "OverrideParseException": "hydra.errors.OverrideParseException",
    "ConfigCompositionException": "hydra.errors.ConfigCompositionException",
}


class Failure(Exception):
    """A Python exception of the framework: its type and message."""

    def __init__(self, exc_type, message, frames=(), chain=None):
        super().__init__(message)
        self.exc_type = exc_type
        self.message = message
        self.frames = list(frames)
        self.chain = chain  # (exc_type, message, frames) raised first, "direct cause"


class Run:
    """One worker process of one entry point."""

    def __init__(self, script, root, entry_frames):
        self.w = harness.worker()
        self.script = script
        self.root = root
        self.src = os.path.join(root, "src", "megatron", "bridge")
        self.mlm = os.path.join(root, "3rdparty", "Megatron-LM")
        self.entry_frames = entry_frames
        self.log_level = 20
        self.signal_flag = None
        self.clock = None
        self.pred = None

    # ------------------------------------------------------------ output

    def rank0(self, line):
        if self.w.rank == 0:
            harness.out(line)

    def last(self, line):
        if self.w.is_last:
            harness.out(line)

    def log(self, level, name, message):
        """logging.basicConfig(handlers=[CustomHandler()]) of megatron.training (stdout,
        LEVEL:name:message; megatron/training/training.py:36, log_handler.py @2a75ac1)."""
        levels = {"DEBUG": 10, "INFO": 20, "WARNING": 30, "ERROR": 40}
        if levels[level] >= self.log_level:
            harness.out("{}:{}:{}".format(level, name, message))

    def pywarn(self, path, line, message, source, category="UserWarning"):
        harness.err("{}:{}: {}: {}".format(path, line, category, message))
        harness.err("  " + source)

    def timers(self, items):
        """Timers.log: the last rank, `(min, max) time across ranks (ms):` (megatron/core/timers.py:338-355,422-450)."""
        if not self.w.is_last or self.log_level > 20:
            return
        text = "(min, max) time across ranks (ms):"
        for name, seconds in items:
            ms = seconds * 1000.0
            text += "\n    {}: ({:.2f}, {:.2f})".format((name + " ").ljust(48, "."), ms * 0.985, ms)
        harness.out("INFO:megatron.core.timers:" + text)

    def barrier_and_log(self, text):
        """megatron/training/utils/log_utils.py:139-148 @2a75ac1 (note the trailing space)."""
        self.rank0("[{}] datetime: {} ".format(text, harness.now_text("%Y-%m-%d %H:%M:%S")))

    # ------------------------------------------------------------ failures

    def _traceback(self, exc_type, message, frames):
        lines = ["Traceback (most recent call last):"]
        for path, lineno, func in frames:
            lines.append('  File "{}", line {}, in {}'.format(path, lineno, func))
        name = EXC_QUALNAMES.get(exc_type, exc_type)
        head, _, rest = message.partition("\n")
        lines.append("{}: {}".format(name, head) if message else name)
        if rest:
            lines.extend(rest.split("\n"))
        return lines

    def die(self, f, code=1):
        """An uncaught exception: Python's traceback on stderr, exit 1."""
        lines = []
        if f.chain is not None:
            lines += self._traceback(*f.chain)
            lines += ["", "The above exception was the direct cause of the following exception:", ""]
        lines += self._traceback(f.exc_type, f.message, self.entry_frames + f.frames)
        for line in lines:
            harness.err(line)
        sys.exit(code)

    def die_in_pretrain(self, f, pf=(), code=1):
        """_pretrain's `except BaseException`: logger.exception on every rank, then
        re-raise (training/pretrain.py:201-214)."""
        rank = str(self.w.rank)
        text = ("Pretrain failed on rank={} with {}: {}. Bridge is aborting framework-owned distributed resources "
                "because peer ranks may be blocked in collectives.").format(rank, f.exc_type, f.message)
        tb = self._traceback(f.exc_type, f.message, [(os.path.join(self.src, "training", "pretrain.py"), 151,
                                                        "_pretrain")] + f.frames)
        harness.out("ERROR:megatron.bridge.training.pretrain:" + text + "\n" + "\n".join(tb))
        if f.exc_type == "SystemExit":
            sys.exit(int(f.message or 0))
        self.die(Failure(f.exc_type, f.message, list(pf) + [(os.path.join(self.src, "training", "pretrain.py"), 106,
                                                  "pretrain"), (os.path.join(self.src, "training", "pretrain.py"),
                                                                151, "_pretrain")] + f.frames), code)


def _num(value, what, kind=int):
    if isinstance(value, bool) or value is None or value is UNSET:
        if value is None or value is UNSET:
            return None
        return kind(value)
    if isinstance(value, (int, float)):
        return kind(value) if kind is float or float(value).is_integer() else value
    harness.emulator_fault("{} = {!r}: a non-numeric value here is not emulated (Bridge does not check its type "
                           "when the override is applied)".format(what, value))


def layout_of(cfg):
    m = cfg.get("model")
    g = lambda name, default: _num(m.get(name, default), "model." + name) if m is not None else default
    etp = m.get("expert_tensor_parallel_size") if m is not None else None
    return {
        "tp": g("tensor_model_parallel_size", 1) or 1,
        "pp": g("pipeline_model_parallel_size", 1) or 1,
        "cp": g("context_parallel_size", 1) or 1,
        "vp": g("virtual_pipeline_model_parallel_size", None),
        "ep": g("expert_model_parallel_size", 1) or 1,
        "etp": _num(etp, "model.expert_tensor_parallel_size") if etp is not None else None,
    }


def _sec(cfg, name):
    v = cfg.get(name)
    return v if isinstance(v, Obj) else Obj("ConfigContainer")  # a section replaced by a plain value


def _dataset_kind(ds):
    if isinstance(ds, Obj):
        return ds.cls
    return type(ds).__name__


def checkpoint_exists(path):
    """utils/checkpoint_utils.py:236-291"""
    if path is None:
        return False
    path = str(path)
    if is_iteration_dir(path):
        return True
    tracker = os.path.join(path, "latest_train_state.pt")
    if os.path.exists(tracker):
        return _read_state(tracker) is None or tracker_state(path) is not None
    return os.path.isfile(os.path.join(path, "latest_checkpointed_iteration.txt"))


def _launch():
    """The ranks of one torchrun launch share these (torchrun's worker environment)."""
    if "TORCHELASTIC_RUN_ID" not in os.environ:
        return None
    return "|".join(os.environ.get(k, "") for k in ("TORCHELASTIC_RUN_ID", "MASTER_ADDR", "MASTER_PORT"))


def _start_ticks(pid):
    try:
        with open("/proc/{}/stat".format(pid)) as f:
            return f.read().rpartition(")")[2].split()[19]
    except (OSError, IndexError, TypeError):
        return None


def _this_launch(state):
    writer = (state or {}).get("writer") or {}
    if writer.get("launch") is None or writer.get("launch") != _launch():
        return False
    return _start_ticks(writer.get("pid")) == writer.get("start")


def tracker_state(path):
    """The tracker as this rank finds it when it decides to load. Real ranks
    decide in lockstep (collectives); emulated ranks run free, so one that
    starts late could find what its own launch's rank 0 has just written: for
    it, the tracker is the one from before the launch (kept in the file)."""
    state = _read_state(os.path.join(str(path), "latest_train_state.pt"))
    if state is not None and _this_launch(state):
        return state.get("before_launch")
    return state


def is_iteration_dir(path):
    return any(os.path.exists(os.path.join(str(path), m))
               for m in ("run_config.yaml", "train_state.pt", "metadata.json", ".metadata"))


def _read_state(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _write_yaml(path, data):
    import yaml
    harness.write_file(path, yaml.safe_dump(data, default_flow_style=False, sort_keys=False))


class Trainer:
    """pretrain()/finetune() of training/pretrain.py and finetune.py on the emulated GPUs."""

    def __init__(self, run, cfg, mode):
        self.run, self.cfg, self.mode = run, cfg, mode
        self.w = run.w
        self.load_required = False
        # finetune() calls pretrain() (training/finetune.py:54) through the experimental_fn wrapper
        self.pf = ([(os.path.join(run.src, "training", "finetune.py"), 54, "finetune"),
                    (os.path.join(run.src, "utils", "decorators.py"), 39, "wrapper")] if mode == "finetune" else [])

    # ------------------------------------------------------------ helpers

    def sec(self, name):
        return _sec(self.cfg, name)

    def int_of(self, section, name, default=None):
        v = self.sec(section).get(name, default)
        return _num(v, "{}.{}".format(section, name))

    def cfgfile(self, name):
        return os.path.join(self.run.src, "training", name)

    def vframes(self, line, func="validate"):
        return self.pf + [(self.cfgfile("pretrain.py"), 75, "pretrain"),
                (self.cfgfile("config.py"), 2032, "runtime_config_update"),
                (self.cfgfile("config.py"), line, func)]

    # ------------------------------------------------------------ pretrain()/finetune()

    def main(self, caller):
        run = self.run
        ck = self.sec("checkpoint")
        if self.mode == "finetune":
            self.experimental("finetune", caller)
            if ck.get("pretrained_checkpoint") is None and ck.get("load") is None:
                run.die(Failure("AssertionError", "Finetuning requires a loading from a pretrained checkpoint or "
                                "resuming from a checkpoint", [(self.cfgfile("finetune.py"), 50, "finetune")]))
            self.load_required = True
            self.experimental("pretrain", (self.cfgfile("finetune.py"), 54,
                                           "return pretrain(config, forward_step_func, callbacks=callbacks)"))
        else:
            self.experimental("pretrain", caller)
        try:
            self.runtime_config_update()
        except Failure as f:
            run.die(f)
        if bool(self.sec("train").get("exit_signal_handler", False)):
            self.install_signal_handler()
        self.state_created = _SIM[0]
        try:
            self.setup()
            self.train_and_finish()
        except Failure as f:
            run.die_in_pretrain(f, self.pf)

    def experimental(self, func, caller):
        """utils/decorators.py:29-41: rank 0, warnings.warn(stacklevel=2)."""
        if self.w.rank == 0:
            path, line, source = caller
            self.run.pywarn(path, line, "Function '{}' is experimental. APIs in this module are subject to change "
                            "without notice.".format(func), source)

    def install_signal_handler(self):
        """GlobalState.cfg -> DistributedSignalHandler(train.exit_signal) (state.py:154-168,465-468;
        utils/sig_utils.py:123-137)."""
        run = self.run

        def handler(signum, frame):
            if run.w.rank == 0:
                harness.out("Received signal {}, initiating graceful stop".format(signum))
            run.signal_flag = signum

        signal.signal(signal.SIGTERM, handler)

    # ------------------------------------------------------------ runtime_config_update + validate

    def runtime_config_update(self):
        """training/config.py:1992-2032 and ConfigContainer.validate (1255-1663)."""
        run, cfg = self.run, self.cfg
        for name, value in (cfg.get("env_vars") or {}).items():
            os.environ.setdefault(str(name), str(value))
        lay = layout_of(cfg)
        self.layout = lay
        world = self.w.world_size
        total = lay["tp"] * lay["pp"] * lay["cp"]
        if world % total != 0:
            raise Failure("AssertionError", (
                "\n        world size ({}) is not divisible by total_model_size (model_cfg.tensor_model_parallel_size={} "
                "* model_cfg.pipeline_model_parallel_size={} * model_cfg.context_parallel_size={})\n        ").format(
                world, lay["tp"], lay["pp"], lay["cp"]),
                self.pf + [(self.cfgfile("pretrain.py"), 75, "pretrain"),
                           (self.cfgfile("config.py"), 2019, "runtime_config_update"),
                 (self.cfgfile("config.py"), 1037, "set_data_parallel_size"),
                 (self.cfgfile("config.py"), 1024, "get_data_parallel_size")])
        self.dp = world // total
        model = cfg.get("model")
        train, val, sched, ck = self.sec("train"), self.sec("validation"), self.sec("scheduler"), self.sec("checkpoint")
        ds = cfg.get("dataset")
        # model.finalize(): ModelParallelConfig.__post_init__ (megatron/core/model_parallel_config.py:497-545 @2a75ac1)
        if model is not None and model.get("sequence_parallel") and lay["tp"] <= 1:
            raise Failure("ValueError", "Cannot use sequence parallelism without tensor parallelism",
                          self.vframes(1401) + [(os.path.join(run.mlm, "megatron", "core", "model_parallel_config.py"),
                                                 504, "__post_init__")])
        if model is not None and model.get("cross_entropy_loss_fusion") and model.get("cross_entropy_fusion_impl") == "te":
            run.pywarn(os.path.join(run.mlm, "megatron", "core", "transformer", "transformer_config.py"), 1309,
                       "Transformer Engine cross entropy loss fusion has known stability issues. Megatron-LM training "
                       "args validation rejects this combination by default. Use cross_entropy_fusion_impl='native', "
                       "or disable cross_entropy_loss_fusion.", "super().__post_init__()")
        # TrainingConfig.finalize (config.py:467-493)
        train_iters = _num(train.get("train_iters"), "train.train_iters")
        train_samples = _num(train.get("train_samples"), "train.train_samples")
        gbs = _num(train.get("global_batch_size"), "train.global_batch_size")
        mbs = _num(train.get("micro_batch_size"), "train.micro_batch_size")
        modes = sum((train_iters is not None, train_samples is not None, train.get("num_epochs") is not None))
        if modes == 0:
            raise Failure("AssertionError", "One of train_iters, train_samples, or num_epochs must be provided",
                          self.vframes(1404) + [(self.cfgfile("config.py"), 480, "finalize")])
        if modes > 1:
            raise Failure("AssertionError", "Cannot specify more than one of train_iters, train_samples, or num_epochs",
                          self.vframes(1404) + [(self.cfgfile("config.py"), 481, "finalize")])
        if train.get("num_epochs") is not None:
            harness.emulator_fault("train.num_epochs (epoch-based training) is not emulated")
        if train_samples is not None:
            train_iters = train_samples // gbs
            run.rank0("Setting training iterations to {} based on {} samples".format(train_iters, train_samples))
        # SchedulerConfig.finalize (config.py:406-438)
        has_iter = (sched.get("lr_decay_iters") is not None or (sched.get("lr_warmup_iters") or 0) != 0
                    or sched.get("lr_wsd_decay_iters") is not None)
        has_sample = (sched.get("lr_decay_samples") is not None or (sched.get("lr_warmup_samples") or 0) != 0
                      or sched.get("lr_wsd_decay_samples") is not None)
        if has_iter and has_sample:
            raise Failure("AssertionError", (
                "Cannot mix iteration-based and sample-based scheduler fields. Found iteration fields: "
                "lr_decay_iters={}, lr_warmup_iters={}, lr_wsd_decay_iters={}. Found sample fields: lr_decay_samples={}, "
                "lr_warmup_samples={}, lr_wsd_decay_samples={}. Use either iteration fields OR sample fields, not both."
            ).format(sched.get("lr_decay_iters"), sched.get("lr_warmup_iters"), sched.get("lr_wsd_decay_iters"),
                     sched.get("lr_decay_samples"), sched.get("lr_warmup_samples"), sched.get("lr_wsd_decay_samples")),
                self.vframes(1405) + [(self.cfgfile("config.py"), 426, "finalize")])
        # CheckpointConfig.finalize (config.py:589-628)
        pretrained = ck.get("pretrained_checkpoint")
        if pretrained is not None and not os.path.exists(str(pretrained)):
            raise Failure("AssertionError", "Pretrained checkpoint {} does not exist".format(pretrained),
                          self.vframes(1406) + [(self.cfgfile("config.py"), 594, "finalize")])
        if ck.get("async_save") and ck.get("save") is None:
            raise Failure("AssertionError", "async_save is enabled, but save is not set. Set save to a valid path.",
                          self.vframes(1406) + [(self.cfgfile("config.py"), 602, "finalize")])
        if ck.get("ckpt_step") is not None and ck.get("load") is None:
            raise Failure("ValueError", "ckpt_step={} specified but checkpoint.load is None. Please set checkpoint.load "
                          "to the base checkpoint directory.".format(ck.get("ckpt_step")),
                          self.vframes(1406) + [(self.cfgfile("config.py"), 620, "finalize")])
        # eval batch sizes (config.py:1432-1478)
        eval_gbs = _num(val.get("eval_global_batch_size"), "validation.eval_global_batch_size") or gbs
        eval_mbs = _num(val.get("eval_micro_batch_size"), "validation.eval_micro_batch_size") or mbs
        self.eval_gbs = eval_gbs
        product = eval_mbs * self.dp
        if eval_gbs % product != 0:
            raise Failure("AssertionError", (
                "eval_global_batch_size ({}) must be divisible by eval_micro_batch_size * eval_data_parallel_size "
                "({} * {} = {})").format(eval_gbs, eval_mbs, self.dp, product), self.vframes(1474))
        dist, ddp = self.sec("dist"), self.sec("ddp")
        if dist.get("use_megatron_fsdp") and dist.get("use_torch_fsdp2"):
            raise Failure("ValueError", "use_megatron_fsdp and use_torch_fsdp2 are mutually exclusive.",
                          self.vframes(1482))
        if (dist.get("use_megatron_fsdp") or ddp.get("use_megatron_fsdp")) and (
                ck.get("save") is not None or ck.get("load") is not None) and ck.get("ckpt_format") != "fsdp_dtensor":
            raise Failure("AssertionError", "Megatron-FSDP requires the fsdp_dtensor checkpointing format!",
                          self.vframes(1485) + [(self.cfgfile("config.py"), 1107, "_validate_and_apply_megatron_fsdp_v1_configs")])
        if model is not None and model.get("deterministic_mode"):
            if model.get("cross_entropy_loss_fusion"):
                raise Failure("AssertionError", "Cross Entropy Fusion is currently not deterministic.",
                              self.vframes(1501) + [(self.cfgfile("config.py"), 1053, "_validate_and_apply_deterministic_mode")])
            choices = ("Tree", "Ring", "CollnetDirect", "CollnetChain", "^NVLS")
            if os.environ.get("NCCL_ALGO") not in choices:
                raise Failure("AssertionError", "NCCL_ALGO must be one of {}.".format(choices),
                              self.vframes(1501) + [(self.cfgfile("config.py"), 1058, "_validate_and_apply_deterministic_mode")])
        if model is not None and model.get("restore_modelopt_state") and model.get("gradient_accumulation_fusion", True):
            raise Failure("AssertionError", "Gradient accumulation fusion is not supported with ModelOpt/Quantized models. "
                          "Please set model.gradient_accumulation_fusion=False", self.vframes(1518))
        if ck.get("async_save") and ck.get("ckpt_format") not in ("torch_dist", "fsdp_dtensor"):
            raise Failure("AssertionError", "async_save is only supported with ckpt_format='torch_dist','fsdp_dtensor'",
                          self.vframes(1537))
        # _validate_training_scheduler_compatibility (config.py:1699-1728)
        if train_samples is None:
            if sched.get("lr_decay_samples") is not None:
                raise Failure("AssertionError", "Use lr_decay_iters for iteration-based training, not lr_decay_samples",
                              self.vframes(1568) + [(self.cfgfile("config.py"), 1720, "_validate_training_scheduler_compatibility")])
            if (sched.get("lr_warmup_samples") or 0) != 0:
                raise Failure("AssertionError", "Use lr_warmup_iters for iteration-based training, not lr_warmup_samples",
                              self.vframes(1568) + [(self.cfgfile("config.py"), 1723, "_validate_training_scheduler_compatibility")])
            if sched.get("lr_warmup_fraction") is not None and (sched.get("lr_warmup_iters") or 0) != 0:
                raise Failure("AssertionError", "Can only specify one of lr_warmup_fraction or lr_warmup_iters",
                              self.vframes(1568) + [(self.cfgfile("config.py"), 1726, "_validate_training_scheduler_compatibility")])
        self.schedule(train_iters, gbs)
        # context parallel (config.py:1574-1596)
        model_seq = _num(model.get("seq_length"), "model.seq_length") if model is not None else None
        finetune_ds = _dataset_kind(ds) in ("GPTSFTDatasetConfig",)
        if lay["cp"] > 1:
            if model_seq is not None and model_seq % (lay["cp"] * 2) != 0:
                raise Failure("AssertionError", "Sequence length must be divisible by 2 * context parallel size if "
                              "context parallel is used.", self.vframes(1575))
            if finetune_ds:
                if not model.get("calculate_per_token_loss"):
                    raise Failure("AssertionError", "When finetuning with CP>1, calculate_per_token_loss must be True",
                                  self.vframes(1591))
                if ddp.get("average_in_collective"):
                    raise Failure("AssertionError", "When finetuning with CP>1, average_in_collective must be False",
                                  self.vframes(1594))
        # offline packing (config.py:1600-1617)
        packing = isinstance(ds, Obj) and bool(ds.get("enable_offline_packing"))
        if packing:
            specs = ds.get("offline_packing_specs")
            size = _num(specs.get("packed_sequence_size") if isinstance(specs, Obj) else
                        (specs or {}).get("packed_sequence_size"), "dataset.offline_packing_specs.packed_sequence_size")
            if size is not None and size <= 0:
                raise Failure("ValueError", "offline_packing_specs.packed_sequence_size must be greater than 0.",
                              self.vframes(1603))
            if mbs > 1:
                raise Failure("ValueError", (
                    "Micro batch size should be 1 when training with packed sequence, but your micro batch size is {}. "
                    "\nThe following config is equivalent to your current setting for a packed dataset. Please update "
                    "your config to the following: \nSet micro batch size to 1 (currently {})\nSet global batch size to "
                    "{} (currently {}) \nSet packed sequence length to {} (currently {}) \nFor details please visit "
                    "https://docs.nvidia.com/nemo-framework/user-guide/latest/sft_peft/packed_sequence.html").format(
                    mbs, mbs, gbs // mbs, gbs, size * mbs, size), self.vframes(1606))
        if cfg.get("peft") is not None and pretrained is None:
            raise Failure("AssertionError", "PEFT requires a pretrained checkpoint path", self.vframes(1627))
        ds_seq = _num(ds.get("seq_length"), "dataset.seq_length") if isinstance(ds, Obj) else None
        if ds_seq is not None and model_seq is not None and model_seq != ds_seq:
            raise Failure("AssertionError", (
                "Please ensure sequence length configuration in model config and dataset config match.\nSequence "
                "length in model config: {}, Sequence length in dataset config: {}").format(model_seq, ds_seq),
                self.vframes(1644))
        for name in ("eval_iters", "eval_interval", "start_eval_at_iter", "eval_global_batch_size",
                     "eval_micro_batch_size", "skip_train", "test_mode", "full_validation",
                     "multiple_validation_sets", "validation_set_names"):
            value = train.get(name) if name in train.f else None
            if value is not None:
                run.pywarn(self.cfgfile("config.py"), 2032, "TrainingConfig.{} is deprecated and will be removed in a "
                           "future release. Use ValidationConfig.{} instead.".format(name, name), "cfg.validate()")
                val.set(name, value)
        self.train_iters, self.gbs, self.mbs = train_iters, gbs, mbs

    def schedule(self, train_iters, gbs):
        """_calculate_scheduler_steps (config.py:1746-1807) and OptimizerParamScheduler.get_lr."""
        run, sched, opt = self.run, self.sec("scheduler"), self.sec("optimizer")
        max_steps = _num(sched.get("max_steps"), "scheduler.max_steps")
        if max_steps is not None:
            if max_steps <= 0:
                raise Failure("ValueError", "scheduler.max_steps must be positive, got {}.".format(max_steps),
                              self.vframes(1405))
            if max_steps < train_iters:
                raise Failure("ValueError", "scheduler.max_steps ({}) must be greater than or equal to train.train_iters "
                              "({}).".format(max_steps, train_iters), self.vframes(1572, "_calculate_scheduler_steps"))
            decay_iters = max_steps
        else:
            decay_iters = _num(sched.get("lr_decay_iters"), "scheduler.lr_decay_iters") or train_iters
        decay_steps = decay_iters * gbs
        fraction = sched.get("lr_warmup_fraction")
        warmup_steps = fraction * decay_steps if fraction is not None else (
            (_num(sched.get("lr_warmup_iters"), "scheduler.lr_warmup_iters") or 0) * gbs)
        if decay_steps <= 0:
            raise Failure("ValueError", "lr_decay_steps must be > 0, got {}. Please increase train_iters/train_samples or "
                          "lr_decay_iters/lr_decay_samples.".format(decay_steps),
                          self.vframes(1572) + [(self.cfgfile("config.py"), 1794, "_calculate_scheduler_steps")])
        if warmup_steps >= decay_steps:
            capped = decay_steps - 1
            run.pywarn(self.cfgfile("config.py"), 1572, "lr_warmup_steps ({}) >= lr_decay_steps ({}); capping "
                       "lr_warmup_steps to {}. Reduce lr_warmup_iters (or lr_warmup_samples) for short training runs."
                       .format(warmup_steps, decay_steps, capped), "self._calculate_scheduler_steps()")
            warmup_steps = capped
        self.lr = (float(_num(opt.get("lr", 1e-4), "optimizer.lr", float)),
                   float(_num(opt.get("min_lr", 0.0), "optimizer.min_lr", float) or 0.0),
                   float(_num(sched.get("lr_warmup_init", 0.0), "scheduler.lr_warmup_init", float) or 0.0),
                   warmup_steps, decay_steps, sched.get("lr_decay_style", "cosine"))

    def learning_rate(self, num_steps):
        max_lr, min_lr, init_lr, warmup, decay, style = self.lr
        if warmup > 0 and num_steps <= warmup:
            return init_lr + (max_lr - init_lr) * float(num_steps) / float(warmup)
        if style == "constant":
            return max_lr
        if num_steps > decay:
            return min_lr
        ratio = float(num_steps - warmup) / float(decay - warmup)
        if style == "linear":
            coeff = 1.0 - ratio
        elif style == "inverse-square-root":
            return max(min_lr, max_lr * max(warmup, 1) ** 0.5 / max(num_steps, 1) ** 0.5)
        else:
            coeff = 0.5 * (math.cos(math.pi * ratio) + 1.0)
        return min_lr + coeff * (max_lr - min_lr)

    # ------------------------------------------------------------ setup (training/setup.py:221-546)

    def setup(self):
        run, cfg, w = self.run, self.cfg, self.w
        lay = self.layout
        logger = self.sec("logger")
        ck = self.sec("checkpoint")
        path = logger.get("save_config_filepath")
        if path and w.rank == 0:
            _write_yaml(str(path), to_plain(cfg))
        level = logger.get("logging_level")
        env_level = os.environ.get("MEGATRON_LOGGING_LEVEL") or os.environ.get("MEGATRON_BRIDGE_LOGGING_LEVEL")
        value = int(level) if level is not None else int(env_level) if env_level else 20
        run.log("INFO", "megatron.training.utils.log_utils", "Setting logging level to {}".format(value))
        run.log_level = value
        run.rank0("> initializing torch distributed ...")
        _sleep(DIST_INIT_S)
        ps = os.path.join(run.mlm, "megatron", "core", "parallel_state.py")
        gpus = os.environ.get("ATTUNE_EMULATE_GPUS", "")
        if gpus and w.local_rank >= int(gpus):  # torch.cuda.set_device(local_rank) (initialize.py:720)
            raise Failure("AcceleratorError", "CUDA error: invalid device ordinal\nCUDA kernel errors might be "
                          "asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
                          [(self.cfgfile("setup.py"), 281, "setup"), (self.cfgfile("initialize.py"), 720,
                                                                      "_initialize_distributed")])
        init = [(self.cfgfile("setup.py"), 281, "setup"), (self.cfgfile("initialize.py"), 128, "initialize_megatron"),
                (self.cfgfile("initialize.py"), 234, "torch_dist_init"), (self.cfgfile("initialize.py"), 194, "finish_mpu_init"),
                (self.cfgfile("initialize.py"), 805, "_initialize_distributed")]
        if lay["vp"] is not None and lay["pp"] <= 1:
            raise Failure("RuntimeError", "pipeline-model-parallel size should be greater than 1 with interleaved schedule",
                          init + [(ps, 829, "initialize_model_parallel")])
        etp = lay["etp"] if lay["etp"] is not None else lay["tp"]
        expert = etp * lay["ep"] * lay["pp"]
        if w.world_size % expert != 0:
            raise Failure("RuntimeError", "world_size ({}) is not divisible by expert_tensor_model_pipeline_parallel size "
                          "({})".format(w.world_size, expert), init + [(ps, 882, "initialize_model_parallel")])
        run.rank0("> initialized tensor model parallel with size {}".format(lay["tp"]))
        run.rank0("> initialized pipeline model parallel with size {}".format(lay["pp"]))
        seed = self.int_of("rng", "seed", 1234)
        if seed is None or seed <= 0:
            raise Failure("AssertionError", "Seed ({}) should be a positive integer.".format(seed),
                          init[:4] + [(self.cfgfile("initialize.py"), 849, "_set_random_seed")])
        run.rank0("> setting random seeds to {} ...".format(seed))
        if w.local_rank == 0:
            harness.out("> compiling dataset index builder ...")
            harness.out(">>> done with dataset index builder. Compilation time: {:.3f} seconds".format(0.05))
        run.rank0("time to initialize megatron (seconds): {:.3f}".format(_SIM[0] - self.state_created))
        run.barrier_and_log("after megatron is initialized")
        _sleep(TOKENIZER_S)
        run.barrier_and_log("after tokenizer is built")
        peft = cfg.get("peft")
        self.step, self.consumed = 0, 0
        self.loaded_step = 0
        if peft is not None:
            run.rank0("Registered PEFT pre-wrap hook")
        _sleep(MODEL_BUILD_S)
        if peft is not None:
            self.peft_pre_wrap_hook(peft)
        run.barrier_and_log("after model, optimizer, and learning rate scheduler are built")
        should_load = self.should_load_checkpoint()
        if peft is not None and should_load:
            ck.set("finetune", False)
        if should_load:
            self.load_checkpoint()
            run.timers([("load-checkpoint", CKPT_LOAD_S)])
        if logger.get("tensorboard_dir"):
            run.last("> setting tensorboard ...")
        eval_interval = _num(self.sec("validation").get("eval_interval"), "validation.eval_interval")
        eval_iters = _num(self.sec("validation").get("eval_iters"), "validation.eval_iters") or 0
        samples = (self.train_iters * self.gbs,
                   ((self.train_iters // eval_interval + 1) * eval_iters if eval_interval else 0) * self.eval_gbs,
                   eval_iters * self.eval_gbs)
        run.rank0(" > datasets target sizes (minimum size):")
        run.rank0("    train:      {}".format(samples[0]))
        run.rank0("    validation: {}".format(samples[1]))
        run.rank0("    test:       {}".format(samples[2]))
        _sleep(DATA_S)
        run.barrier_and_log("after dataloaders are built")
        run.rank0("done with setup ...")
        run.timers([("model-and-optimizer-setup", MODEL_BUILD_S), ("train/valid/test-data-iterators-setup", DATA_S)])
        ds = cfg.get("dataset")
        kind = _dataset_kind(ds)
        has_valid = True if kind != "GPTSFTDatasetConfig" else bool(ds.get("do_validation", True))
        has_test = True if kind != "GPTSFTDatasetConfig" else bool(ds.get("do_test", True))
        self.eval_iters, self.eval_interval = eval_iters, eval_interval
        self.do_train = self.train_iters > 0
        self.do_valid = has_valid and eval_iters > 0
        self.do_test = has_test and eval_iters > 0

    def peft_pre_wrap_hook(self, peft):
        """setup.py:658-738"""
        run, ck = self.run, self.sec("checkpoint")
        run.rank0("Applying PEFT pre-wrap hook...")
        pretrained = ck.get("pretrained_checkpoint")
        frames = [(self.cfgfile("setup.py"), 407, "setup"), (self.cfgfile("setup.py"), 678, "peft_pre_wrap_hook")]
        if pretrained is None or not checkpoint_exists(pretrained):
            raise Failure("ValueError", "Invalid pretrained checkpoint directory found: {}".format(pretrained), frames)
        ck.set("finetune", True)
        run.rank0("Loading base model weights from: {}".format(pretrained))
        self.load_from(str(pretrained), finetune=True, restore=False)
        run.timers([("load-pretrained-checkpoint", CKPT_LOAD_S)])
        run.rank0("Applying PEFT transformation...")
        if not isinstance(peft, Obj):
            raise Failure("TypeError", "'{}' object is not callable".format(type(peft).__name__),
                          frames[:1] + [(self.cfgfile("setup.py"), 702, "peft_pre_wrap_hook"),
                                        (self.cfgfile("setup.py"), 720, "_apply_peft_transformation")])

    def should_load_checkpoint(self):
        """setup.py:155-191"""
        ck = self.sec("checkpoint")
        load, pretrained = ck.get("load"), ck.get("pretrained_checkpoint")
        load_exists = load is not None and checkpoint_exists(load)
        if self.cfg.get("peft") is not None:
            return load_exists
        should = load_exists or (pretrained is not None and checkpoint_exists(pretrained))
        if self.load_required and not should:
            raise Failure("FileNotFoundError", "Finetuning requires loading from an available pretrained checkpoint or "
                          "resuming from a checkpoint", [(self.cfgfile("setup.py"), 425, "setup"),
                                                         (self.cfgfile("setup.py"), 187, "_should_load_checkpoint")])
        return should

    def load_checkpoint(self):
        """checkpointing.py:2333-2400"""
        run, ck = self.run, self.sec("checkpoint")
        load, pretrained = ck.get("load"), ck.get("pretrained_checkpoint")
        load_dir = load
        if pretrained is not None and not checkpoint_exists(load):
            run.rank0("Checkpoint file not found in load directory {}. Attempting to finetune with checkpoint in {}"
                      .format(load, pretrained))
            load_dir = pretrained
            if not checkpoint_exists(load_dir):
                raise Failure("FileNotFoundError", "No checkpoint found in load directory or pretrained directory",
                              [(self.cfgfile("setup.py"), 436, "setup"), (self.cfgfile("checkpointing.py"), 2386,
                                                                            "load_checkpoint")])
            ck.set("finetune", True)
        self.load_from(str(load_dir), finetune=bool(ck.get("finetune")), restore=True)

    def load_from(self, load_dir, finetune, restore):
        """_load_checkpoint_from_path: iteration from the tracker, the load lines
        (checkpointing.py:3395-3445, 3728-3733, 3056-3075, 3143-3144, 3263-3268)."""
        run = self.run
        state = None
        if is_iteration_dir(load_dir):
            run.rank0("Loading checkpoint directly from iteration directory {}".format(load_dir))
            state = _read_state(os.path.join(load_dir, "train_state.pt")) or {}
            iteration = int(state.get("step", 0))
        else:
            tracker = os.path.join(load_dir, "latest_train_state.pt")
            legacy = os.path.join(load_dir, "latest_checkpointed_iteration.txt")
            state = tracker_state(load_dir) if os.path.exists(tracker) else None
            if state is not None:
                iteration = int(state.get("step", 0))
            elif os.path.isfile(legacy):
                run.rank0("Loading from legacy Megatron-LM checkpoint format: {}".format(legacy))
                with open(legacy) as f:
                    text = f.read().strip()
                iteration = 0 if text == "release" else int(text)
                state = _read_state(os.path.join(load_dir, "iter_{:07d}".format(iteration), "train_state.pt"))
            else:
                harness.emulator_fault("{}: latest_train_state.pt is not a checkpoint this emulator wrote".format(load_dir))
            run.rank0(" loading distributed checkpoint from {} at iteration {}".format(load_dir, iteration))
        step = iteration
        consumed = int((state or {}).get("consumed_train_samples", step * self.gbs))
        if finetune:
            step, consumed = 0, 0
        _sleep(CKPT_LOAD_S)
        run.rank0(" checkpoint version {}".format(CHECKPOINT_VERSION))
        lay = self.layout
        run.rank0("  successfully loaded checkpoint from {} [ t 0/{}, p 0/{} ] at iteration {}".format(
            load_dir, lay["tp"], lay["pp"], step))
        if restore:
            self.step, self.consumed = step, consumed

    # ------------------------------------------------------------ checkpoints

    def save_checkpoint(self):
        """checkpointing.py:1130-1520: rank 0 writes the tracker files after the
        iteration directory; the marker files are JSON, not torch pickles."""
        run, ck = self.run, self.sec("checkpoint")
        save = str(ck.get("save"))
        fmt = ck.get("ckpt_format", "torch_dist")
        run.rank0("saving checkpoint at iteration {:7d} to {} in {} format".format(self.step, save, fmt))
        _sleep(CKPT_SAVE_S)
        if self.w.rank == 0:
            it_dir = os.path.join(save, "iter_{:07d}".format(self.step))
            state = {"step": self.step, "consumed_train_samples": self.consumed, "skipped_train_samples": 0,
                     "checkpoint_version": CHECKPOINT_VERSION,
                     "emulated": "attune emulator of Megatron-Bridge {}".format(COMMIT[:7]),
                     "writer": {"launch": _launch(), "pid": os.getpid(), "start": _start_ticks(os.getpid())}}
            before = _read_state(os.path.join(save, "latest_train_state.pt"))
            state["before_launch"] = before.get("before_launch") if _this_launch(before) else before
            if state["before_launch"]:
                state["before_launch"].pop("before_launch", None)
            for name in (".metadata", "common.pt", "metadata.json", "__0_0.distcp"):
                harness.write_file(os.path.join(it_dir, name), json.dumps({"format": fmt, "step": self.step}) + "\n")
            _write_yaml(os.path.join(it_dir, "run_config.yaml"), to_plain(self.cfg))
            harness.write_json(os.path.join(it_dir, "train_state.pt"), state)
            harness.write_json(os.path.join(save, "latest_train_state.pt"), state)
            harness.write_file(os.path.join(save, "latest_checkpointed_iteration.txt"), str(self.step))
        lay = self.layout
        run.rank0("  successfully saved checkpoint from iteration {:7d} to {} [ t 1/{}, p 1/{} ]".format(
            self.step, save, lay["tp"], lay["pp"]))
        run.timers([("save-checkpoint", CKPT_SAVE_S)])

    # ------------------------------------------------------------ train (training/train.py)

    def evaluate(self, prefix, verbose):
        """eval.py:166-204, 462-506"""
        run = self.run
        if verbose:
            run.rank0("Evaluating on {} samples".format(self.eval_iters * self.eval_gbs))
        for i in range(1, self.eval_iters + 1):
            if verbose:
                run.rank0("Evaluating iter {}/{}".format(i, self.eval_iters))
            _sleep(self.pred.step_s * EVAL_ITER_FRACTION)
        value = harness.loss(max(self.step, 1)) + 0.05
        text = " validation loss at {} | ".format(prefix)
        text += "{} value: {:.6E} | ".format("lm loss", value)
        text += "{} PPL: {:.6E} | ".format("lm loss", math.exp(min(20, value)))
        length = len(text) + 1
        run.last("-" * length)
        run.last(text)
        run.last("-" * length)

    def oom(self):
        message = harness.cuda_oom_message(self.pred, self.w.local_rank)
        raise Failure("OutOfMemoryError", message, [(self.cfgfile("train.py"), 470, "train"),
                                                    (self.cfgfile("train.py"), 1000, "train_step")])

    def train_and_finish(self):
        run, cfg, w = self.run, self.cfg, self.w
        self.pred = harness.prediction(w)
        self.clock = harness.StepClock(self.pred)
        train = self.sec("train")
        ck = self.sec("checkpoint")
        logger = self.sec("logger")
        log_interval = _num(logger.get("log_interval", 100), "logger.log_interval")
        if not log_interval:
            raise Failure("ZeroDivisionError", "integer modulo by zero", [(self.cfgfile("train.py"), 643, "train"),
                                                                        (self.cfgfile("utils/train_utils.py"), 1018, "training_log")])
        save, save_interval = ck.get("save"), _num(ck.get("save_interval"), "checkpoint.save_interval")
        exit_interval = _num(train.get("exit_interval"), "train.exit_interval")
        exit_minutes = train.get("exit_duration_in_mins")
        skip_log = bool(logger.get("skip_train_metrics_log"))
        handler = bool(train.get("exit_signal_handler"))
        should_exit = False
        if not bool(self.sec("validation").get("skip_train")):
            if self.do_train:
                start = self.step
                run.rank0("Starting training loop at iteration {}".format(start))
                times, losses, done_here = [], [], 0
                report_memory = True
                while self.step < self.train_iters:
                    seconds = self.clock.seconds(self.step + 1)
                    _sleep(seconds)
                    done_here += 1
                    if self.pred.ooms and done_here == max(1, self.pred.fails_at_step):
                        self.oom()
                    self.step += 1
                    self.consumed += self.dp * self.mbs * (self.gbs // (self.mbs * self.dp))
                    times.append(seconds)
                    losses.append(harness.loss(self.step))
                    if not skip_log and self.step % log_interval == 0:
                        report_memory = self.log_step(times, losses, report_memory, start)
                        times, losses = [], []
                    if self.do_valid and self.eval_interval and self.step % self.eval_interval == 0:
                        self.evaluate("iteration {}".format(self.step), verbose=False)
                    # checkpoint_and_decide_exit (train.py:1374-1531)
                    if handler and run.signal_flag is not None:
                        if save:
                            self.save_checkpoint()
                        run.barrier_and_log("exiting program after receiving SIGTERM.")
                        should_exit = True
                        break
                    saved = False
                    if save and save_interval and self.step % save_interval == 0:
                        self.save_checkpoint()
                        saved = True
                    if exit_minutes and harness.sim_elapsed() / 60.0 > float(exit_minutes):
                        if save and not saved:
                            self.save_checkpoint()
                        run.barrier_and_log("exiting program after {} minutes".format(harness.sim_elapsed() / 60.0))
                        should_exit = True
                        break
                    if exit_interval and self.step % exit_interval == 0:
                        if save and not saved:
                            self.save_checkpoint()
                        run.barrier_and_log("exiting program at iteration {}".format(self.step))
                        should_exit = True
                        break
                if not should_exit and save and self.step != 0 and save_interval != 0 and (
                        save_interval is None or self.step % save_interval != 0):
                    self.save_checkpoint()
                if should_exit:
                    raise Failure("SystemExit", "0", [(self.cfgfile("train.py"), 816, "train")])
            run.barrier_and_log("after training is done")
        else:
            run.rank0("skipping training ...")
        if self.do_valid:
            self.evaluate("iteration {} on validation set".format(self.step), verbose=True)
        if self.do_test:
            self.evaluate("iteration {} on test set".format(self.step), verbose=True)

    def log_step(self, times, losses, report_memory, start):
        """training_log (utils/train_utils.py:1018-1156)."""
        run, w = self.run, self.w
        n = len(times)
        elapsed = sum(times)
        per_iter = elapsed / n
        per_gpu_tf = self.pred.tflops_per_gpu * self.pred.step_s * n / elapsed if elapsed > 0 else 0.0
        run.rank0("Step Time : {:.2f}s GPU utilization: {:.1f}MODEL_TFLOP/s/GPU".format(per_iter, per_gpu_tf))
        text = " [{}]".format(harness.now_text("%Y-%m-%d %H:%M:%S"))
        text += " iteration {:8d}/{:8d} |".format(self.step, self.train_iters)
        text += " consumed samples: {:12d} |".format(self.consumed)
        text += " elapsed time per iteration (ms): {:.1f} |".format(per_iter * 1000.0)
        if self.sec("logger").get("log_throughput"):
            text += " throughput per GPU (TFLOP/s/GPU): {:.1f} |".format(per_gpu_tf)
        text += " learning rate: {:.6E} |".format(self.learning_rate(self.step * self.gbs))
        text += " global batch size: {:5d} |".format(self.gbs)
        text += " {}: {:.6E} |".format("lm loss", sum(losses) / n)
        text += " loss scale: {:.1f} |".format(1.0)
        text += " grad norm: {:.3f} |".format(harness.grad_norm(self.step))
        text += " number of skipped iterations: {:3d} |".format(0)
        text += " number of nan iterations: {:3d} |".format(0)
        run.last(text)
        if report_memory:
            lay = self.layout
            if (w.rank // (lay["tp"] * lay["cp"])) % self.dp == 0:
                harness.out("[Rank {}] (after {} iterations) memory (GB){}".format(w.rank, self.step, self.memory()))
            if self.step > start + 1:
                report_memory = False
        return report_memory

    def memory(self):
        """report_memory (utils/train_utils.py:1160-1213): torch.cuda.memory_stats in GB (1e9), 5 significant digits."""
        def gb(gib):
            value = gib * 1.073741824
            if value != 0:
                value = round(value, -int(math.floor(math.log10(abs(value)))) + 4)
            return value
        alloc, reserved = self.pred.peak_allocated_gib, self.pred.peak_reserved_gib
        items = [("mem-allocated-gigabytes", gb(alloc)), ("mem-active-gigabytes", gb(alloc)),
                 ("mem-inactive-gigabytes", gb(max(0.0, reserved - alloc) * 0.1)), ("mem-reserved-gigabytes", gb(reserved)),
                 ("mem-max-allocated-gigabytes", gb(alloc)), ("mem-max-active-gigabytes", gb(alloc)),
                 ("mem-max-inactive-gigabytes", gb(max(0.0, reserved - alloc) * 0.2)),
                 ("mem-max-reserved-gigabytes", gb(reserved)), ("mem-alloc-retires", 0), ("mem-allocated-count", 1523)]
        return "".join(" | {}: {}".format(k, v) for k, v in items)


# ---------------------------------------------------------------- shared script plumbing


IMPORT_S = 10.0  # importing megatron.bridge and torch (emulator's choice)
RECIPE_BUILD_S = 10.0  # the recipe function (fetches the HF config; emulator's choice)
HYDRA_DOC = "\nSee https://hydra.cc/docs/1.2/advanced/override_grammar/basic for details"


def _script():
    return Path(sys.argv[0]).resolve()


def _site(root, *parts):
    return os.path.join(root, ".venv", "lib", "python3.12", "site-packages", *parts)


def _overrides_failure(run, e, frames):
    """OverridesError(f"Failed to parse Hydra overrides: {e}") from e (omegaconf_utils.py:185-186)."""
    ou = os.path.join(run.src, "training", "utils", "omegaconf_utils.py")
    if e.cause_type in ("LexerNoViableAltException", "RecognitionException", "HydraException"):
        message = e.message + HYDRA_DOC
        chain = ("OverrideParseException", message,
                 [(ou, 182, "parse_hydra_overrides"),
                  (_site(run.root, "hydra", "core", "override_parser", "overrides_parser.py"), 96, "parse_overrides")])
    else:
        message = e.message
        chain = ("ConfigCompositionException", message,
                 [(ou, 183, "parse_hydra_overrides"),
                  (_site(run.root, "hydra", "_internal", "config_loader_impl.py"), 392, "_apply_overrides_to_config")])
    return Failure("OverridesError", "Failed to parse Hydra overrides: " + message,
                   frames + [(ou, 186, "parse_hydra_overrides")], chain=chain)


def load_yaml(run, path, frames):
    """OmegaConf.load with OmegaConf's YAML loader (omegaconf/_utils.py:136-181 @v2.3.1)."""
    import yaml

    try:
        with open(path) as f:
            data = yaml.load(f, Loader=omegaconf_yaml.Loader)
    except yaml.YAMLError as e:
        raise Failure("{}.{}".format(type(e).__module__, type(e).__name__), str(e), frames)
    if data is None:
        return {}
    if not isinstance(data, dict):
        harness.emulator_fault("{}: a YAML file whose top level is not a mapping is not emulated".format(path))
    return data


def process_config_with_overrides(run, cfg, config_filepath, cli_overrides, frames):
    """omegaconf_utils.py:105-160"""
    tree = to_omegaconf(cfg)
    ou = os.path.join(run.src, "training", "utils", "omegaconf_utils.py")
    if config_filepath:
        p = Path(config_filepath)
        if not p.exists():
            raise Failure("FileNotFoundError", "Config file not found: {}".format(p),
                          frames + [(ou, 145, "process_config_with_overrides")])
        merge_yaml(tree, load_yaml(run, str(p), frames + [(ou, 147, "process_config_with_overrides")]))
    if cli_overrides:
        try:
            apply_overrides_struct(tree, cli_overrides)
        except HydraError as e:
            raise _overrides_failure(run, e, frames + [(ou, 153, "process_config_with_overrides")])
    apply_back(cfg, tree, Warner())
    return cfg


# ---------------------------------------------------------------- scripts/training/run_recipe.py


DATASET_PRESETS = ["mock", "megatron-indexed", "energon", "squad", "tulu3", "openmathinstruct2",
                   "openmathinstruct2-thinking", "gsm8k", "local-jsonl", "local-vlm", "cord-v2", "llava-video-178k",
                   "medpix", "raven", "rdr"]  # recipes/utils/dataset_utils.py:541-578

STEP_FUNCTIONS = ["audio_lm_step", "dsv4_step", "gpt_step", "llm_step", "vlm_step", "qwen3_omni_step", "qwen3_vl_step",
                  "step37_flickr8k_step", "llava_step", "nemotron_omni_step", "flux_step", "wan_step"]
STEP_MODALITIES = {"audio_lm_step": "audio", "dsv4_step": "text", "gpt_step": "text", "llm_step": "text",
                   "vlm_step": "vlm", "qwen3_omni_step": "omni", "qwen3_vl_step": "vlm", "step37_flickr8k_step": "vlm",
                   "llava_step": "vlm", "nemotron_omni_step": "vlm", "flux_step": "diffusion", "wan_step": "diffusion"}

COMMON_OVERRIDE_FIELDS = (  # run_recipe.py:135-153
    ("max_steps", "train.train_iters"), ("global_batch_size", "train.global_batch_size"),
    ("micro_batch_size", "train.micro_batch_size"), ("seq_length", "dataset.seq_length"),
    ("tensor_model_parallel_size", "model.tensor_model_parallel_size"),
    ("pipeline_model_parallel_size", "model.pipeline_model_parallel_size"),
    ("context_parallel_size", "model.context_parallel_size"),
    ("virtual_pipeline_model_parallel_size", "model.virtual_pipeline_model_parallel_size"),
    ("expert_model_parallel_size", "model.expert_model_parallel_size"),
    ("expert_tensor_parallel_size", "model.expert_tensor_parallel_size"), ("lr", "optimizer.lr"),
    ("min_lr", "optimizer.min_lr"), ("warmup_iters", "scheduler.lr_warmup_iters"),
    ("pretrained_checkpoint", "checkpoint.pretrained_checkpoint"), ("save_dir", "checkpoint.save"),
    ("load_dir", "checkpoint.load"), ("save_interval", "checkpoint.save_interval"),
)

RUN_RECIPE_DOC = """Run a Megatron Bridge recipe in an existing distributed environment.

Select either a model name with --model or a complete recipe function with
--recipe. The launcher discovers complete library and benchmark recipes
by their exported function name. It accepts one training mode, a direct dataset
name, runner controls, common convenience arguments, and trailing KEY=VALUE
ConfigContainer overrides. Slurm resources, containers, mounts, and environment
forwarding are owned by setup_experiment.py.

Common ConfigContainer overrides
--------------------------------
The convenience options on the left are converted to the ConfigContainer
overrides on the right. This command accepts both forms. When both forms set
the same field, the trailing KEY=VALUE override takes precedence.

Training:
  -ms, --max_steps STEPS                 train.train_iters=STEPS
  -gb, --global_batch_size SIZE          train.global_batch_size=SIZE
  -mb, --micro_batch_size SIZE           train.micro_batch_size=SIZE

Sequence length:
  -sl, --seq_length LENGTH               dataset.seq_length=LENGTH

The selected dataset owns the sequence length. After overrides are applied,
the runner synchronizes model.seq_length from the dataset field.

Parallelism:
  -tp, --tensor_model_parallel_size N    model.tensor_model_parallel_size=N
  -pp, --pipeline_model_parallel_size N  model.pipeline_model_parallel_size=N
  -cp, --context_parallel_size N         model.context_parallel_size=N
  -vp, --virtual_pipeline_model_parallel_size N
                                           model.virtual_pipeline_model_parallel_size=N
  -ep, --expert_model_parallel_size N    model.expert_model_parallel_size=N
  -etp, --expert_tensor_parallel_size N  model.expert_tensor_parallel_size=N

Optimization:
  --lr VALUE                             optimizer.lr=VALUE
  --min_lr VALUE                         optimizer.min_lr=VALUE
  --warmup_iters STEPS                   scheduler.lr_warmup_iters=STEPS

Checkpointing:
  --pretrained_checkpoint PATH           checkpoint.pretrained_checkpoint=PATH
  --save_dir PATH                        checkpoint.save=PATH
  --load_dir PATH                        checkpoint.load=PATH
  --save_interval STEPS                  checkpoint.save_interval=STEPS

For example:
  run_recipe.py --model gpt_oss_20b --mode pretrain --dataset mock \\
    -sl 8192 -mb 1 -tp 2 model.sequence_parallel=true

  run_recipe.py \\
    --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --mode pretrain
"""


def _run_recipe_parser():
    """run_recipe.py:156-260"""
    import argparse

    class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
        """Preserve the override table while retaining argparse default annotations."""

    parser = argparse.ArgumentParser(description=RUN_RECIPE_DOC, formatter_class=HelpFormatter, allow_abbrev=False)
    selection = parser.add_argument_group("Selection")
    group = selection.add_mutually_exclusive_group(required=True)
    group.add_argument("--model", help="Model recipe stem, for example gpt_oss_20b.")
    group.add_argument("--recipe", help="Complete recipe function name.")
    selection.add_argument("--mode", choices=["pretrain", "sft", "lora", "dora"],
                           help="Training mode; inferred from a conventional --recipe name when omitted.")
    selection.add_argument("--step-func", "--step_func", dest="step_func",
                           help="Forward-step registry name; defaults to the selected recipe's registered modality step.")
    data = parser.add_argument_group("Data")
    data.add_argument("--dataset", choices=sorted(DATASET_PRESETS), help="Dataset config preset or local source selector.")
    t = parser.add_argument_group("Common training overrides")
    t.add_argument("-ms", "--max_steps", type=int, metavar="STEPS", help="Set train.train_iters.")
    t.add_argument("-gb", "--global_batch_size", type=int, metavar="SIZE", help="Set train.global_batch_size.")
    t.add_argument("-mb", "--micro_batch_size", type=int, metavar="SIZE", help="Set train.micro_batch_size.")
    s = parser.add_argument_group("Sequence length override")
    s.add_argument("-sl", "--seq_length", type=int, metavar="LENGTH", help="Set dataset.seq_length and synchronize the model.")
    p = parser.add_argument_group("Common parallelism overrides")
    for short, long_, field in (("-tp", "--tensor_model_parallel_size", "tensor_model_parallel_size"),
                                ("-pp", "--pipeline_model_parallel_size", "pipeline_model_parallel_size"),
                                ("-cp", "--context_parallel_size", "context_parallel_size"),
                                ("-vp", "--virtual_pipeline_model_parallel_size", "virtual_pipeline_model_parallel_size"),
                                ("-ep", "--expert_model_parallel_size", "expert_model_parallel_size"),
                                ("-etp", "--expert_tensor_parallel_size", "expert_tensor_parallel_size")):
        p.add_argument(short, long_, type=int, metavar="N", help="Set model.{}.".format(field))
    o = parser.add_argument_group("Common optimization overrides")
    o.add_argument("--lr", type=float, metavar="VALUE", help="Set optimizer.lr.")
    o.add_argument("--min_lr", type=float, metavar="VALUE", help="Set optimizer.min_lr.")
    o.add_argument("--warmup_iters", type=int, metavar="STEPS", help="Set scheduler.lr_warmup_iters.")
    c = parser.add_argument_group("Common checkpoint overrides")
    c.add_argument("--pretrained_checkpoint", metavar="PATH", help="Set checkpoint.pretrained_checkpoint.")
    c.add_argument("--save_dir", metavar="PATH", help="Set checkpoint.save.")
    c.add_argument("--load_dir", metavar="PATH", help="Set checkpoint.load.")
    c.add_argument("--save_interval", type=int, metavar="STEPS", help="Set checkpoint.save_interval.")
    r = parser.add_argument_group("Runtime")
    r.add_argument("--dry-run", "--dry_run", action="store_true", dest="dryrun")
    r.add_argument("--deterministic", action="store_true")
    r.add_argument("--dump-env", "--dump_env", action="store_true", dest="dump_env")
    return parser


def infer_recipe_mode(name):
    """recipe_metadata.py:214-225"""
    normalized = "_{}_".format(name.lower().strip("_"))
    if "_pretrain_" in normalized:
        return "pretrain"
    if "_sft_" in normalized or "_finetune_" in normalized:
        return "sft"
    if "_dora_" in normalized:
        return "dora"
    if "_peft_" in normalized or "_lora_" in normalized:
        return "lora"
    return None


def recipe_task(mode):
    return "peft" if mode in ("lora", "dora") else mode


_BENCH_FAMILIES = (("qwen3_vl_", "qwen_vl"), ("qwen35_vl_", "qwen_vl"), ("deepseek_", "deepseek"),
                   ("gpt_oss_", "gpt_oss"), ("nemotron", "nemotronh"), ("llama", "llama"), ("qwen", "qwen"),
                   ("kimi_", "kimi"), ("glm5", "glm_moe_dsa"), ("wan_", "wan"))


def benchmark_metadata(name):
    """recipe_metadata.py:40-45,115-179"""
    import re
    m = re.search(r"_(?P<task>pretrain|sft|peft)_(?P<num_gpus>[1-9][0-9]*)gpu_(?P<hardware>[a-z0-9]+)_"
                  r"(?P<precision>bf16|fp8cs|fp8ds|fp8mx|fp8sc|nvfp4)(?:_[a-z0-9_]+)?_config$", name)
    if m is None or not any(name.startswith(p) for p, _ in _BENCH_FAMILIES) or name not in BENCHMARK_RECIPES:
        return None
    return {"task": m.group("task"), "num_gpus": int(m.group("num_gpus"))}


def recipe_step(name):
    """recipe_metadata.py:74-100,182-199"""
    fixed = {"qwen3_vl_8b_peft_1gpu_h100_bf16_energon_config": "vlm_step", "qwen3_vl_8b_peft_energon_config": "vlm_step"}
    if name in fixed:
        return fixed[name]
    for prefix, step in (("nemotron_nano_v2_vl_", "llava_step"), ("nemotron_omni_", "nemotron_omni_step"),
                         ("qwen2_audio_", "audio_lm_step"), ("qwen3_omni_", "qwen3_omni_step"),
                         ("qwen3_vl_", "qwen3_vl_step"), ("qwen35_vl_", "qwen3_vl_step"),
                         ("step37_", "step37_flickr8k_step"), ("gemma3_vl_", "vlm_step"), ("gemma4_vl_", "vlm_step"),
                         ("glm_45v_", "vlm_step"), ("kimi_k25_vl_", "vlm_step"), ("ministral3_", "vlm_step"),
                         ("qwen25_vl_", "vlm_step"), ("flux_", "flux_step"), ("wan_", "wan_step")):
        if name.startswith(prefix):
            return step
    return "llm_step"


def _dataset_preset(run, cfg, name, frames):
    """build_dataset_config (recipes/utils/dataset_utils.py:581-600) for the text presets."""
    model = cfg.get("model")
    seq = model.get("seq_length") if model is not None and model.has("seq_length") else None
    seq = int(seq) if isinstance(seq, int) else 4096
    if name in ("mock", "megatron-indexed"):
        return Obj("MockGPTDatasetConfig" if name == "mock" else "GPTDatasetConfig", seq_length=seq, random_seed=1234,
                   reset_attention_mask=False, reset_position_ids=False, eod_mask_loss=False,
                   num_dataset_builder_threads=1, blend=None, blend_per_split=None, split="9999,8,2",
                   data_sharding=True, dataloader_type="single", skip_getting_attention_mask_from_dataset=True)
    if name in ("squad", "tulu3", "openmathinstruct2", "openmathinstruct2-thinking", "gsm8k"):
        ds = _squad(seq, False)
        return ds
    if name == "local-jsonl":
        return Obj("GPTSFTDatasetConfig", seq_length=seq, dataset_root=None, dataloader_type="batch", seed=5678)
    if name == "energon":
        raise Failure("ValueError", "energon requires a recipe using EnergonDatasetConfig or exposing "
                      "dataset.hf_processor_path.", frames)
    raise Failure("ValueError", "{} requires a recipe using DirectHFSFTDatasetConfig.".format(name), frames)


def run_recipe_main(argv):
    """scripts/training/run_recipe.py:455-530"""
    script = _script()
    root = str(script.parent.parents[1])
    os.chdir(root)
    _sleep(IMPORT_S)
    rr = os.path.join(root, "scripts", "training", "recipe_runner.py")
    s = str(script)
    run = Run(s, root, [(s, 534, "<module>")])
    parser = _run_recipe_parser()
    args, unknown = parser.parse_known_args(argv)
    trailing = []
    for value in unknown:  # _collect_overrides (run_recipe.py:263-272)
        if value.startswith("-"):
            parser.error("Unknown option: {}".format(value))
        if "=" not in value:
            parser.error("Expected override in KEY=VALUE form, got {!r}".format(value))
        trailing.append(value)
    overrides = []
    for arg, field in COMMON_OVERRIDE_FIELDS:
        value = getattr(args, arg)
        if value is not None:
            overrides.append("{}={}".format(field, json.dumps(value) if isinstance(value, str) else str(value)))
    overrides += trailing
    main = [(s, 462, "main")]
    if args.mode is None and args.recipe:
        args.mode = infer_recipe_mode(args.recipe)
    if args.mode is None:
        run.die(Failure("ValueError", "Unable to infer training mode; pass --mode or use a conventional --recipe name.",
                        main + [(s, 451, "parse_args"), (s, 297, "_infer_mode")]))
    name = args.recipe or "{}_{}_config".format(args.model, recipe_task(args.mode))
    bench = benchmark_metadata(name)
    if bench is not None:
        frames = [(s, 467, "main"), (os.path.join(root, "scripts", "training", "recipe_metadata.py"), 238,
                                     "validate_benchmark_recipe_scope")]
        if recipe_task(args.mode) != bench["task"]:
            run.die(Failure("ValueError", "Mode '{}' is incompatible with benchmark task '{}'.".format(
                args.mode, bench["task"]), frames))
        if bench["task"] == "peft" and args.mode != "lora":
            run.die(Failure("ValueError", "Benchmark PEFT recipes are fixed LoRA configs; omit --mode or pass --mode lora.",
                            frames))
        expected = recipe_step(name)
        if args.step_func is not None and not (args.step_func.lower() == expected or
                                               {args.step_func.lower(), expected} <= {"dsv4_step", "gpt_step", "llm_step"}):
            run.die(Failure("ValueError", "Benchmark recipe '{}' uses the canonical {} forward step; omit --step-func or "
                            "pass {}.".format(name, expected, expected), frames))
        if args.dataset is not None:
            run.die(Failure("ValueError", "Benchmark recipes own their canonical dataset; omit --dataset or continue using "
                            "scripts/performance for non-canonical benchmark data.", frames))
        harness.emulator_fault("benchmark recipe '{}' (megatron.bridge.perf_recipes): its values are not tabulated in "
                               "this emulator".format(name))
    load = [(s, 474, "main"), (s, 429, "_load_selected_recipe")]
    if args.recipe:
        recipe_mode = infer_recipe_mode(name)
        if recipe_mode is not None and recipe_task(recipe_mode) != recipe_task(args.mode):
            run.die(Failure("ValueError", "Mode '{}' is incompatible with recipe '{}'.".format(args.mode, name),
                            [(s, 474, "main"), (s, 428, "_load_selected_recipe"), (s, 304, "_validate_recipe_mode")]))
    if name not in LIBRARY_RECIPES:
        run.die(Failure("AttributeError", "Recipe '{}' not found in megatron.bridge.recipes or "
                        "megatron.bridge.perf_recipes.".format(name), load + [(rr, 257, "load_recipe")]))
    run.log("INFO", "recipe_runner", "Loading library recipe '{}' from megatron.bridge.recipes".format(name))
    canonical = RECIPE_ALIASES.get(name, name)
    if canonical not in RECIPES:
        harness.emulator_fault("recipe '{}' exists in Megatron-Bridge {} but its values are not tabulated in this "
                               "emulator".format(name, COMMIT[:7]))
    builder, takes_scheme = RECIPES[canonical]
    peft_scheme = args.mode if args.mode in ("lora", "dora") else None
    if peft_scheme is not None and not takes_scheme and peft_scheme != "lora":
        run.die(Failure("ValueError", "Recipe '{}' does not accept a configurable PEFT scheme; --mode {} is "
                        "unsupported.".format(canonical, peft_scheme), load + [(rr, 140, "_recipe_kwargs_for_signature")]))
    _sleep(RECIPE_BUILD_S)
    cfg = builder(peft_scheme) if (takes_scheme and peft_scheme) else builder()
    train_mode = "pretrain" if args.mode == "pretrain" else "finetune"
    if args.dataset is not None:
        frames = [(s, 477, "main"), (s, 437, "_apply_dataset")]
        try:
            cfg.set("dataset", _dataset_preset(run, cfg, args.dataset, frames))
        except Failure as f:
            run.die(f)
        required = "pretrain" if cfg.get("dataset").cls in ("GPTDatasetConfig", "MockGPTDatasetConfig") else "finetune"
        if required != train_mode:
            run.die(Failure("ValueError", "Mode '{}' is incompatible with dataset '{}'.".format(args.mode, args.dataset),
                            [(s, 477, "main"), (s, 441, "_apply_dataset")]))
    if args.deterministic:  # recipes/utils/determinism_utils.py
        cfg.get("model").set("deterministic_mode", True)
        cfg.get("model").set("cross_entropy_loss_fusion", False)
        cfg.get("env_vars").update({"CUBLAS_WORKSPACE_CONFIG": ":4096:8", "NCCL_ALGO": "Ring",
                                    "NVTE_ALLOW_NONDETERMINISTIC_ALGO": 0})
    try:
        process_config_with_overrides(run, cfg, None, overrides or None,
                                      [(s, 484, "main"), (rr, 297, "apply_cli_overrides")])
    except Failure as f:
        run.die(f)
    for k, v in (cfg.get("env_vars") or {}).items():  # apply_runtime_environment (recipe_runner.py:306-312)
        os.environ.setdefault(str(k), str(v))
    ds, model = cfg.get("dataset"), cfg.get("model")
    lay = layout_of(cfg)
    if train_mode == "finetune" and isinstance(ds, Obj) and ds.cls == "GPTSFTDatasetConfig":
        cps = {lay["cp"]}
        ecp = _sec(cfg, "dist").get("eval_context_parallel_size")
        if ecp is not None:
            cps.add(ecp)
        if any(x > 1 for x in cps):  # sync_finetuning_cp_invariants (recipe_runner.py:350-370)
            model.set("calculate_per_token_loss", True)
            _sec(cfg, "ddp").set("average_in_collective", False)
    if isinstance(ds, Obj) and ds.get("enable_offline_packing"):  # sync_offline_packing_alignment
        specs = ds.get("offline_packing_specs")
        if not isinstance(specs, Obj):
            specs = Obj("PackedSequenceSpecs", **(specs or {}))
            ds.set("offline_packing_specs", specs)
        if ds.get("seq_length") is not None:
            specs.set("packed_sequence_size", ds.get("seq_length"))
    if isinstance(ds, Obj) and model is not None and model.has("seq_length"):  # sync_model_dataset_sequence_length
        seq = ds.get("seq_length")
        if seq is not None and model.get("seq_length") != seq:
            model.set("seq_length", seq)
    step_name = args.step_func or recipe_step(name)
    if step_name.lower() not in STEP_FUNCTIONS:
        run.die(Failure("ValueError", "Unknown step type: {}. Choose from: {}".format(step_name, ", ".join(STEP_FUNCTIONS)),
                        [(s, 522, "main"), (rr, 273, "load_forward_step")]))
    if args.dump_env:
        _dump_env(run)
    if args.dryrun:  # run_config (recipe_runner.py:516-534)
        path = _sec(cfg, "logger").get("save_config_filepath") or "ConfigContainer.yaml"
        _write_yaml(str(path), to_plain(cfg))
        run.log("INFO", "recipe_runner", "ConfigContainer saved to: {}".format(os.path.abspath(str(path))))
        return 0
    if run.w.rank == 0:
        run.log("INFO", "recipe_runner", "Final configuration:")
    run.entry_frames = [(s, 534, "<module>"), (s, 523, "main"), (rr, 541, "run_config"),
                        (os.path.join(run.src, "utils", "decorators.py"), 39, "wrapper")]
    Trainer(run, cfg, train_mode).main((rr, 541, "train_func(config=config, forward_step_func=step_func)"))
    return 0


def _dump_env(run):
    """dump_env_rank0 (recipe_runner.py:92-109)"""
    if os.environ.get("SLURM_JOB_ID") is None or int(os.environ.get("SLURM_PROCID", "-1")) != 0:
        return
    path = "/nemo_run/env_{}.log".format(os.environ["SLURM_JOB_ID"])
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            import re
            sensitive = re.compile(r"(^|_)(TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|ACCESS_KEY|SECRET_KEY|PRIVATE_KEY|"
                                   r"AUTHORIZATION)(_|$)", re.IGNORECASE)
            for key, value in sorted(os.environ.items()):
                if sensitive.search(key):
                    f.write("{}=[REDACTED]\n".format(key))
                else:
                    f.write("{}={}\n".format(key, value.replace("\r", "\\r").replace("\n", "\\n")))
        run.log("INFO", "recipe_runner", "Environment dump written to {} (mode 600)".format(path))
    except OSError as error:
        run.log("WARNING", "recipe_runner", "Failed to write environment dump to {}: {}".format(path, error))


# ---------------------------------------------------------------- tutorials/recipes/llama


def _tutorial():
    script = _script()
    root = str(script.parent.parents[2])
    s = str(script)
    return script, s, root


def _finish_tutorial(run, cfg, mode, caller_line, caller_source, entry_line, main_line):
    s = run.script
    run.entry_frames = [(s, entry_line, "<module>"), (s, main_line, "main"),
                        (os.path.join(run.src, "utils", "decorators.py"), 39, "wrapper")]
    Trainer(run, cfg, mode).main((s, caller_line, caller_source))
    return 0


def quickstart_pretrain_main(argv):
    """tutorials/recipes/llama/00_quickstart_pretrain.py: no argparse (its argv is ignored)."""
    script, s, root = _tutorial()
    _sleep(IMPORT_S)
    run = Run(s, root, [(s, 65, "<module>")])
    _sleep(RECIPE_BUILD_S)
    cfg = llama32_1b_pretrain()
    cfg.get("train").set("train_iters", 10)
    cfg.get("scheduler").set("lr_warmup_iters", 2)
    return _finish_tutorial(run, cfg, "pretrain", 61, "pretrain(config=config, forward_step_func=forward_step)", 65, 61)


def quickstart_finetune_main(argv):
    """tutorials/recipes/llama/01_quickstart_finetune.py:52-118"""
    import argparse
    script, s, root = _tutorial()
    _sleep(IMPORT_S)
    parser = argparse.ArgumentParser(description="Finetune Llama 3.2 1B with LoRA",
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--pretrained-checkpoint", type=str, required=True,
                        help="Path to pretrained checkpoint in Megatron format")
    args = parser.parse_args(argv)
    run = Run(s, root, [(s, 122, "<module>")])
    _sleep(RECIPE_BUILD_S)
    cfg = llama32_1b_peft("lora")
    cfg.get("checkpoint").set("pretrained_checkpoint", args.pretrained_checkpoint)
    cfg.get("train").set("train_iters", 10)
    cfg.get("scheduler").set("lr_warmup_iters", 2)
    return _finish_tutorial(run, cfg, "finetune", 118, "finetune(config=config, forward_step_func=forward_step)", 122, 118)


def pretrain_with_yaml_main(argv):
    """tutorials/recipes/llama/02_pretrain_with_yaml.py:63-101"""
    import argparse
    script, s, root = _tutorial()
    _sleep(IMPORT_S)
    default = script.parent / "conf" / "llama32_1b_pretrain.yaml"
    parser = argparse.ArgumentParser(description="Pretrain with YAML configuration and CLI overrides",
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--config-file", type=str, default=str(default),
                        help="Path to YAML config file. Default: {}".format(default))
    parser.add_argument("--debug", action="store_true", help="Enable debug logging")
    args, cli_overrides = parser.parse_known_args(argv)
    run = Run(s, root, [(s, 105, "<module>")])
    _sleep(RECIPE_BUILD_S)
    cfg = llama32_1b_pretrain()
    try:
        process_config_with_overrides(run, cfg, args.config_file, cli_overrides or None, [(s, 94, "main")])
    except Failure as f:
        run.die(f)
    return _finish_tutorial(run, cfg, "pretrain", 101, "pretrain(config=config, forward_step_func=forward_step)", 105, 101)


def finetune_with_yaml_main(argv):
    """tutorials/recipes/llama/03_finetune_with_yaml.py:69-118"""
    import argparse
    script, s, root = _tutorial()
    _sleep(IMPORT_S)
    default = script.parent / "conf" / "llama32_1b_finetune.yaml"
    parser = argparse.ArgumentParser(description="Finetune with YAML configuration and CLI overrides",
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--config-file", type=str, default=None,
                        help="Path to YAML config file (optional). Default: {}".format(default))
    parser.add_argument("--peft", type=str, default="lora", choices=["lora", "dora", "none"],
                        help="PEFT method to use. Use 'none' for full finetuning.")
    parser.add_argument("--debug", action="store_true", help="Enable debug logging")
    args, cli_overrides = parser.parse_known_args(argv)
    run = Run(s, root, [(s, 122, "<module>")])
    _sleep(RECIPE_BUILD_S)
    cfg = llama32_1b_sft() if args.peft == "none" else llama32_1b_peft(args.peft)
    try:
        process_config_with_overrides(run, cfg, args.config_file, cli_overrides or None, [(s, 111, "main")])
    except Failure as f:
        run.die(f)
    return _finish_tutorial(run, cfg, "finetune", 118, "finetune(config=config, forward_step_func=forward_step)", 122, 118)


# ---------------------------------------------------------------- examples/quantization, examples/models/qwen/qwen3_next


def _has_modelopt_state(path):
    """post_training/checkpointing.py:72-144: a modelopt_state folder in the selected
    iteration directory (its contents are not read: assumed nontrivial)."""
    if not path or not os.path.isdir(str(path)):
        return os.path.isdir(os.path.join(str(path or ""), "modelopt_state"))
    path = str(path)
    if is_iteration_dir(path):
        target = path
    else:
        state = _read_state(os.path.join(path, "latest_train_state.pt"))
        legacy = os.path.join(path, "latest_checkpointed_iteration.txt")
        if state is not None:
            target = os.path.join(path, "iter_{:07d}".format(int(state.get("step", 0))))
        elif os.path.isfile(legacy):
            with open(legacy) as f:
                text = f.read().strip()
            target = os.path.join(path, "release" if text == "release" else "iter_{:07d}".format(int(text)))
        else:
            iters = sorted(d for d in os.listdir(path) if d.startswith("iter_"))
            target = os.path.join(path, iters[-1]) if iters else path
    return os.path.isdir(os.path.join(target, "modelopt_state"))


def _example(run, cfg, args, cli_overrides, frames_main, check_modelopt):
    """The inline merge of both examples: YAML (OmegaConf.merge), Hydra overrides,
    apply_overrides (pretrain_quantized_llama3_8b.py:167-206, finetune_qwen3_next_80b_a3b.py:138-161)."""
    tree = to_omegaconf(cfg)
    if args.config_file:
        if not os.path.exists(args.config_file):
            run.log("ERROR", "__main__", "Override YAML file not found: {}".format(args.config_file))
            sys.exit(1)
        try:
            merge_yaml(tree, load_yaml(run, args.config_file, frames_main))
        except Failure as f:
            run.die(f)
    if cli_overrides:
        try:
            apply_overrides_struct(tree, cli_overrides)
        except HydraError as e:
            run.die(_overrides_failure(run, e, frames_main))
    apply_back(cfg, tree, Warner())
    if check_modelopt:
        ck = cfg.get("checkpoint")
        target = ck.get("pretrained_checkpoint") or ck.get("load")
        if target and _has_modelopt_state(target):
            cfg.get("model").set("restore_modelopt_state", True)
    if run.w.rank == 0:
        run.log("INFO", "__main__", "--- Final Merged Configuration ---")
        run.log("INFO", "__main__", "-" * 34)


def quantized_pretrain_main(argv):
    """examples/quantization/pretrain_quantized_llama3_8b.py:93-213"""
    import argparse
    script = _script()
    s, root = str(script), str(script.parent.parents[1])
    _sleep(IMPORT_S)
    parser = argparse.ArgumentParser(
        description="Pretrain Llama3 8B model using Megatron-Bridge with YAML and CLI overrides",
        formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--config-file", type=str,
                        default=str(script.parent / "conf" / "quantized_llama3_8b_pretrain_override_example.yaml"),
                        help="Path to the YAML OmegaConf override file. Default: conf/llama3_8b_pretrain_override_example.yaml")
    parser.add_argument("--hf-path", type=str, default=None,
                        help="HuggingFace model path or local directory (overrides the default recipe hf_path)")
    parser.add_argument("--debug", action="store_true", help="Enable debug logging")
    args, cli_overrides = parser.parse_known_args(argv)
    run = Run(s, root, [(s, 217, "<module>")])
    run.log("INFO", "__main__", "Megatron-Bridge Llama3 8B Pretraining Script with YAML & CLI Overrides")
    run.log("INFO", "__main__", "-" * 66)
    _sleep(RECIPE_BUILD_S)
    cfg = llama3_8b_pretrain()
    run.log("INFO", "__main__", "Loaded base configuration")
    if args.hf_path:
        run.log("INFO", "__main__", "Using custom HuggingFace path: {}".format(args.hf_path))
        model = gpt_model_provider(gradient_accumulation_fusion=True)
        model.extra_hf = args.hf_path
        model.f["seq_length"] = UNSET  # from the HF config's max_position_embeddings
        cfg.set("model", model)
    _example(run, cfg, args, cli_overrides, [(s, 187, "main")], check_modelopt=True)
    run.entry_frames = [(s, 217, "<module>"), (s, 210, "main"),
                        (os.path.join(run.src, "utils", "decorators.py"), 39, "wrapper")]
    Trainer(run, cfg, "pretrain").main((s, 210, "pretrain(config=cfg, forward_step_func=forward_step)"))
    return 0


def qwen3_next_finetune_main(argv):
    """examples/models/qwen/qwen3_next/finetune_qwen3_next_80b_a3b.py:85-163"""
    import argparse
    script = _script()
    s, root = str(script), str(script.parent.parents[3])
    _sleep(IMPORT_S)
    parser = argparse.ArgumentParser(description="Finetune Qwen2.5-VL with YAML and CLI overrides",
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--config-file", type=str,
                        default=str(script.parent / "conf" / "qwen3_next_80b_a3b_finetune_override_example.yaml"),
                        help="Path to the YAML OmegaConf override file. Default: conf/qwen25_vl_pretrain_override_example.yaml")
    parser.add_argument("--data-path", type=str, default=None,
                        help="Path to JSON/JSONL dataset (preloaded conversation or legacy messages format).")
    parser.add_argument("--pretrained-checkpoint", type=str, default=None,
                        help=("Path to imported Megatron checkpoint directory to load before finetuning. "
                              "Generate it with scripts/import_hf_ckpt.py."))
    parser.add_argument("--debug", action="store_true", help="Enable debug logging")
    args, cli_overrides = parser.parse_known_args(argv)
    run = Run(s, root, [(s, 167, "<module>")])
    run.log("INFO", "__main__", "Megatron-Bridge Qwen3-Next 80B-A3B Finetuning Script with YAML & CLI Overrides")
    run.log("INFO", "__main__", "-" * 71)
    _sleep(RECIPE_BUILD_S)
    cfg = qwen3_next_80b_a3b_sft()
    if args.pretrained_checkpoint is not None:
        cfg.get("checkpoint").set("pretrained_checkpoint", args.pretrained_checkpoint)
    if args.data_path is not None:
        ds = cfg.get("dataset")
        for k, v in (("dataset_root", None), ("hf_dataset", {"path_or_dataset": "json",
                                                             "load_kwargs": {"data_files": args.data_path}}),
                     ("hf_validation_dataset", None), ("hf_test_dataset", None)):
            ds.set(k, v)
    run.log("INFO", "__main__", "Loaded base configuration")
    _example(run, cfg, args, cli_overrides, [(s, 153, "main")], check_modelopt=False)
    run.entry_frames = [(s, 167, "<module>"), (s, 163, "main"),
                        (os.path.join(run.src, "utils", "decorators.py"), 39, "wrapper")]
    Trainer(run, cfg, "pretrain").main((s, 163, "pretrain(config=cfg, forward_step_func=forward_step)"))
    return 0


# ---------------------------------------------------------------- tables (read from the source at the commit)

# Names exported by megatron.bridge.recipes (its __all__ lists; recipe_runner.find_library_recipe)
LIBRARY_RECIPES = frozenset("""
deepseek_v2_lite_pretrain_8gpu_h100_bf16_config deepseek_v2_lite_pretrain_config
deepseek_v2_pretrain_128gpu_h100_bf16_config deepseek_v2_pretrain_config
deepseek_v3_pretrain_1024gpu_h100_bf16_config deepseek_v3_pretrain_256gpu_h100_bf16_32nodes_config
deepseek_v3_pretrain_config deepseek_v4_flash_no_mtp_sft_32gpu_h100_bf16_config deepseek_v4_flash_no_mtp_sft_config
deepseek_v4_flash_pretrain_32gpu_h100_bf16_config deepseek_v4_flash_pretrain_32gpu_h100_bf16_muon_config
deepseek_v4_flash_pretrain_32gpu_h100_fp8mx_config deepseek_v4_flash_pretrain_64gpu_gb200_bf16_config
deepseek_v4_flash_pretrain_64gpu_gb200_bf16_muon_config deepseek_v4_flash_pretrain_64gpu_gb200_fp8mx_config
deepseek_v4_flash_pretrain_config deepseek_v4_flash_pretrain_gb200_config deepseek_v4_flash_pretrain_muon_config
deepseek_v4_flash_pretrain_muon_gb200_config deepseek_v4_flash_pretrain_mxfp8_config
deepseek_v4_flash_pretrain_mxfp8_gb200_config deepseek_v4_flash_sft_32gpu_h100_bf16_config
deepseek_v4_flash_sft_config deepseek_v4_flash_sft_openmath_thinking_packed_config
deepseek_v4_pro_pretrain_32gpu_gb300_bf16_config deepseek_v4_pro_pretrain_32gpu_gb300_fp8mx_config
deepseek_v4_pro_pretrain_config deepseek_v4_pro_pretrain_mxfp8_config exaone45_vl_33b_peft_4gpu_h100_bf16_config
exaone45_vl_33b_peft_config exaone45_vl_33b_sft_16gpu_h100_bf16_config exaone45_vl_33b_sft_config
exaone4_1p2b_peft_1gpu_h100_bf16_config exaone4_1p2b_peft_config exaone4_1p2b_pretrain_1gpu_h100_bf16_config
exaone4_1p2b_pretrain_config exaone4_1p2b_sft_1gpu_h100_bf16_config exaone4_1p2b_sft_config
exaone_moe_236b_a23b_peft_16gpu_h100_bf16_config exaone_moe_236b_a23b_peft_config
exaone_moe_236b_a23b_pretrain_64gpu_h100_bf16_config exaone_moe_236b_a23b_pretrain_config
exaone_moe_236b_a23b_sft_64gpu_h100_bf16_config exaone_moe_236b_a23b_sft_config
exaone_moe_2_0_750b_a37_peft_128gpu_h100_bf16_config exaone_moe_2_0_750b_a37_peft_config
exaone_moe_2_0_750b_a37_pretrain_512gpu_h100_bf16_config exaone_moe_2_0_750b_a37_pretrain_config
exaone_moe_2_0_750b_a37_sft_512gpu_h100_bf16_config exaone_moe_2_0_750b_a37_sft_config exaone_moe_peft_config
exaone_moe_pretrain_config exaone_moe_sft_config flux_12b_pretrain_2gpu_h100_bf16_config flux_12b_pretrain_config
flux_12b_sft_2gpu_h100_bf16_config flux_12b_sft_config gemma2_27b_peft_4gpu_h100_bf16_config gemma2_27b_peft_config
gemma2_27b_pretrain_16gpu_h100_bf16_config gemma2_27b_pretrain_config gemma2_27b_sft_16gpu_h100_bf16_config
gemma2_27b_sft_config gemma2_2b_peft_1gpu_h100_bf16_config gemma2_2b_peft_config
gemma2_2b_pretrain_2gpu_h100_bf16_config gemma2_2b_pretrain_config gemma2_2b_sft_1gpu_h100_bf16_config
gemma2_2b_sft_config gemma2_9b_peft_1gpu_h100_bf16_config gemma2_9b_peft_config
gemma2_9b_pretrain_8gpu_h100_bf16_config gemma2_9b_pretrain_config gemma2_9b_sft_4gpu_h100_bf16_config
gemma2_9b_sft_config gemma3_1b_peft_1gpu_h100_bf16_config gemma3_1b_peft_config
gemma3_1b_pretrain_1gpu_h100_bf16_config gemma3_1b_pretrain_config gemma3_1b_sft_1gpu_h100_bf16_config
gemma3_1b_sft_config gemma3_vl_12b_peft_1gpu_h100_bf16_config gemma3_vl_12b_peft_config
gemma3_vl_12b_sft_4gpu_h100_bf16_config gemma3_vl_12b_sft_config gemma3_vl_27b_peft_4gpu_h100_bf16_config
gemma3_vl_27b_peft_config gemma3_vl_27b_sft_16gpu_h100_bf16_config gemma3_vl_27b_sft_config
gemma3_vl_4b_peft_1gpu_h100_bf16_config gemma3_vl_4b_peft_config gemma3_vl_4b_sft_1gpu_h100_bf16_config
gemma3_vl_4b_sft_config gemma4_e4b_pretrain_2gpu_h100_bf16_config gemma4_e4b_pretrain_config
gemma4_vl_26b_peft_4gpu_h100_bf16_config gemma4_vl_26b_peft_config gemma4_vl_26b_sft_8gpu_h100_bf16_config
gemma4_vl_26b_sft_config glm45_355b_peft_16gpu_h100_bf16_config glm45_355b_peft_config
glm45_355b_pretrain_128gpu_h100_bf16_config glm45_355b_pretrain_config glm45_355b_sft_128gpu_h100_bf16_config
glm45_355b_sft_config glm45_air_106b_peft_8gpu_h100_bf16_config glm45_air_106b_peft_config
glm45_air_106b_pretrain_32gpu_h100_bf16_config glm45_air_106b_pretrain_config
glm45_air_106b_sft_32gpu_h100_bf16_config glm45_air_106b_sft_config glm52_peft_192gpu_gb200_bf16_config
glm52_peft_208gpu_h100_bf16_config glm52_pretrain_192gpu_gb200_bf16_config glm52_pretrain_416gpu_h100_bf16_config
glm52_sft_192gpu_gb200_bf16_128k_config glm52_sft_192gpu_gb200_bf16_config glm52_sft_416gpu_h100_bf16_config
glm52_sft_608gpu_h100_bf16_200k_config glm_45v_peft_32gpu_h100_bf16_config glm_45v_peft_config
glm_45v_sft_128gpu_h100_bf16_config glm_45v_sft_config gpt3_175b_pretrain_32gpu_h100_bf16_config
gpt_oss_120b_peft_8gpu_h100_bf16_config gpt_oss_120b_peft_config gpt_oss_120b_pretrain_64gpu_h100_bf16_config
gpt_oss_120b_pretrain_config gpt_oss_120b_sft_32gpu_h100_bf16_config gpt_oss_120b_sft_32k_config
gpt_oss_120b_sft_48gpu_h100_bf16_32k_config gpt_oss_120b_sft_config gpt_oss_20b_peft_1gpu_h100_bf16_config
gpt_oss_20b_peft_1gpu_h100_fp8cs_config gpt_oss_20b_peft_1gpu_h100_fp8mx_config gpt_oss_20b_peft_config
gpt_oss_20b_peft_fp8_current_scaling_config gpt_oss_20b_peft_mxfp8_config
gpt_oss_20b_pretrain_16gpu_h100_bf16_config gpt_oss_20b_pretrain_16gpu_h100_fp8cs_config
gpt_oss_20b_pretrain_16gpu_h100_fp8mx_config gpt_oss_20b_pretrain_config
gpt_oss_20b_pretrain_fp8_current_scaling_config gpt_oss_20b_pretrain_mxfp8_config gpt_oss_20b_sft_32k_config
gpt_oss_20b_sft_8gpu_h100_bf16_32k_config gpt_oss_20b_sft_8gpu_h100_bf16_config
gpt_oss_20b_sft_8gpu_h100_bf16_openmathinstruct2_thinking_packed_config gpt_oss_20b_sft_8gpu_h100_fp8cs_config
gpt_oss_20b_sft_8gpu_h100_fp8mx_config gpt_oss_20b_sft_config gpt_oss_20b_sft_fp8_current_scaling_config
gpt_oss_20b_sft_mxfp8_config gpt_oss_20b_sft_openmathinstruct2_thinking_packed_config
kimi_k25_vl_sft_512gpu_h100_bf16_config kimi_k25_vl_sft_config kimi_k2_pretrain_512gpu_h100_bf16_config
kimi_k2_pretrain_config llama2_7b_pretrain_2gpu_h100_bf16_config llama2_7b_pretrain_config
llama31_405b_peft_32gpu_h100_bf16_config llama31_405b_peft_config llama31_405b_pretrain_256gpu_h100_bf16_config
llama31_405b_pretrain_256gpu_h100_bf16_deterministic_config llama31_405b_pretrain_config
llama31_405b_pretrain_deterministic_config llama31_405b_sft_128gpu_h100_bf16_config llama31_405b_sft_config
llama31_70b_peft_8gpu_h100_bf16_config llama31_70b_peft_config llama31_70b_pretrain_32gpu_h100_bf16_config
llama31_70b_pretrain_config llama31_70b_sft_32gpu_h100_bf16_config llama31_70b_sft_config
llama31_8b_peft_1gpu_h100_bf16_config llama31_8b_peft_config llama31_8b_pretrain_2gpu_h100_bf16_config
llama31_8b_pretrain_config llama31_8b_sft_2gpu_h100_bf16_config llama31_8b_sft_config
llama32_1b_peft_1gpu_h100_bf16_config llama32_1b_peft_config llama32_1b_pretrain_1gpu_h100_bf16_config
llama32_1b_pretrain_config llama32_1b_sft_1gpu_h100_bf16_config llama32_1b_sft_config
llama32_3b_peft_1gpu_h100_bf16_config llama32_3b_peft_config llama32_3b_pretrain_1gpu_h100_bf16_config
llama32_3b_pretrain_config llama32_3b_sft_1gpu_h100_bf16_config llama32_3b_sft_config llama3_70b_16k_pretrain_config
llama3_70b_64k_pretrain_config llama3_70b_peft_8gpu_h100_bf16_config llama3_70b_peft_config
llama3_70b_pretrain_256gpu_h100_bf16_64k_config llama3_70b_pretrain_32gpu_h100_bf16_16k_config
llama3_70b_pretrain_32gpu_h100_bf16_config llama3_70b_pretrain_32gpu_h100_bf16_deterministic_config
llama3_70b_pretrain_config llama3_70b_pretrain_deterministic_config llama3_70b_sft_32gpu_h100_bf16_config
llama3_70b_sft_config llama3_8b_128k_pretrain_config llama3_8b_16k_pretrain_config llama3_8b_64k_pretrain_config
llama3_8b_low_precision_pretrain_config llama3_8b_peft_1gpu_h100_bf16_config llama3_8b_peft_config
llama3_8b_pretrain_16gpu_h100_bf16_16k_config llama3_8b_pretrain_2gpu_h100_bf16_config
llama3_8b_pretrain_2gpu_h100_fp8cs_config llama3_8b_pretrain_2gpu_h100_fp8mx_config
llama3_8b_pretrain_2gpu_h100_nvfp4_config llama3_8b_pretrain_32gpu_h100_bf16_64k_config
llama3_8b_pretrain_64gpu_h100_bf16_128k_config llama3_8b_pretrain_config llama3_8b_sft_2gpu_h100_bf16_config
llama3_8b_sft_config minimax_m3_pretrain_256gpu_h100_bf16_config minimax_m3_pretrain_config
minimax_m3_sft_128gpu_h100_bf16_config minimax_m3_sft_config ministral3_14b_peft_2gpu_h100_bf16_config
ministral3_14b_peft_config ministral3_14b_sft_4gpu_h100_bf16_config ministral3_14b_sft_config
ministral3_3b_peft_1gpu_h100_bf16_config ministral3_3b_peft_config ministral3_3b_sft_1gpu_h100_bf16_config
ministral3_3b_sft_config ministral3_8b_peft_1gpu_h100_bf16_config ministral3_8b_peft_config
ministral3_8b_sft_2gpu_h100_bf16_config ministral3_8b_sft_config moonlight_16b_peft_2gpu_h100_bf16_config
moonlight_16b_peft_4gpu_h100_bf16_config moonlight_16b_peft_config moonlight_16b_pretrain_16gpu_h100_bf16_config
moonlight_16b_pretrain_8gpu_h100_bf16_config moonlight_16b_pretrain_config
moonlight_16b_sft_8gpu_h100_bf16_8k_config moonlight_16b_sft_8gpu_h100_bf16_config
moonlight_16b_sft_8gpu_h100_bf16_tp1_config moonlight_16b_sft_8k_config moonlight_16b_sft_config
nemotron_3_5_lightning_peft_config nemotron_3_5_lightning_pretrain_8k_config
nemotron_3_5_lightning_pretrain_8k_fsdp_config nemotron_3_5_lightning_pretrain_config
nemotron_3_5_lightning_sft_config nemotron_3_5_lightning_sft_openmathinstruct2_packed_config
nemotron_3_5_lightning_sft_openmathinstruct2_packed_tp1_config nemotron_3_nano_4b_peft_8gpu_h100_bf16_config
nemotron_3_nano_4b_peft_config nemotron_3_nano_4b_pretrain_8gpu_h100_bf16_config nemotron_3_nano_4b_pretrain_config
nemotron_3_nano_4b_sft_32k_config nemotron_3_nano_4b_sft_8gpu_h100_bf16_32k_config
nemotron_3_nano_4b_sft_8gpu_h100_bf16_config nemotron_3_nano_4b_sft_config nemotron_3_nano_gb200_pretrain_config
nemotron_3_nano_peft_8gpu_h100_bf16_config nemotron_3_nano_peft_config
nemotron_3_nano_pretrain_8gpu_gb200_bf16_config nemotron_3_nano_pretrain_8gpu_h100_bf16_config
nemotron_3_nano_pretrain_config nemotron_3_nano_sft_8gpu_h100_bf16_config nemotron_3_nano_sft_config
nemotron_3_super_peft_16gpu_h100_bf16_config nemotron_3_super_peft_1gpu_h100_bf16_config
nemotron_3_super_peft_config nemotron_3_super_pretrain_16gpu_h100_bf16_config
nemotron_3_super_pretrain_64gpu_gb200_bf16_config nemotron_3_super_pretrain_config
nemotron_3_super_sft_16gpu_h100_bf16_32k_config nemotron_3_super_sft_16gpu_h100_bf16_config
nemotron_3_super_sft_config nemotron_3_ultra_peft_32gpu_h100_bf16_openmathinstruct2_packed_config
nemotron_3_ultra_peft_openmathinstruct2_packed_config nemotron_3_ultra_pretrain_24gpu_h100_bf16_config
nemotron_3_ultra_pretrain_config nemotron_3_ultra_sft_192gpu_h100_bf16_openmathinstruct2_packed_config
nemotron_3_ultra_sft_openmathinstruct2_packed_config nemotron_nano_12b_v2_peft_1gpu_h100_bf16_config
nemotron_nano_12b_v2_peft_config nemotron_nano_12b_v2_pretrain_4gpu_h100_bf16_config
nemotron_nano_12b_v2_pretrain_config nemotron_nano_12b_v2_sft_4gpu_h100_bf16_config nemotron_nano_12b_v2_sft_config
nemotron_nano_9b_v2_peft_1gpu_h100_bf16_config nemotron_nano_9b_v2_peft_config
nemotron_nano_9b_v2_pretrain_2gpu_h100_bf16_config nemotron_nano_9b_v2_pretrain_config
nemotron_nano_9b_v2_sft_2gpu_h100_bf16_config nemotron_nano_9b_v2_sft_config
nemotron_nano_v2_vl_12b_peft_2gpu_h100_bf16_config nemotron_nano_v2_vl_12b_peft_config
nemotron_nano_v2_vl_12b_sft_4gpu_h100_bf16_config nemotron_nano_v2_vl_12b_sft_config
nemotron_omni_cord_v2_long_context_sft_8gpu_h100_bf16_config nemotron_omni_cord_v2_peft_4gpu_h100_bf16_config
nemotron_omni_cord_v2_peft_config nemotron_omni_cord_v2_sft_4gpu_h100_bf16_config nemotron_omni_cord_v2_sft_config
nemotron_omni_valor32k_peft_4gpu_h100_bf16_config nemotron_omni_valor32k_peft_config
nemotron_omni_valor32k_sft_4gpu_h100_bf16_config nemotron_omni_valor32k_sft_config
nemotronh_47b_peft_4gpu_h100_bf16_config nemotronh_47b_peft_config nemotronh_47b_pretrain_8gpu_h100_bf16_config
nemotronh_47b_pretrain_config nemotronh_47b_sft_16gpu_h100_bf16_config nemotronh_47b_sft_config
nemotronh_4b_peft_1gpu_h100_bf16_config nemotronh_4b_peft_config nemotronh_4b_pretrain_1gpu_h100_bf16_config
nemotronh_4b_pretrain_config nemotronh_4b_sft_1gpu_h100_bf16_config nemotronh_4b_sft_config
nemotronh_56b_peft_4gpu_h100_bf16_config nemotronh_56b_peft_config nemotronh_56b_pretrain_8gpu_h100_bf16_config
nemotronh_56b_pretrain_config nemotronh_56b_sft_8gpu_h100_bf16_config nemotronh_56b_sft_config
nemotronh_8b_peft_1gpu_h100_bf16_config nemotronh_8b_peft_config nemotronh_8b_pretrain_2gpu_h100_bf16_config
nemotronh_8b_pretrain_config nemotronh_8b_sft_2gpu_h100_bf16_config nemotronh_8b_sft_config
olmoe_7b_peft_1gpu_h100_bf16_config olmoe_7b_peft_config olmoe_7b_pretrain_8gpu_h100_bf16_config
olmoe_7b_pretrain_config olmoe_7b_sft_8gpu_h100_bf16_config olmoe_7b_sft_config
qwen25_14b_peft_1gpu_h100_bf16_config qwen25_14b_peft_config qwen25_14b_pretrain_4gpu_h100_bf16_config
qwen25_14b_pretrain_config qwen25_14b_sft_4gpu_h100_bf16_config qwen25_14b_sft_config
qwen25_1p5b_peft_1gpu_h100_bf16_config qwen25_1p5b_peft_config qwen25_1p5b_pretrain_1gpu_h100_bf16_config
qwen25_1p5b_pretrain_config qwen25_1p5b_sft_1gpu_h100_bf16_config qwen25_1p5b_sft_config
qwen25_32b_peft_8gpu_h100_bf16_config qwen25_32b_peft_config qwen25_32b_pretrain_16gpu_h100_bf16_config
qwen25_32b_pretrain_config qwen25_32b_sft_16gpu_h100_bf16_config qwen25_32b_sft_config
qwen25_500m_peft_1gpu_h100_bf16_config qwen25_500m_peft_config qwen25_500m_pretrain_1gpu_h100_bf16_config
qwen25_500m_pretrain_config qwen25_500m_sft_1gpu_h100_bf16_config qwen25_500m_sft_config
qwen25_72b_peft_8gpu_h100_bf16_config qwen25_72b_peft_config qwen25_72b_pretrain_32gpu_h100_bf16_config
qwen25_72b_pretrain_config qwen25_72b_sft_32gpu_h100_bf16_config qwen25_72b_sft_config
qwen25_7b_peft_1gpu_h100_bf16_config qwen25_7b_peft_config qwen25_7b_pretrain_2gpu_h100_bf16_config
qwen25_7b_pretrain_config qwen25_7b_sft_2gpu_h100_bf16_config qwen25_7b_sft_config
qwen25_vl_32b_peft_1gpu_h100_bf16_config qwen25_vl_32b_peft_config qwen25_vl_32b_sft_16gpu_h100_bf16_config
qwen25_vl_32b_sft_config qwen25_vl_3b_peft_1gpu_h100_bf16_config qwen25_vl_3b_peft_config
qwen25_vl_3b_sft_1gpu_h100_bf16_config qwen25_vl_3b_sft_config qwen25_vl_72b_peft_1gpu_h100_bf16_config
qwen25_vl_72b_peft_config qwen25_vl_72b_sft_32gpu_h100_bf16_config qwen25_vl_72b_sft_config
qwen25_vl_7b_peft_1gpu_h100_bf16_config qwen25_vl_7b_peft_config qwen25_vl_7b_sft_2gpu_h100_bf16_config
qwen25_vl_7b_sft_config qwen2_1p5b_peft_1gpu_h100_bf16_config qwen2_1p5b_peft_config
qwen2_1p5b_pretrain_1gpu_h100_bf16_config qwen2_1p5b_pretrain_config qwen2_1p5b_sft_1gpu_h100_bf16_config
qwen2_1p5b_sft_config qwen2_500m_peft_1gpu_h100_bf16_config qwen2_500m_peft_config
qwen2_500m_pretrain_1gpu_h100_bf16_config qwen2_500m_pretrain_config qwen2_500m_sft_1gpu_h100_bf16_config
qwen2_500m_sft_config qwen2_72b_peft_8gpu_h100_bf16_config qwen2_72b_peft_config
qwen2_72b_pretrain_32gpu_h100_bf16_config qwen2_72b_pretrain_config qwen2_72b_sft_32gpu_h100_bf16_config
qwen2_72b_sft_config qwen2_7b_peft_1gpu_h100_bf16_config qwen2_7b_peft_config
qwen2_7b_pretrain_2gpu_h100_bf16_config qwen2_7b_pretrain_config qwen2_7b_sft_2gpu_h100_bf16_config
qwen2_7b_sft_config qwen2_audio_7b_peft_1gpu_h100_bf16_config qwen2_audio_7b_peft_config
qwen2_audio_7b_sft_1gpu_h100_bf16_config qwen2_audio_7b_sft_config
qwen35_text_35b_a3b_pretrain_8gpu_gb200_bf16_config qwen35_text_35b_a3b_pretrain_config
qwen35_text_9b_pretrain_8gpu_gb200_bf16_config qwen35_text_9b_pretrain_config
qwen35_vl_122b_a10b_peft_8gpu_h100_bf16_config qwen35_vl_122b_a10b_peft_config
qwen35_vl_122b_a10b_pretrain_128gpu_h100_bf16_mock_config qwen35_vl_122b_a10b_pretrain_mock_config
qwen35_vl_122b_a10b_sft_48gpu_h100_bf16_config qwen35_vl_122b_a10b_sft_config
qwen35_vl_27b_peft_2gpu_h100_bf16_config qwen35_vl_27b_peft_config
qwen35_vl_27b_pretrain_16gpu_gb200_bf16_mock_config qwen35_vl_27b_pretrain_16gpu_h100_bf16_mock_config
qwen35_vl_27b_sft_16gpu_h100_bf16_config qwen35_vl_27b_sft_config qwen35_vl_2b_peft_1gpu_h100_bf16_config
qwen35_vl_2b_peft_config qwen35_vl_2b_sft_1gpu_h100_bf16_config qwen35_vl_2b_sft_config
qwen35_vl_35b_a3b_fsdp_sft_config qwen35_vl_35b_a3b_peft_16gpu_h100_bf16_config
qwen35_vl_35b_a3b_peft_4gpu_h100_bf16_config qwen35_vl_35b_a3b_peft_8gpu_gb200_bf16_functional_config
qwen35_vl_35b_a3b_peft_config qwen35_vl_35b_a3b_pretrain_16gpu_h100_bf16_functional_config
qwen35_vl_35b_a3b_pretrain_8gpu_h100_bf16_mock_config qwen35_vl_35b_a3b_pretrain_mock_config
qwen35_vl_35b_a3b_sft_16gpu_h100_bf16_config qwen35_vl_35b_a3b_sft_2gpu_h100_bf16_fsdp_config
qwen35_vl_35b_a3b_sft_8gpu_gb200_bf16_functional_config qwen35_vl_35b_a3b_sft_config
qwen35_vl_35b_a3b_sft_long_context_32gpu_h100_bf16_config qwen35_vl_397b_a17b_peft_32gpu_h100_bf16_config
qwen35_vl_397b_a17b_peft_config qwen35_vl_397b_a17b_pretrain_512gpu_h100_bf16_mock_config
qwen35_vl_397b_a17b_pretrain_mock_config qwen35_vl_397b_a17b_sft_128gpu_h100_bf16_config
qwen35_vl_397b_a17b_sft_config qwen35_vl_4b_peft_1gpu_h100_bf16_config qwen35_vl_4b_peft_config
qwen35_vl_4b_sft_2gpu_h100_bf16_config qwen35_vl_4b_sft_config qwen35_vl_800m_peft_1gpu_h100_bf16_config
qwen35_vl_800m_peft_config qwen35_vl_800m_sft_1gpu_h100_bf16_config qwen35_vl_800m_sft_config
qwen35_vl_9b_peft_1gpu_h100_bf16_config qwen35_vl_9b_peft_config qwen35_vl_9b_pretrain_4gpu_h100_bf16_mock_config
qwen35_vl_9b_pretrain_mock_config qwen35_vl_9b_sft_4gpu_h100_bf16_config qwen35_vl_9b_sft_config
qwen3_14b_peft_1gpu_h100_bf16_config qwen3_14b_peft_config qwen3_14b_pretrain_8gpu_h100_bf16_config
qwen3_14b_pretrain_config qwen3_14b_sft_8gpu_h100_bf16_config qwen3_14b_sft_config
qwen3_1p7b_peft_1gpu_h100_bf16_config qwen3_1p7b_peft_config qwen3_1p7b_pretrain_1gpu_h100_bf16_config
qwen3_1p7b_pretrain_config qwen3_1p7b_sft_1gpu_h100_bf16_config qwen3_1p7b_sft_config
qwen3_235b_a22b_peft_16gpu_h100_bf16_config qwen3_235b_a22b_peft_config
qwen3_235b_a22b_pretrain_256gpu_h100_bf16_config qwen3_235b_a22b_pretrain_config
qwen3_235b_a22b_sft_64gpu_h100_bf16_config qwen3_235b_a22b_sft_config qwen3_30b_a3b_peft_4gpu_h100_bf16_config
qwen3_30b_a3b_peft_config qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config
qwen3_30b_a3b_pretrain_8gpu_gb200_fp8mx_functional_config qwen3_30b_a3b_pretrain_8gpu_h100_bf16_config
qwen3_30b_a3b_pretrain_config qwen3_30b_a3b_sft_16gpu_h100_bf16_config qwen3_30b_a3b_sft_8gpu_h100_bf16_config
qwen3_30b_a3b_sft_config qwen3_32b_peft_1gpu_h100_bf16_config qwen3_32b_peft_config
qwen3_32b_pretrain_16gpu_h100_bf16_config qwen3_32b_pretrain_config qwen3_32b_sft_16gpu_h100_bf16_config
qwen3_32b_sft_config qwen3_4b_peft_1gpu_h100_bf16_config qwen3_4b_peft_config
qwen3_4b_pretrain_2gpu_h100_bf16_config qwen3_4b_pretrain_config qwen3_4b_sft_2gpu_h100_bf16_config
qwen3_4b_sft_config qwen3_600m_peft_1gpu_h100_bf16_config qwen3_600m_peft_config
qwen3_600m_pretrain_1gpu_h100_bf16_config qwen3_600m_pretrain_config qwen3_600m_sft_128k_config
qwen3_600m_sft_1gpu_h100_bf16_config qwen3_600m_sft_8gpu_h100_bf16_128k_config
qwen3_600m_sft_8gpu_h100_bf16_yarn_128k_config qwen3_600m_sft_config qwen3_600m_sft_yarn_128k_config
qwen3_8b_peft_1gpu_h100_bf16_config qwen3_8b_peft_config qwen3_8b_pretrain_16gpu_h100_bf16_config
qwen3_8b_pretrain_4gpu_h100_bf16_config qwen3_8b_pretrain_config qwen3_8b_sft_32k_config
qwen3_8b_sft_4gpu_h100_bf16_config qwen3_8b_sft_8gpu_h100_bf16_32k_config qwen3_8b_sft_config
qwen3_next_80b_a3b_peft_1gpu_h100_bf16_config qwen3_next_80b_a3b_peft_config
qwen3_next_80b_a3b_pretrain_32gpu_h100_bf16_config qwen3_next_80b_a3b_pretrain_config
qwen3_next_80b_a3b_sft_16gpu_h100_bf16_config qwen3_next_80b_a3b_sft_config
qwen3_omni_30b_a3b_sft_8gpu_h100_bf16_config qwen3_omni_30b_a3b_sft_8gpu_h100_bf16_hf_json_config
qwen3_omni_30b_a3b_sft_config qwen3_omni_30b_a3b_sft_hf_json_config qwen3_vl_235b_a22b_peft_16gpu_h100_bf16_config
qwen3_vl_235b_a22b_peft_config qwen3_vl_235b_a22b_pretrain_256gpu_h100_bf16_mock_config
qwen3_vl_235b_a22b_pretrain_mock_config qwen3_vl_235b_a22b_sft_32gpu_h100_bf16_config qwen3_vl_235b_a22b_sft_config
qwen3_vl_30b_a3b_peft_4gpu_h100_bf16_config qwen3_vl_30b_a3b_peft_config
qwen3_vl_30b_a3b_pretrain_8gpu_h100_bf16_mock_config qwen3_vl_30b_a3b_pretrain_mock_config
qwen3_vl_30b_a3b_sft_8gpu_h100_bf16_config qwen3_vl_30b_a3b_sft_config qwen3_vl_8b_peft_1gpu_h100_bf16_config
qwen3_vl_8b_peft_1gpu_h100_bf16_energon_config qwen3_vl_8b_peft_config qwen3_vl_8b_peft_energon_config
qwen3_vl_8b_pretrain_4gpu_h100_bf16_mock_config qwen3_vl_8b_pretrain_mock_config
qwen3_vl_8b_sft_2gpu_h100_bf16_config qwen3_vl_8b_sft_config step35_196b_a11b_pretrain_512gpu_h100_bf16_config
step35_196b_a11b_pretrain_config step37_sft_4gpu_h100_bf16_flickr8k_smoke_config
step37_sft_64gpu_h100_bf16_flickr8k_config step37_sft_flickr8k_config step37_sft_flickr8k_smoke_config
vanilla_gpt_pretrain_1gpu_h100_bf16_config vanilla_gpt_pretrain_config wan_14b_pretrain_8gpu_h100_bf16_config
wan_14b_pretrain_config wan_14b_sft_8gpu_h100_bf16_config wan_14b_sft_config wan_1_3b_pretrain_8gpu_h100_bf16_config
wan_1_3b_pretrain_config wan_1_3b_sft_8gpu_h100_bf16_config wan_1_3b_sft_config
wan_1_3b_text2image_pretrain_1gpu_h100_bf16_config wan_1_3b_text2image_pretrain_config
wan_1_3b_text2video_pretrain_4gpu_h100_bf16_config wan_1_3b_text2video_pretrain_config
""".split())

# Names exported by megatron.bridge.perf_recipes/**/__init__.py (recipe_metadata.benchmark_recipe_names)
BENCHMARK_RECIPES = frozenset("""
deepseek_v3_pretrain_1024gpu_h100_bf16_config deepseek_v3_pretrain_1024gpu_h100_fp8cs_config
deepseek_v3_pretrain_1024gpu_h100_fp8sc_config deepseek_v3_pretrain_1024gpu_h100_fp8sc_large_scale_config
deepseek_v3_pretrain_128gpu_gb300_fp8mx_hsdp_config deepseek_v3_pretrain_128gpu_vr200_bf16_config
deepseek_v3_pretrain_128gpu_vr200_fp8cs_config deepseek_v3_pretrain_128gpu_vr200_fp8mx_config
deepseek_v3_pretrain_128gpu_vr200_nvfp4_config deepseek_v3_pretrain_256gpu_b200_bf16_config
deepseek_v3_pretrain_256gpu_b200_fp8cs_config deepseek_v3_pretrain_256gpu_b200_fp8mx_config
deepseek_v3_pretrain_256gpu_b200_fp8mx_large_scale_config deepseek_v3_pretrain_256gpu_b200_nvfp4_config
deepseek_v3_pretrain_256gpu_b300_bf16_config deepseek_v3_pretrain_256gpu_b300_fp8cs_config
deepseek_v3_pretrain_256gpu_b300_fp8mx_config deepseek_v3_pretrain_256gpu_b300_fp8mx_large_scale_config
deepseek_v3_pretrain_256gpu_b300_nvfp4_config deepseek_v3_pretrain_256gpu_gb200_bf16_config
deepseek_v3_pretrain_256gpu_gb200_fp8cs_config deepseek_v3_pretrain_256gpu_gb200_fp8mx_config
deepseek_v3_pretrain_256gpu_gb200_fp8mx_large_scale_config
deepseek_v3_pretrain_256gpu_gb200_fp8mx_partial_cg_dev_config deepseek_v3_pretrain_256gpu_gb200_nvfp4_config
deepseek_v3_pretrain_256gpu_gb300_bf16_config deepseek_v3_pretrain_256gpu_gb300_fp8cs_config
deepseek_v3_pretrain_256gpu_gb300_fp8mx_config deepseek_v3_pretrain_256gpu_gb300_fp8mx_large_scale_config
deepseek_v3_pretrain_256gpu_gb300_fp8mx_partial_cg_dev_config deepseek_v3_pretrain_256gpu_gb300_nvfp4_config
deepseek_v3_pretrain_256gpu_vr200_bf16_config deepseek_v3_pretrain_256gpu_vr200_fp8cs_config
deepseek_v3_pretrain_256gpu_vr200_fp8mx_config deepseek_v3_pretrain_256gpu_vr200_nvfp4_config
deepseek_v3_pretrain_64gpu_gb300_bf16_fsdp_config deepseek_v3_pretrain_64gpu_gb300_fp8mx_fsdp_config
deepseek_v3_pretrain_64gpu_h100_bf16_config deepseek_v3_pretrain_64gpu_h100_fp8cs_config
deepseek_v4_flash_pretrain_128gpu_gb200_fp8mx_config deepseek_v4_flash_pretrain_128gpu_gb300_fp8mx_config
deepseek_v4_pro_pretrain_256gpu_gb300_fp8mx_config glm51_sft_192gpu_gb200_bf16_config
glm51_sft_416gpu_h100_bf16_config glm52_sft_192gpu_gb200_bf16_config glm52_sft_416gpu_h100_bf16_config
gpt_oss_120b_pretrain_64gpu_b200_bf16_config gpt_oss_120b_pretrain_64gpu_b200_fp8mx_config
gpt_oss_120b_pretrain_64gpu_b300_bf16_config gpt_oss_120b_pretrain_64gpu_b300_fp8mx_config
gpt_oss_120b_pretrain_64gpu_gb200_bf16_config gpt_oss_120b_pretrain_64gpu_gb200_fp8mx_config
gpt_oss_120b_pretrain_64gpu_gb300_bf16_config gpt_oss_120b_pretrain_64gpu_gb300_fp8mx_config
gpt_oss_120b_pretrain_64gpu_h100_bf16_config gpt_oss_120b_pretrain_64gpu_h100_fp8cs_config
gpt_oss_120b_pretrain_64gpu_vr200_bf16_config gpt_oss_120b_pretrain_64gpu_vr200_fp8mx_config
gpt_oss_20b_pretrain_512gpu_gb200_fp8mx_config gpt_oss_20b_pretrain_512gpu_gb300_fp8mx_config
gpt_oss_20b_pretrain_64gpu_b300_fp8mx_config gpt_oss_20b_pretrain_64gpu_b300_nvfp4_config
gpt_oss_20b_pretrain_64gpu_vr200_nvfp4_config gpt_oss_20b_pretrain_72gpu_gb200_nvfp4_config
gpt_oss_20b_pretrain_72gpu_gb300_nvfp4_config gpt_oss_20b_pretrain_8gpu_b300_fp8mx_config
gpt_oss_20b_pretrain_8gpu_b300_nvfp4_config gpt_oss_20b_pretrain_8gpu_gb200_nvfp4_config
gpt_oss_20b_pretrain_8gpu_gb300_nvfp4_config gpt_oss_20b_pretrain_8gpu_vr200_fp8mx_config
gpt_oss_20b_pretrain_8gpu_vr200_nvfp4_config kimi_k2_pretrain_1024gpu_h100_bf16_config
kimi_k2_pretrain_1024gpu_h100_fp8cs_config kimi_k2_pretrain_1024gpu_h100_fp8sc_config
kimi_k2_pretrain_256gpu_b200_bf16_config kimi_k2_pretrain_256gpu_b200_fp8cs_config
kimi_k2_pretrain_256gpu_b200_fp8mx_config kimi_k2_pretrain_256gpu_b300_bf16_config
kimi_k2_pretrain_256gpu_b300_fp8cs_config kimi_k2_pretrain_256gpu_b300_fp8mx_config
kimi_k2_pretrain_256gpu_gb200_bf16_config kimi_k2_pretrain_256gpu_gb200_fp8cs_config
kimi_k2_pretrain_256gpu_gb200_fp8mx_config kimi_k2_pretrain_256gpu_gb300_bf16_config
kimi_k2_pretrain_256gpu_gb300_fp8cs_config kimi_k2_pretrain_256gpu_gb300_fp8mx_config
kimi_k2_pretrain_256gpu_gb300_nvfp4_config kimi_k2_pretrain_256gpu_vr200_bf16_config
kimi_k2_pretrain_256gpu_vr200_fp8mx_config llama31_405b_pretrain_1024gpu_h100_bf16_config
llama31_405b_pretrain_1024gpu_h100_fp8cs_config llama31_405b_pretrain_128gpu_b200_bf16_config
llama31_405b_pretrain_128gpu_b200_fp8cs_config llama31_405b_pretrain_128gpu_b200_fp8mx_config
llama31_405b_pretrain_128gpu_b200_nvfp4_config llama31_405b_pretrain_128gpu_b300_bf16_config
llama31_405b_pretrain_128gpu_b300_fp8cs_config llama31_405b_pretrain_128gpu_b300_fp8mx_config
llama31_405b_pretrain_128gpu_b300_nvfp4_config llama31_405b_pretrain_128gpu_gb200_bf16_config
llama31_405b_pretrain_128gpu_gb200_fp8cs_config llama31_405b_pretrain_128gpu_gb200_fp8mx_config
llama31_405b_pretrain_128gpu_gb200_nvfp4_config llama31_405b_pretrain_128gpu_gb300_bf16_config
llama31_405b_pretrain_128gpu_gb300_fp8cs_config llama31_405b_pretrain_128gpu_gb300_fp8mx_config
llama31_405b_pretrain_128gpu_gb300_nvfp4_config llama31_405b_pretrain_256gpu_b200_bf16_config
llama31_405b_pretrain_256gpu_b200_fp8cs_config llama31_405b_pretrain_256gpu_b200_fp8mx_config
llama31_405b_pretrain_256gpu_b200_nvfp4_config llama31_405b_pretrain_256gpu_b300_bf16_config
llama31_405b_pretrain_256gpu_b300_fp8cs_config llama31_405b_pretrain_256gpu_b300_fp8mx_config
llama31_405b_pretrain_256gpu_b300_nvfp4_config llama31_405b_pretrain_256gpu_gb200_bf16_config
llama31_405b_pretrain_256gpu_gb200_fp8cs_config llama31_405b_pretrain_256gpu_gb200_fp8mx_config
llama31_405b_pretrain_256gpu_gb200_nvfp4_config llama31_405b_pretrain_256gpu_gb300_bf16_config
llama31_405b_pretrain_256gpu_gb300_fp8cs_config llama31_405b_pretrain_256gpu_gb300_fp8mx_config
llama31_405b_pretrain_256gpu_gb300_nvfp4_config llama31_405b_pretrain_256gpu_vr200_bf16_config
llama31_405b_pretrain_256gpu_vr200_fp8mx_config llama31_405b_pretrain_256gpu_vr200_nvfp4_config
llama31_405b_pretrain_512gpu_h100_bf16_config llama31_405b_pretrain_512gpu_h100_fp8cs_config
llama3_70b_peft_8gpu_b200_bf16_config llama3_70b_peft_8gpu_b200_fp8cs_config llama3_70b_peft_8gpu_b200_fp8mx_config
llama3_70b_peft_8gpu_b300_bf16_config llama3_70b_peft_8gpu_b300_fp8cs_config llama3_70b_peft_8gpu_b300_fp8mx_config
llama3_70b_peft_8gpu_gb200_bf16_config llama3_70b_peft_8gpu_gb200_fp8cs_config
llama3_70b_peft_8gpu_gb200_fp8mx_config llama3_70b_peft_8gpu_gb300_bf16_config
llama3_70b_peft_8gpu_gb300_fp8cs_config llama3_70b_peft_8gpu_gb300_fp8mx_config
llama3_70b_peft_8gpu_h100_bf16_config llama3_70b_peft_8gpu_h100_fp8cs_config
llama3_70b_pretrain_32gpu_gb200_bf16_config llama3_70b_pretrain_32gpu_gb200_fp8cs_config
llama3_70b_pretrain_32gpu_gb300_bf16_config llama3_70b_pretrain_32gpu_gb300_fp8cs_config
llama3_70b_pretrain_64gpu_b200_bf16_config llama3_70b_pretrain_64gpu_b200_fp8cs_config
llama3_70b_pretrain_64gpu_b200_fp8mx_config llama3_70b_pretrain_64gpu_b200_nvfp4_config
llama3_70b_pretrain_64gpu_b300_bf16_config llama3_70b_pretrain_64gpu_b300_fp8cs_config
llama3_70b_pretrain_64gpu_b300_fp8mx_config llama3_70b_pretrain_64gpu_b300_nvfp4_config
llama3_70b_pretrain_64gpu_gb200_bf16_config llama3_70b_pretrain_64gpu_gb200_fp8cs_config
llama3_70b_pretrain_64gpu_gb200_fp8mx_config llama3_70b_pretrain_64gpu_gb200_nvfp4_config
llama3_70b_pretrain_64gpu_gb300_bf16_config llama3_70b_pretrain_64gpu_gb300_fp8cs_config
llama3_70b_pretrain_64gpu_gb300_fp8mx_config llama3_70b_pretrain_64gpu_gb300_nvfp4_config
llama3_70b_pretrain_64gpu_h100_bf16_config llama3_70b_pretrain_64gpu_h100_fp8cs_config
llama3_70b_pretrain_64gpu_vr200_bf16_config llama3_70b_pretrain_64gpu_vr200_fp8mx_config
llama3_70b_pretrain_64gpu_vr200_nvfp4_config llama3_70b_sft_32gpu_gb200_bf16_config
llama3_70b_sft_32gpu_gb200_fp8cs_config llama3_70b_sft_32gpu_gb200_fp8mx_config
llama3_70b_sft_32gpu_gb300_bf16_config llama3_70b_sft_32gpu_gb300_fp8cs_config
llama3_70b_sft_32gpu_gb300_fp8mx_config llama3_70b_sft_32gpu_h100_bf16_config llama3_70b_sft_32gpu_h100_fp8cs_config
llama3_8b_pretrain_32gpu_gb200_bf16_config llama3_8b_pretrain_32gpu_gb200_fp8cs_config
llama3_8b_pretrain_32gpu_gb300_bf16_config llama3_8b_pretrain_32gpu_gb300_fp8cs_config
llama3_8b_pretrain_32gpu_gb300_fp8mx_config llama3_8b_pretrain_32gpu_gb300_nvfp4_config
llama3_8b_pretrain_64gpu_b200_bf16_config llama3_8b_pretrain_64gpu_b200_fp8cs_config
llama3_8b_pretrain_64gpu_h100_bf16_config llama3_8b_pretrain_64gpu_h100_fp8cs_config
llama3_8b_pretrain_8gpu_b200_bf16_config llama3_8b_pretrain_8gpu_b200_fp8cs_config
llama3_8b_pretrain_8gpu_b200_fp8mx_config llama3_8b_pretrain_8gpu_b200_nvfp4_config
llama3_8b_pretrain_8gpu_b300_bf16_config llama3_8b_pretrain_8gpu_b300_fp8cs_config
llama3_8b_pretrain_8gpu_b300_fp8mx_config llama3_8b_pretrain_8gpu_b300_nvfp4_config
llama3_8b_pretrain_8gpu_gb200_bf16_config llama3_8b_pretrain_8gpu_gb200_fp8cs_config
llama3_8b_pretrain_8gpu_gb200_fp8mx_config llama3_8b_pretrain_8gpu_gb200_nvfp4_config
llama3_8b_pretrain_8gpu_gb300_bf16_config llama3_8b_pretrain_8gpu_gb300_fp8cs_config
llama3_8b_pretrain_8gpu_gb300_fp8mx_config llama3_8b_pretrain_8gpu_gb300_nvfp4_config
llama3_8b_pretrain_8gpu_h100_bf16_config llama3_8b_pretrain_8gpu_h100_fp8cs_config
llama3_8b_pretrain_8gpu_r100_bf16_config llama3_8b_pretrain_8gpu_r100_fp8cs_config
llama3_8b_pretrain_8gpu_r100_fp8mx_config llama3_8b_pretrain_8gpu_r100_nvfp4_config
llama3_8b_pretrain_8gpu_vr200_bf16_config llama3_8b_pretrain_8gpu_vr200_fp8cs_config
llama3_8b_pretrain_8gpu_vr200_fp8mx_config llama3_8b_pretrain_8gpu_vr200_nvfp4_config
llama3_8b_sft_8gpu_gb200_bf16_config llama3_8b_sft_8gpu_gb200_fp8cs_config llama3_8b_sft_8gpu_gb200_fp8mx_config
llama3_8b_sft_8gpu_h100_bf16_config llama3_8b_sft_8gpu_h100_fp8cs_config
nemotron_3_5_lightning_pretrain_16gpu_h100_bf16_config nemotron_3_5_lightning_pretrain_16gpu_h100_fp8cs_config
nemotron_3_5_lightning_pretrain_8gpu_gb200_bf16_config nemotron_3_5_lightning_pretrain_8gpu_gb200_fp8mx_config
nemotron_3_5_lightning_pretrain_8gpu_gb200_fp8mx_fsdp_config nemotron_3_5_lightning_pretrain_8gpu_gb200_nvfp4_config
nemotron_3_5_lightning_pretrain_8gpu_gb300_bf16_config nemotron_3_5_lightning_pretrain_8gpu_gb300_fp8mx_config
nemotron_3_5_lightning_pretrain_8gpu_gb300_fp8mx_fsdp_config nemotron_3_5_lightning_pretrain_8gpu_gb300_nvfp4_config
nemotron_3_nano_pretrain_16gpu_h100_bf16_config nemotron_3_nano_pretrain_16gpu_h100_fp8cs_config
nemotron_3_nano_pretrain_8gpu_b200_bf16_config nemotron_3_nano_pretrain_8gpu_b200_fp8mx_config
nemotron_3_nano_pretrain_8gpu_b200_nvfp4_config nemotron_3_nano_pretrain_8gpu_b300_bf16_config
nemotron_3_nano_pretrain_8gpu_b300_fp8mx_config nemotron_3_nano_pretrain_8gpu_b300_nvfp4_config
nemotron_3_nano_pretrain_8gpu_gb200_bf16_config nemotron_3_nano_pretrain_8gpu_gb200_fp8mx_config
nemotron_3_nano_pretrain_8gpu_gb200_nvfp4_config nemotron_3_nano_pretrain_8gpu_gb300_bf16_config
nemotron_3_nano_pretrain_8gpu_gb300_fp8mx_config nemotron_3_nano_pretrain_8gpu_gb300_nvfp4_config
nemotron_3_nano_pretrain_8gpu_vr200_bf16_config nemotron_3_nano_pretrain_8gpu_vr200_fp8mx_config
nemotron_3_nano_pretrain_8gpu_vr200_nvfp4_config nemotron_3_super_pretrain_64gpu_b200_bf16_config
nemotron_3_super_pretrain_64gpu_b200_fp8mx_config nemotron_3_super_pretrain_64gpu_b200_nvfp4_config
nemotron_3_super_pretrain_64gpu_b300_bf16_config nemotron_3_super_pretrain_64gpu_b300_fp8mx_config
nemotron_3_super_pretrain_64gpu_b300_nvfp4_config nemotron_3_super_pretrain_64gpu_gb200_bf16_config
nemotron_3_super_pretrain_64gpu_gb200_fp8mx_config nemotron_3_super_pretrain_64gpu_gb200_nvfp4_config
nemotron_3_super_pretrain_64gpu_gb300_bf16_config nemotron_3_super_pretrain_64gpu_gb300_fp8mx_config
nemotron_3_super_pretrain_64gpu_gb300_nvfp4_config nemotron_3_super_pretrain_64gpu_h100_bf16_config
nemotron_3_super_pretrain_64gpu_vr200_bf16_config nemotron_3_super_pretrain_64gpu_vr200_fp8mx_config
nemotron_3_super_pretrain_64gpu_vr200_nvfp4_config nemotron_3_ultra_pretrain_256gpu_gb200_fp8mx_config
nemotron_3_ultra_pretrain_256gpu_gb300_fp8mx_config nemotronh_56b_pretrain_256gpu_b200_bf16_config
nemotronh_56b_pretrain_256gpu_b200_fp8cs_config nemotronh_56b_pretrain_256gpu_gb300_bf16_config
nemotronh_56b_pretrain_256gpu_gb300_fp8cs_config nemotronh_56b_pretrain_64gpu_b200_fp8cs_config
nemotronh_56b_pretrain_64gpu_b300_fp8cs_config nemotronh_56b_pretrain_64gpu_gb200_fp8cs_config
nemotronh_56b_pretrain_64gpu_gb300_fp8cs_config nemotronh_56b_pretrain_64gpu_h100_fp8cs_config
qwen35_vl_122b_a10b_pretrain_128gpu_h100_bf16_config qwen35_vl_122b_a10b_pretrain_128gpu_h100_fp8cs_config
qwen35_vl_122b_a10b_pretrain_32gpu_b200_bf16_config qwen35_vl_122b_a10b_pretrain_32gpu_b200_fp8cs_config
qwen35_vl_122b_a10b_pretrain_32gpu_b200_fp8mx_config qwen35_vl_122b_a10b_pretrain_32gpu_b300_bf16_config
qwen35_vl_122b_a10b_pretrain_32gpu_b300_fp8cs_config qwen35_vl_122b_a10b_pretrain_32gpu_b300_fp8mx_config
qwen35_vl_122b_a10b_pretrain_32gpu_gb200_bf16_config qwen35_vl_122b_a10b_pretrain_32gpu_gb200_fp8cs_config
qwen35_vl_122b_a10b_pretrain_32gpu_gb200_fp8mx_config qwen35_vl_122b_a10b_pretrain_32gpu_gb300_bf16_config
qwen35_vl_122b_a10b_pretrain_32gpu_gb300_fp8cs_config qwen35_vl_122b_a10b_pretrain_32gpu_gb300_fp8mx_config
qwen35_vl_122b_a10b_pretrain_32gpu_vr200_bf16_config qwen35_vl_122b_a10b_pretrain_32gpu_vr200_fp8cs_config
qwen35_vl_122b_a10b_pretrain_32gpu_vr200_fp8mx_config qwen35_vl_35b_a3b_pretrain_16gpu_h100_bf16_config
qwen35_vl_35b_a3b_pretrain_16gpu_h100_fp8cs_config qwen35_vl_35b_a3b_pretrain_8gpu_b200_bf16_config
qwen35_vl_35b_a3b_pretrain_8gpu_b200_fp8cs_config qwen35_vl_35b_a3b_pretrain_8gpu_b200_fp8mx_config
qwen35_vl_35b_a3b_pretrain_8gpu_b300_bf16_config qwen35_vl_35b_a3b_pretrain_8gpu_b300_fp8cs_config
qwen35_vl_35b_a3b_pretrain_8gpu_b300_fp8mx_config qwen35_vl_35b_a3b_pretrain_8gpu_gb200_bf16_config
qwen35_vl_35b_a3b_pretrain_8gpu_gb200_fp8cs_config qwen35_vl_35b_a3b_pretrain_8gpu_gb200_fp8mx_config
qwen35_vl_35b_a3b_pretrain_8gpu_gb300_bf16_config qwen35_vl_35b_a3b_pretrain_8gpu_gb300_fp8cs_config
qwen35_vl_35b_a3b_pretrain_8gpu_gb300_fp8mx_config qwen35_vl_35b_a3b_pretrain_8gpu_vr200_bf16_config
qwen35_vl_35b_a3b_pretrain_8gpu_vr200_fp8cs_config qwen35_vl_35b_a3b_pretrain_8gpu_vr200_fp8mx_config
qwen35_vl_397b_a17b_pretrain_256gpu_h100_bf16_config qwen35_vl_397b_a17b_pretrain_256gpu_h100_fp8cs_config
qwen35_vl_397b_a17b_pretrain_64gpu_b200_bf16_config qwen35_vl_397b_a17b_pretrain_64gpu_b200_fp8cs_config
qwen35_vl_397b_a17b_pretrain_64gpu_b200_fp8mx_config qwen35_vl_397b_a17b_pretrain_64gpu_b300_bf16_config
qwen35_vl_397b_a17b_pretrain_64gpu_b300_fp8cs_config qwen35_vl_397b_a17b_pretrain_64gpu_b300_fp8mx_config
qwen35_vl_397b_a17b_pretrain_64gpu_gb200_bf16_config qwen35_vl_397b_a17b_pretrain_64gpu_gb200_fp8cs_config
qwen35_vl_397b_a17b_pretrain_64gpu_gb200_fp8mx_config qwen35_vl_397b_a17b_pretrain_64gpu_gb300_bf16_config
qwen35_vl_397b_a17b_pretrain_64gpu_gb300_fp8cs_config qwen35_vl_397b_a17b_pretrain_64gpu_gb300_fp8mx_config
qwen35_vl_397b_a17b_pretrain_64gpu_vr200_bf16_config qwen35_vl_397b_a17b_pretrain_64gpu_vr200_fp8cs_config
qwen35_vl_397b_a17b_pretrain_64gpu_vr200_fp8mx_config qwen3_235b_a22b_pretrain_128gpu_b200_fp8mx_deepep_dev_config
qwen3_235b_a22b_pretrain_128gpu_b300_fp8mx_hybridep_dev_config
qwen3_235b_a22b_pretrain_128gpu_gb200_fp8mx_paged_stash_dev_config
qwen3_235b_a22b_pretrain_128gpu_gb200_fp8mx_partial_cg_dev_config
qwen3_235b_a22b_pretrain_128gpu_gb300_fp8mx_paged_stash_dev_config qwen3_235b_a22b_pretrain_256gpu_b200_bf16_config
qwen3_235b_a22b_pretrain_256gpu_b200_fp8cs_config qwen3_235b_a22b_pretrain_256gpu_b200_fp8mx_config
qwen3_235b_a22b_pretrain_256gpu_b200_fp8mx_large_scale_config qwen3_235b_a22b_pretrain_256gpu_b200_nvfp4_config
qwen3_235b_a22b_pretrain_256gpu_b300_bf16_config qwen3_235b_a22b_pretrain_256gpu_b300_fp8cs_config
qwen3_235b_a22b_pretrain_256gpu_b300_fp8mx_config qwen3_235b_a22b_pretrain_256gpu_b300_fp8mx_large_scale_config
qwen3_235b_a22b_pretrain_256gpu_b300_nvfp4_config qwen3_235b_a22b_pretrain_256gpu_gb200_bf16_config
qwen3_235b_a22b_pretrain_256gpu_gb200_fp8cs_config qwen3_235b_a22b_pretrain_256gpu_gb200_fp8mx_config
qwen3_235b_a22b_pretrain_256gpu_gb200_fp8mx_large_scale_config qwen3_235b_a22b_pretrain_256gpu_gb200_nvfp4_config
qwen3_235b_a22b_pretrain_256gpu_gb300_bf16_config qwen3_235b_a22b_pretrain_256gpu_gb300_fp8cs_config
qwen3_235b_a22b_pretrain_256gpu_gb300_fp8mx_config qwen3_235b_a22b_pretrain_256gpu_gb300_fp8mx_large_scale_config
qwen3_235b_a22b_pretrain_256gpu_gb300_nvfp4_config qwen3_235b_a22b_pretrain_256gpu_h100_bf16_config
qwen3_235b_a22b_pretrain_256gpu_h100_bf16_hybridep_dev_config qwen3_235b_a22b_pretrain_256gpu_h100_fp8cs_config
qwen3_235b_a22b_pretrain_256gpu_h100_fp8cs_large_scale_config qwen3_235b_a22b_pretrain_256gpu_vr200_bf16_config
qwen3_235b_a22b_pretrain_256gpu_vr200_fp8mx_config qwen3_235b_a22b_pretrain_256gpu_vr200_nvfp4_config
qwen3_235b_a22b_pretrain_64gpu_b200_bf16_config qwen3_235b_a22b_pretrain_64gpu_b200_fp8cs_config
qwen3_235b_a22b_pretrain_64gpu_b200_fp8mx_config qwen3_235b_a22b_pretrain_64gpu_b200_nvfp4_config
qwen3_235b_a22b_pretrain_64gpu_b300_bf16_config qwen3_235b_a22b_pretrain_64gpu_b300_fp8cs_config
qwen3_235b_a22b_pretrain_64gpu_b300_fp8mx_config qwen3_235b_a22b_pretrain_64gpu_b300_nvfp4_config
qwen3_235b_a22b_pretrain_64gpu_gb200_bf16_config qwen3_235b_a22b_pretrain_64gpu_gb200_fp8cs_config
qwen3_235b_a22b_pretrain_64gpu_gb200_fp8mx_config qwen3_235b_a22b_pretrain_64gpu_gb200_nvfp4_config
qwen3_235b_a22b_pretrain_64gpu_gb300_bf16_config qwen3_235b_a22b_pretrain_64gpu_gb300_fp8cs_config
qwen3_235b_a22b_pretrain_64gpu_gb300_fp8mx_config qwen3_235b_a22b_pretrain_64gpu_gb300_nvfp4_config
qwen3_30b_a3b_pretrain_16gpu_gb200_bf16_dev_config qwen3_30b_a3b_pretrain_16gpu_gb200_fp8mx_paged_stash_dev_config
qwen3_30b_a3b_pretrain_16gpu_gb200_fp8mx_partial_cg_dev_config qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config
qwen3_30b_a3b_pretrain_16gpu_h100_fp8cs_config qwen3_30b_a3b_pretrain_16gpu_h100_fp8ds_config
qwen3_30b_a3b_pretrain_32gpu_gb200_bf16_config qwen3_30b_a3b_pretrain_32gpu_gb200_fp8cs_config
qwen3_30b_a3b_pretrain_32gpu_gb300_bf16_config qwen3_30b_a3b_pretrain_32gpu_gb300_fp8cs_config
qwen3_30b_a3b_pretrain_32gpu_h100_bf16_dev_config qwen3_30b_a3b_pretrain_32gpu_h100_fp8sc_dev_config
qwen3_30b_a3b_pretrain_64gpu_b200_bf16_config qwen3_30b_a3b_pretrain_64gpu_b200_fp8cs_config
qwen3_30b_a3b_pretrain_64gpu_h100_bf16_config qwen3_30b_a3b_pretrain_64gpu_h100_fp8cs_config
qwen3_30b_a3b_pretrain_8gpu_b200_bf16_config qwen3_30b_a3b_pretrain_8gpu_b200_fp8cs_config
qwen3_30b_a3b_pretrain_8gpu_b200_fp8mx_config qwen3_30b_a3b_pretrain_8gpu_b200_nvfp4_config
qwen3_30b_a3b_pretrain_8gpu_b300_bf16_config qwen3_30b_a3b_pretrain_8gpu_b300_fp8cs_config
qwen3_30b_a3b_pretrain_8gpu_b300_fp8mx_config qwen3_30b_a3b_pretrain_8gpu_b300_nvfp4_config
qwen3_30b_a3b_pretrain_8gpu_gb200_bf16_config qwen3_30b_a3b_pretrain_8gpu_gb200_fp8cs_config
qwen3_30b_a3b_pretrain_8gpu_gb200_fp8mx_config qwen3_30b_a3b_pretrain_8gpu_gb200_nvfp4_config
qwen3_30b_a3b_pretrain_8gpu_gb300_bf16_config qwen3_30b_a3b_pretrain_8gpu_gb300_fp8cs_config
qwen3_30b_a3b_pretrain_8gpu_gb300_fp8mx_config qwen3_30b_a3b_pretrain_8gpu_gb300_nvfp4_config
qwen3_30b_a3b_pretrain_8gpu_vr200_bf16_config qwen3_30b_a3b_pretrain_8gpu_vr200_fp8mx_config
qwen3_30b_a3b_pretrain_8gpu_vr200_nvfp4_config qwen3_next_80b_a3b_pretrain_128gpu_h100_bf16_config
qwen3_next_80b_a3b_pretrain_128gpu_h100_fp8cs_config qwen3_next_80b_a3b_pretrain_64gpu_b200_bf16_config
qwen3_next_80b_a3b_pretrain_64gpu_b200_fp8mx_config qwen3_next_80b_a3b_pretrain_64gpu_b300_bf16_config
qwen3_next_80b_a3b_pretrain_64gpu_b300_fp8mx_config qwen3_next_80b_a3b_pretrain_64gpu_gb200_bf16_config
qwen3_next_80b_a3b_pretrain_64gpu_gb200_fp8mx_config qwen3_next_80b_a3b_pretrain_64gpu_gb300_bf16_config
qwen3_next_80b_a3b_pretrain_64gpu_gb300_fp8mx_config qwen3_vl_235b_a22b_pretrain_256gpu_h100_bf16_config
qwen3_vl_235b_a22b_pretrain_256gpu_h100_fp8cs_config qwen3_vl_235b_a22b_pretrain_64gpu_b200_bf16_config
qwen3_vl_235b_a22b_pretrain_64gpu_b200_fp8cs_config qwen3_vl_235b_a22b_pretrain_64gpu_b200_fp8mx_config
qwen3_vl_235b_a22b_pretrain_64gpu_gb200_bf16_config qwen3_vl_235b_a22b_pretrain_64gpu_gb200_fp8cs_config
qwen3_vl_235b_a22b_pretrain_64gpu_gb200_fp8mx_config qwen3_vl_235b_a22b_pretrain_64gpu_gb300_bf16_config
qwen3_vl_235b_a22b_pretrain_64gpu_gb300_fp8cs_config qwen3_vl_235b_a22b_pretrain_64gpu_gb300_fp8mx_config
qwen3_vl_30b_a3b_pretrain_16gpu_h100_bf16_config qwen3_vl_30b_a3b_pretrain_16gpu_h100_fp8cs_config
qwen3_vl_30b_a3b_pretrain_8gpu_b200_bf16_config qwen3_vl_30b_a3b_pretrain_8gpu_b200_fp8cs_config
qwen3_vl_30b_a3b_pretrain_8gpu_b200_fp8mx_config qwen3_vl_30b_a3b_pretrain_8gpu_gb200_bf16_config
qwen3_vl_30b_a3b_pretrain_8gpu_gb200_fp8cs_config qwen3_vl_30b_a3b_pretrain_8gpu_gb200_fp8mx_config
qwen3_vl_30b_a3b_pretrain_8gpu_gb300_bf16_config qwen3_vl_30b_a3b_pretrain_8gpu_gb300_fp8cs_config
qwen3_vl_30b_a3b_pretrain_8gpu_gb300_fp8mx_config wan_14b_pretrain_16gpu_gb200_bf16_config
wan_14b_pretrain_32gpu_h100_bf16_config
""".split())

# Each config dataclass: its fields in dataclasses.fields() order, as [name, default] where the
# default is a literal in the source, else the bare name (a default the emulator does not know).
_FIELDS_JSON = (
    "{\"ConfigContainer\":[\"env_vars\",\"rng\",\"rerun_state_machine\",\"train\",\"model\",\"optimizer\",\"optimizer_config_override_pr"
    "ovider\",\"ddp\",\"validation\",\"scheduler\",\"dataset\",\"logger\",\"tokenizer\",\"checkpoint\",\"dist\",[\"ft\",null],[\"straggler\",n"
    "ull],[\"nvrx_straggler\",null],\"profiling\",[\"peft\",null],[\"comm_overlap\",null],[\"mixed_precision\",null],[\"tensor_inspe"
    "ct\",null],[\"inprocess_restart\",null],[\"_checkpoint_load_required\",false]],\"TrainingConfig\":[[\"micro_batch_size\",null"
    "],[\"global_batch_size\",null],[\"rampup_batch_size\",null],[\"step_batch_size_schedule\",null],[\"decrease_batch_size_if_n"
    "eeded\",false],[\"empty_unused_memory_level\",0],[\"check_weight_hash_across_dp_replicas_interval\",null],[\"gpu_sniff_tes"
    "t_interval\",null],[\"train_sync_interval\",null],[\"train_iters\",null],[\"train_samples\",null],[\"exit_interval\",null],[\""
    "exit_duration_in_mins\",null],[\"exit_signal_handler\",false],[\"exit_signal\",\"SIGTERM\"],[\"exit_signal_handler_for_datal"
    "oader\",false],[\"exit_signal_handler_for_training\",false],[\"manual_gc\",false],[\"manual_gc_interval\",0],[\"manual_gc_ev"
    "al\",true],\"iterations_to_skip\",[\"num_epochs\",null],[\"_train_iters_from_num_epochs\",false],[\"check_optimizer_step_suc"
    "cess\",true],[\"skip_sync_grad_norm_across_mp\",false],[\"eval_iters\",null],[\"eval_interval\",null],[\"skip_train\",null]],"
    "\"ValidationConfig\":[[\"eval_iters\",100],[\"eval_interval\",null],[\"start_eval_at_iter\",null],[\"eval_global_batch_size\","
    "null],[\"eval_micro_batch_size\",null],[\"skip_train\",false],[\"test_mode\",false],[\"full_validation\",false],[\"multiple_v"
    "alidation_sets\",false],[\"validation_set_names\",null]],\"RNGConfig\":[[\"seed\",1234],[\"te_rng_tracker\",false],[\"inferenc"
    "e_rng_tracker\",false],[\"data_parallel_random_init\",false]],\"RerunStateMachineConfig\":[[\"error_injection_rate\",0],[\"e"
    "rror_injection_type\",\"transient_error\"],[\"rerun_mode\",\"disabled\"],[\"check_for_nan_in_loss\",true],[\"check_for_spiky_l"
    "oss\",false],[\"spiky_loss_factor\",10.0]],\"OptimizerConfig\":[[\"lr\",null],[\"min_lr\",null],[\"decoupled_lr\",null],[\"decou"
    "pled_min_lr\",null],[\"weight_decay\",0.01],[\"apply_wd_to_qk_layernorm\",false],[\"fp8_recipe\",null],[\"fp16\",false],[\"bf1"
    "6\",false],[\"reuse_grad_buf_for_mxfp8_param_ag\",false],[\"params_dtype\",\"torch.float32\"],[\"use_precision_aware_optimiz"
    "er\",false],[\"store_param_remainders\",true],[\"main_grads_dtype\",\"torch.float32\"],[\"main_params_dtype\",\"torch.float32\""
    "],[\"exp_avg_dtype\",\"torch.float32\"],[\"exp_avg_sq_dtype\",\"torch.float32\"],[\"optimizer\",\"adam\"],[\"loss_scale\",null],\"i"
    "nitial_loss_scale\",[\"min_loss_scale\",1.0],[\"loss_scale_window\",1000],[\"hysteresis\",2],[\"adam_beta1\",0.9],[\"adam_beta"
    "2\",0.999],[\"adam_eps\",1e-08],[\"decoupled_weight_decay\",true],[\"sgd_momentum\",0.9],[\"muon_momentum\",0.95],[\"muon_spli"
    "t_qkv\",true],[\"muon_nesterov\",false],[\"muon_scale_mode\",\"spectral\"],[\"muon_fp32_matmul_prec\",\"medium\"],[\"muon_coeffi"
    "cient_type\",\"quintic\"],[\"muon_num_ns_steps\",5],[\"muon_tp_mode\",\"blockwise\"],[\"muon_use_syrk\",false],[\"muon_extra_sca"
    "le_factor\",1.0],[\"muon_scalar_optimizer\",\"adam\"],[\"lion_beta1\",0.95],[\"lion_beta2\",0.98],[\"soap_shampoo_beta\",0.95],"
    "[\"soap_precondition_frequency\",1],[\"soap_use_kl_shampoo\",true],[\"adaptive_muon_moment2_method\",\"adamuon\"],[\"adaptive"
    "_muon_beta2\",0.95],[\"adaptive_muon_eps\",1e-08],[\"use_distributed_optimizer\",false],[\"use_layer_wise_distributed_opti"
    "mizer\",false],[\"overlap_param_gather\",false],[\"overlap_param_gather_with_optimizer_step\",false],[\"optimizer_cpu_offl"
    "oad\",false],[\"optimizer_offload_fraction\",0.0],[\"use_torch_optimizer_for_cpu_offload\",false],[\"overlap_cpu_optimizer"
    "_d2h_h2d\",false],[\"pin_cpu_grads\",true],[\"pin_cpu_params\",true],[\"clip_grad\",1.0],\"grad_norm_skip_threshold\",[\"log_n"
    "um_zeros_in_grad\",false],[\"barrier_with_L1_time\",false],[\"timers\",null],[\"config_logger_dir\",\"\"],[\"optimizer_cuda_gr"
    "aph\",false]],\"OptimizerConfigOverrideProvider\":[],\"DistributedDataParallelConfig\":[[\"grad_reduce_in_fp32\",false],[\"o"
    "verlap_grad_reduce\",false],[\"overlap_param_gather\",false],[\"align_param_gather\",false],[\"use_distributed_optimizer\","
    "false],[\"num_distributed_optimizer_instances\",1],[\"check_for_nan_in_grad\",false],[\"check_for_large_grads\",false],[\"b"
    "ucket_size\",null],[\"num_buckets\",null],[\"pad_buckets_for_high_nccl_busbw\",false],[\"reduce_scatter_with_fp32_accumula"
    "tion\",false],\"param_name_patterns_for_fp32_local_accumulation\",[\"average_in_collective\",false],[\"fp8_param_gather\",f"
    "alse],[\"fp4_param_gather\",false],[\"reuse_grad_buf_for_mxfp8_param_ag\",false],[\"use_megatron_fsdp\",false],[\"megatron_"
    "fsdp_version\",1],[\"use_custom_fsdp\",false],[\"data_parallel_sharding_strategy\",\"no_shard\"],[\"gradient_reduce_div_fusi"
    "on\",true],[\"suggested_communication_unit_size\",null],[\"keep_fp8_transpose_cache\",false],[\"nccl_ub\",false],[\"fsdp_dou"
    "ble_buffer\",false],[\"fsdp_db_use_persist_buf_on_alloc_fail\",false],[\"fsdp_all_gather_in_start_param_sync\",true],[\"ou"
    "ter_dp_sharding_strategy\",\"no_shard\"],[\"disable_symmetric_registration\",false],[\"fsdp_manual_registration\",false],[\""
    "delay_wgrad_compute\",false],[\"megatron_fsdp_main_params_dtype\",\"torch.float32\"],[\"megatron_fsdp_main_grads_dtype\",nu"
    "ll],[\"megatron_fsdp_grad_comm_dtype\",null],[\"megatron_fsdp_use_decoupled_grad\",false],[\"megatron_fsdp_cuda_graph_mod"
    "e\",false],[\"megatron_fsdp_enable_fine_grained_param_gather\",false],[\"megatron_fsdp_max_pool_double_buffer\",false]],\""
    "SchedulerConfig\":[[\"lr_decay_style\",\"linear\"],[\"lr_wsd_decay_style\",\"exponential\"],[\"lr_decay_iters\",null],[\"lr_deca"
    "y_samples\",null],[\"lr_wsd_decay_iters\",null],[\"lr_wsd_decay_samples\",null],[\"lr_warmup_fraction\",null],[\"lr_warmup_i"
    "ters\",0],[\"lr_warmup_samples\",0],[\"lr_warmup_init\",0.0],[\"lr_decay_steps\",null],[\"lr_warmup_steps\",null],[\"override_"
    "opt_param_scheduler\",false],[\"use_checkpoint_opt_param_scheduler\",false],[\"start_weight_decay\",null],[\"end_weight_de"
    "cay\",null],[\"weight_decay_incr_style\",\"constant\"],[\"no_weight_decay_cond_type\",null],[\"wd_incr_steps\",null],[\"wsd_de"
    "cay_steps\",null],[\"max_steps\",null]],\"GPTDatasetConfig\":[\"random_seed\",\"sequence_length\",[\"blend\",null],[\"blend_per_"
    "split\",null],[\"multiple_validation_sets\",null],[\"full_validation\",null],[\"split\",null],[\"split_matrix\",null],[\"num_d"
    "ataset_builder_threads\",1],[\"path_to_cache\",null],[\"mmap_bin_files\",true],[\"mock\",false],[\"tokenizer\",null],[\"mid_le"
    "vel_dataset_surplus\",0.005],[\"allow_ambiguous_pad_tokens\",false],[\"fast_cache_load\",false],[\"defer_npy_index_mmap\",f"
    "alse],[\"reset_position_ids\",null],[\"reset_attention_mask\",null],[\"eod_mask_loss\",null],[\"create_attention_mask\",true"
    "],[\"drop_last_partial_validation_sequence\",true],[\"add_extra_token_to_sequence\",true],[\"object_storage_cache_path\",n"
    "ull],[\"data_parallel_size\",1],[\"sequence_parallel_size\",0],[\"hybrid_context_parallel\",false],[\"sequences_per_dataset"
    "\",null],[\"token_dtype_code\",null],[\"context_parallel_size\",null],[\"inter_document_masking\",false],[\"dataloader_type\""
    ",null],[\"num_workers\",2],[\"data_sharding\",true],[\"pin_memory\",true],[\"drop_last\",true],[\"persistent_workers\",true],["
    "\"trust_remote_code\",null],[\"dataloader_save\",null],[\"dataloader_load\",null],\"seq_length\",[\"data_path\",null],[\"per_da"
    "taset_sequences_path\",null]],\"MockGPTDatasetConfig\":[\"random_seed\",\"sequence_length\",[\"blend\",null],[\"blend_per_spli"
    "t\",null],[\"multiple_validation_sets\",null],[\"full_validation\",null],[\"split\",null],[\"split_matrix\",null],[\"num_datas"
    "et_builder_threads\",1],[\"path_to_cache\",null],[\"mmap_bin_files\",true],[\"mock\",false],[\"tokenizer\",null],[\"mid_level_"
    "dataset_surplus\",0.005],[\"allow_ambiguous_pad_tokens\",false],[\"fast_cache_load\",false],[\"defer_npy_index_mmap\",false"
    "],[\"reset_position_ids\",null],[\"reset_attention_mask\",null],[\"eod_mask_loss\",null],[\"create_attention_mask\",true],[\""
    "drop_last_partial_validation_sequence\",true],[\"add_extra_token_to_sequence\",true],[\"object_storage_cache_path\",null]"
    ",[\"data_parallel_size\",1],[\"sequence_parallel_size\",0],[\"hybrid_context_parallel\",false],[\"sequences_per_dataset\",nu"
    "ll],[\"token_dtype_code\",null],[\"context_parallel_size\",null],[\"inter_document_masking\",false],[\"dataloader_type\",nul"
    "l],[\"num_workers\",2],[\"data_sharding\",true],[\"pin_memory\",true],[\"drop_last\",true],[\"persistent_workers\",true],[\"tru"
    "st_remote_code\",null],[\"dataloader_save\",null],[\"dataloader_load\",null],\"seq_length\",[\"data_path\",null],[\"per_datase"
    "t_sequences_path\",null]],\"GPTSFTDatasetConfig\":[[\"dataloader_type\",\"batch\"],[\"num_workers\",2],[\"data_sharding\",true]"
    ",[\"pin_memory\",true],[\"drop_last\",true],[\"persistent_workers\",true],[\"trust_remote_code\",null],[\"dataloader_save\",nu"
    "ll],[\"dataloader_load\",null],\"seq_length\",[\"dataset_root\",null],[\"hf_dataset\",null],[\"hf_validation_dataset\",null],["
    "\"hf_test_dataset\",null],[\"hf_output_root\",null],[\"hf_validation_proportion\",null],[\"hf_rewrite\",false],[\"seed\",1234]"
    ",[\"memmap_workers\",1],[\"max_train_samples\",null],[\"preprocessing\",null],[\"enable_offline_packing\",false],[\"offline_p"
    "acking_specs\",null],[\"dataset_kwargs\",null],[\"do_validation\",true],[\"do_test\",true]],\"PackedSequenceSpecs\":[[\"packed"
    "_sequence_size\",-1],[\"max_single_sequence_length\",null],[\"tokenizer_model_name\",null],[\"num_tokenizer_workers\",-1],["
    "\"packed_train_data_path\",null],[\"packed_val_data_path\",null],[\"packed_metadata_path\",null],[\"pad_cu_seqlens\",false],"
    "[\"pad_seq_to_mult\",1]],\"LoggerConfig\":[[\"log_interval\",100],[\"log_params_norm\",false],[\"log_throughput\",false],[\"log"
    "_throughput_to_tensorboard\",false],[\"throughput_window_size\",100],[\"log_progress\",false],[\"timing_log_level\",0],[\"ti"
    "ming_log_option\",\"minmax\"],[\"tensorboard_dir\",null],[\"tensorboard_log_interval\",1],[\"tensorboard_queue_size\",1000],["
    "\"log_timers_to_tensorboard\",false],[\"log_loss_scale_to_tensorboard\",true],[\"log_validation_ppl_to_tensorboard\",false"
    "],[\"log_memory_to_tensorboard\",false],[\"memory_keys\",null],[\"log_memory_interval\",null],[\"log_device_memory_used\",fa"
    "lse],[\"log_l2_norm_grad_to_tensorboard\",false],[\"log_num_zeros_in_grad\",false],[\"log_max_attention_logit\",false],[\"l"
    "og_runtime_to_tensorboard\",false],[\"runtime_time_unit\",\"hours\"],[\"barrier_with_L1_time\",true],[\"log_world_size_to_te"
    "nsorboard\",false],[\"wandb_project\",null],[\"wandb_exp_name\",null],[\"wandb_save_dir\",null],[\"wandb_entity\",null],[\"log"
    "ging_level\",null],[\"filter_warnings\",true],[\"modules_to_filter\",null],[\"set_level_for_all_loggers\",false],[\"log_ener"
    "gy\",false],[\"save_config_filepath\",null],[\"moe_routing_trace_path\",null],[\"moe_routing_trace_max_training_iters\",nul"
    "l],[\"moe_routing_trace_capture_logits\",false],[\"moe_routing_trace_capture_hidden_states\",false],[\"moe_routing_trace_"
    "dump_weights\",false],[\"skip_train_metrics_log\",false],[\"mlflow_experiment\",null],[\"mlflow_run_name\",null],[\"mlflow_t"
    "racking_uri\",null],[\"mlflow_tags\",null],[\"mlflow_description\",null],[\"mlflow_log_artifacts\",true],[\"comet_project\",n"
    "ull],[\"comet_experiment_name\",null],[\"comet_workspace\",null],[\"comet_api_key\",null],[\"comet_tags\",null]],\"TokenizerC"
    "onfig\":[[\"vocab_size\",null],[\"padded_vocab_size\",null],[\"pad_vocab_size\",true],[\"vocab_file\",null],[\"merge_file\",nul"
    "l],[\"vocab_extra_ids\",0],[\"tokenizer_type\",null],[\"tokenizer_model\",null],[\"metadata_path\",null],[\"special_tokens\",n"
    "ull],[\"tiktoken_pattern\",null],[\"tiktoken_num_special_tokens\",1000],[\"tokenizer_sentencepiece_legacy\",false],[\"token"
    "izer_sentencepiece_ignore_extra_whitespaces\",true],[\"tokenizer_hf_no_use_fast\",false],[\"tokenizer_hf_no_include_spec"
    "ial_tokens\",false],[\"trust_remote_code\",false],[\"null_tokenizer_eod_id\",null],[\"null_tokenizer_pad_id\",-1],[\"chat_te"
    "mplate\",null],[\"make_vocab_size_divisible_by\",1],[\"tensor_model_parallel_size\",1],[\"rank\",0],[\"use_tokenizer_vocab_s"
    "ize\",false],\"hf_tokenizer_kwargs\",\"sp_tokenizer_kwargs\",[\"chat_template_path\",null],[\"tokenizer_prompt_format\",null]"
    ",[\"image_tag_type\",null],[\"force_system_message\",false]],\"CheckpointConfig\":[[\"save\",null],[\"save_interval\",null],[\""
    "save_params_interval\",null],[\"save_activations_interval\",null],[\"save_tokens_per_expert_interval\",null],[\"save_wgrad"
    "s_interval\",null],[\"save_dgrads_interval\",null],[\"save_retain_interval\",null],[\"most_recent_k\",-1],[\"save_optim\",tru"
    "e],[\"save_rng\",true],[\"load\",null],[\"load_optim\",true],[\"load_main_params_from_ckpt\",false],[\"load_rng\",true],[\"non_"
    "persistent_save_interval\",null],[\"non_persistent_ckpt_type\",null],[\"non_persistent_global_ckpt_dir\",null],[\"non_pers"
    "istent_local_ckpt_dir\",null],[\"non_persistent_local_ckpt_algo\",\"fully_parallel\"],[\"finetune\",false],[\"pretrained_che"
    "ckpoint\",null],[\"ckpt_step\",null],[\"use_checkpoint_args\",false],[\"use_mp_args_from_checkpoint_args\",false],[\"use_tok"
    "enizer_model_from_checkpoint_args\",true],[\"exit_on_missing_checkpoint\",false],[\"ckpt_format\",\"torch_dist\"],[\"auto_de"
    "tect_ckpt_format\",false],[\"ckpt_convert_format\",null],[\"ckpt_convert_save\",null],[\"ckpt_convert_update_legacy_dist_o"
    "pt_format\",false],[\"fully_parallel_save\",true],[\"async_save\",false],[\"async_strategy\",\"nvrx\"],[\"use_persistent_ckpt_"
    "worker\",true],[\"async_ckpt_cpu_priority\",10],[\"async_ckpt_io_priority\",3],[\"async_ckpt_use_cpu_shm\",false],[\"fully_p"
    "arallel_load\",false],[\"ckpt_fully_parallel_load_exchange_algo\",\"broadcast\"],[\"ckpt_fully_parallel_load_per_rank_obje"
    "cts\",false],[\"ckpt_fully_parallel_save_process_group\",\"dp\"],[\"ckpt_fully_parallel_load_process_group\",\"dp\"],[\"ckpt_a"
    "ssume_constant_structure\",false],[\"ckpt_load_validate_sharding_integrity\",true],[\"strict_fsdp_dtensor_load\",false],["
    "\"dist_ckpt_strictness\",\"assume_ok_unexpected\"],[\"dist_ckpt_save_pre_mcore_014\",false],[\"dist_ckpt_optim_fully_reshar"
    "dable\",false],[\"distrib_optim_fully_reshardable_mem_efficient\",false],[\"save_tokenizer_assets\",true],[\"replication\","
    "false],[\"replication_jump\",null],[\"replication_factor\",2],[\"verify_integrity\",false],[\"storage_writers_per_rank\",1],"
    "[\"async_write_results_mp_mode\",\"fork\"],[\"custom_manager_class\",null],[\"dist_ckpt_workers\",1],[\"also_save_hf_checkpoi"
    "nt\",false],[\"hf_source_path\",null],[\"hf_trust_remote_code\",false],[\"hf_distributed_save\",false],[\"hf_save_every_n_ra"
    "nks\",1]],\"DistributedInitConfig\":[[\"distributed_backend\",\"nccl\"],[\"distributed_timeout_minutes\",10],[\"align_grad_red"
    "uce\",true],\"local_rank\",[\"lazy_mpu_init\",false],[\"use_megatron_fsdp\",false],[\"use_torch_fsdp2\",false],[\"nccl_communi"
    "cator_config_path\",null],[\"use_tp_pp_dp_mapping\",false],[\"use_gloo_process_groups\",true],[\"use_sharp\",false],[\"sharp"
    "_enabled_group\",null],\"high_priority_stream_groups\",[\"distributed_timeout_seconds_after_init\",null],[\"flight_recorde"
    "r_dump_path\",null],[\"flight_recorder_trace_buffer_size\",2000],[\"flight_recorder_dump_on_timeout\",true],[\"flight_reco"
    "rder_include_stack_trace\",false],[\"flight_recorder_include_only_active\",true],[\"flight_recorder_extra_dump_on_exec\","
    "true],[\"disable_jit_fuser\",false],[\"external_gpu_device_mapping\",false],[\"enable_megatron_core_experimental\",false],"
    "[\"use_decentralized_pg\",false],[\"eval_context_parallel_size\",null]],\"ProfilingConfig\":[[\"use_nsys_profiler\",false],["
    "\"profile_step_start\",10],[\"profile_step_end\",12],[\"use_pytorch_profiler\",false],[\"pytorch_profiler_collect_shapes\",f"
    "alse],[\"pytorch_profiler_collect_callstack\",false],[\"pytorch_profiler_collect_chakra\",false],\"profile_ranks\",[\"recor"
    "d_memory_history\",false],[\"memory_snapshot_path\",\"/nemo_run/snapshot.pickle\"],[\"record_shapes\",false],[\"nvtx_ranges\""
    ",false]],\"LoRA\":[\"params_to_save\",\"target_modules\",\"exclude_modules\",\"canonical_mapping\",\"_pattern_to_alias\",\"_alias"
    "_to_pattern\",\"_alias_matches\",[\"dim\",32],[\"alpha\",32],[\"dropout\",0.0],[\"dropout_position\",\"pre\"],[\"sequence_parallel"
    "_input_regather\",false],[\"lora_A_init_method\",\"xavier\"],[\"lora_B_init_method\",\"zero\"],[\"a2a_experimental\",false],[\"l"
    "ora_dtype\",null],[\"normalize_moe_lora\",false],[\"share_expert_adapters\",true],[\"experts_shared_outer_loras\",false]],\""
    "DoRA\":[\"params_to_save\",\"target_modules\",\"exclude_modules\",\"canonical_mapping\",\"_pattern_to_alias\",\"_alias_to_patter"
    "n\",\"_alias_matches\",[\"dim\",32],[\"alpha\",64],[\"dropout\",0.0],[\"dropout_position\",\"pre\"],[\"lora_A_init_method\",\"xavier"
    "\"],[\"lora_B_init_method\",\"zero\"]],\"MixedPrecisionConfig\":[[\"fp32\",false],[\"fp16\",false],[\"bf16\",false],[\"params_dtyp"
    "e\",null],[\"pipeline_dtype\",null],[\"autocast_dtype\",null],[\"autocast_enabled\",false],[\"grad_reduce_in_fp32\",true],[\"f"
    "p8\",null],[\"fp8_recipe\",\"tensorwise\"],[\"first_last_layers_bf16\",false],[\"fp8_margin\",0],[\"fp8_amax_history_len\",1],["
    "\"fp8_amax_compute_algo\",\"most_recent\"],[\"fp8_wgrad\",true],[\"fp8_dot_product_attention\",false],[\"fp8_multi_head_atten"
    "tion\",false],[\"fp8_param\",null],[\"fp8_param_gather\",false],[\"fp4\",null],[\"fp4_recipe\",\"nvfp4\"],[\"fp4_param\",null],[\""
    "fp4_param_gather\",false],[\"loss_scale\",null],[\"initial_loss_scale\",4294967296],[\"min_loss_scale\",1.0],[\"loss_scale_w"
    "indow\",1000],[\"hysteresis\",2],[\"num_layers_at_start_in_bf16\",0],[\"num_layers_at_end_in_bf16\",0],[\"reuse_grad_buf_for"
    "_mxfp8_param_ag\",false]],\"BridgeGPTModelConfig\":[[\"restore_modelopt_state\",false],[\"extra_checkpoint_metadata\",null]"
    ",\"pre_wrap_hooks\",\"post_wrap_hooks\",\"transformer\",[\"transformer_layer_spec\",null],[\"vocab_size\",null],[\"make_vocab_s"
    "ize_divisible_by\",128],[\"should_pad_vocab\",false],[\"seq_length\",1024],[\"fp16_lm_cross_entropy\",false],[\"logit_dtype\""
    ",null],[\"parallel_output\",true],[\"share_embeddings_and_output_weights\",false],[\"position_embedding_type\",\"learned_ab"
    "solute\"],[\"rotary_percent\",1.0],[\"rotary_base\",10000],[\"rope_scaling\",false],[\"rope_scaling_factor\",8.0],[\"scatter_e"
    "mbedding_sequence_parallel\",true],[\"seq_len_interpolation_factor\",null],[\"tp_comm_overlap_cfg\",null],[\"use_arbitrary"
    "_attention_mask\",null]],\"TransformerConfig\":[[\"tensor_model_parallel_size\",1],[\"tensor_parallel_num_weight_shards\",n"
    "ull],[\"gtp_weight_remat_size\",1],[\"pipeline_model_parallel_comm_backend\",null],[\"pipeline_model_parallel_size\",1],[\""
    "virtual_pipeline_model_parallel_size\",null],[\"sequence_parallel\",false],[\"context_parallel_size\",1],[\"hierarchical_c"
    "ontext_parallel_sizes\",null],[\"max_seqlen_per_dp_cp_rank\",null],[\"hybrid_context_parallel\",false],[\"expert_model_par"
    "allel_size\",1],[\"expert_tensor_parallel_size\",null],[\"expert_tensor_parallel_num_weight_shards\",null],[\"expert_gtp_w"
    "eight_remat_size\",1],[\"perform_initialization\",true],[\"use_cpu_initialization\",false],[\"fp16\",false],[\"bf16\",false],"
    "[\"params_dtype\",\"torch.float32\"],[\"timers\",null],[\"finalize_model_grads_func\",null],[\"grad_scale_func\",null],[\"moe_g"
    "rad_scale_func\",null],[\"mtp_grad_scale_func\",null],[\"no_sync_func\",null],[\"grad_sync_func\",null],[\"param_sync_func\","
    "null],[\"deterministic_mode\",false],[\"enable_autocast\",false],[\"autocast_dtype\",null],[\"num_microbatches_with_partial"
    "_activation_checkpoints\",null],[\"gradient_accumulation_fusion\",false],[\"use_te_rng_tracker\",false],[\"tp_comm_overlap"
    "\",false],[\"tp_comm_bulk_wgrad\",true],[\"tp_comm_bulk_dgrad\",true],[\"tp_comm_overlap_ag\",true],[\"tp_comm_overlap_rs\",t"
    "rue],[\"tp_comm_overlap_rs_dgrad\",false],[\"tp_comm_split_ag\",true],[\"tp_comm_atomic_ag\",false],[\"tp_comm_split_rs\",tr"
    "ue],[\"tp_comm_atomic_rs\",false],[\"cross_entropy_loss_fusion\",false],[\"cross_entropy_fusion_impl\",\"native\"],[\"tp_comm"
    "_overlap_disable_qkv\",false],[\"tp_comm_overlap_disable_fc1\",false],[\"tp_comm_bootstrap_backend\",\"nccl\"],[\"overlap_mo"
    "e_expert_parallel_comm\",false],[\"delay_wgrad_compute\",false],[\"overlap_dispatch_backward_with_experts_wgrad\",false],"
    "[\"ep_overlap_early_attn_memory_release\",false],[\"pipeline_dtype\",null],[\"variable_seq_lengths\",false],[\"overlap_p2p_"
    "comm\",false],[\"batch_p2p_comm\",true],[\"batch_p2p_sync\",true],[\"use_ring_exchange_p2p\",false],[\"deallocate_pipeline_o"
    "utputs\",false],[\"defer_embedding_wgrad_compute\",false],[\"wgrad_deferral_limit\",0],[\"overlap_p2p_comm_warmup_flush\",f"
    "alse],[\"microbatch_group_size_per_vp_stage\",null],[\"mtp_standalone\",false],[\"cpu_offloading\",false],[\"cpu_offloading"
    "_num_layers\",0],[\"_cpu_offloading_context\",null],[\"cpu_offloading_activations\",true],[\"cpu_offloading_weights\",false"
    "],[\"cpu_offloading_double_buffering\",false],[\"cpu_offloading_retain_pinned_cpu_buffers\",false],[\"barrier_with_L1_tim"
    "e\",true],[\"num_layers\",0],[\"mtp_num_layers\",null],[\"mtp_loss_scaling_factor\",0.1],[\"mtp_use_repeated_layer\",false],["
    "\"mtp_detach_heads\",false],[\"mtp_hybrid_override_pattern\",null],[\"num_layers_in_first_pipeline_stage\",null],[\"num_lay"
    "ers_in_last_pipeline_stage\",null],[\"pipeline_model_parallel_layout\",null],[\"account_for_embedding_in_pipeline_split\""
    ",false],[\"account_for_loss_in_pipeline_split\",false],[\"hidden_size\",0],[\"num_attention_heads\",0],\"attention_backend\""
    ",[\"flash_attention_version\",null],[\"softmax_scale\",null],[\"softmax_type\",\"vanilla\"],[\"num_query_groups\",null],[\"ffn_"
    "hidden_size\",null],[\"kv_channels\",null],[\"hidden_dropout\",0.1],[\"attention_dropout\",0.1],[\"fp32_residual_connection\""
    ",false],[\"apply_residual_connection_post_layernorm\",false],[\"layernorm_epsilon\",1e-05],[\"layernorm_zero_centered_gam"
    "ma\",false],[\"add_bias_linear\",true],[\"add_qkv_bias\",false],[\"gated_linear_unit\",false],\"activation_func\",[\"activatio"
    "n_func_fp8_input_store\",false],[\"glu_linear_offset\",0.0],[\"activation_func_clamp_value\",null],[\"num_moe_experts\",nul"
    "l],[\"rotary_interleaved\",false],[\"window_size\",null],[\"window_attn_skip_freq\",null],[\"normalization\",\"LayerNorm\"],[\""
    "qk_layernorm\",false],[\"qk_l2_norm\",false],[\"qk_clip\",false],[\"qk_clip_alpha\",0.5],[\"qk_clip_threshold\",100],[\"log_ma"
    "x_attention_logit\",false],[\"attention_output_gate\",false],[\"test_mode\",false],[\"calculate_per_token_loss\",false],[\"m"
    "ulti_latent_attention\",false],[\"no_rope_freq\",null],[\"experimental_attention_variant\",null],[\"experimental_attention"
    "_variant_loss_scale_func\",null],[\"dsa_indexer_n_heads\",null],[\"dsa_indexer_head_dim\",null],[\"dsa_indexer_topk\",null]"
    ",[\"dsa_indexer_topk_freq\",1],[\"dsa_indexer_skip_topk_offset\",0],[\"dsa_indexer_loss_coeff\",null],[\"dsa_indexer_use_sp"
    "arse_loss\",false],[\"dsa_kernel_backend\",\"none\"],[\"dsa_indexer_rope_interleaved\",false],[\"dsa_indexer_rotate_activati"
    "on\",true],[\"dsa_indexer_scoring_relu\",true],[\"dsa_indexer_k_norm_epsilon\",null],[\"dsa_indexer_k_norm_fp32\",false],[\""
    "linear_attention_freq\",null],[\"linear_conv_kernel_dim\",4],[\"linear_key_head_dim\",128],[\"linear_value_head_dim\",128],"
    "[\"linear_num_key_heads\",16],[\"linear_num_value_heads\",32],[\"init_method\",null],[\"output_layer_init_method\",null],[\"i"
    "nit_method_std\",0.02],[\"embedding_init_method\",null],[\"embedding_init_method_std\",null],[\"init_model_with_meta_devic"
    "e\",false],[\"use_mup\",false],[\"mup_width_mult\",1.0],[\"mup_base_hidden_size\",null],[\"mup_embedding_mult\",1.0],[\"mup_ou"
    "tput_mult\",1.0],[\"mup_base_head_dim\",null],[\"mup_attn_scale_power\",1.0],[\"apply_query_key_layer_scaling\",false],[\"at"
    "tention_softmax_in_fp32\",true],[\"disable_bf16_reduced_precision_matmul\",false],[\"bias_activation_fusion\",false],[\"ma"
    "sked_softmax_fusion\",false],[\"persist_layer_norm\",false],[\"memory_efficient_layer_norm\",false],[\"bias_dropout_fusion"
    "\",false],[\"apply_rope_fusion\",false],[\"use_fused_weighted_squared_relu\",false],[\"fused_single_qkv_rope\",false],[\"fus"
    "ed_residual_rmsnorm\",false],[\"use_transformer_engine_op_fuser\",false],[\"recompute_granularity\",null],[\"recompute_met"
    "hod\",null],[\"recompute_num_layers\",null],[\"distribute_saved_activations\",false],[\"recompute_modules\",null],[\"fp8\",nu"
    "ll],[\"fp8_recipe\",\"delayed\"],[\"fp8_param\",false],[\"fp8_quantizer_factory\",null],[\"fp8_margin\",0],[\"fp8_interval\",1],"
    "[\"fp8_amax_history_len\",1],[\"fp8_amax_compute_algo\",\"most_recent\"],[\"fp8_wgrad\",true],[\"fp8_output_proj\",false],[\"fp"
    "8_dot_product_attention\",false],[\"fp8_multi_head_attention\",false],[\"tp_only_amax_red\",false],[\"first_last_layers_bf"
    "16\",false],[\"num_layers_at_start_in_bf16\",1],[\"num_layers_at_end_in_bf16\",1],[\"use_kitchen\",false],[\"use_kitchen_att"
    "ention\",false],[\"kitchen_attention_backend\",\"sdpa\"],[\"fp4\",null],[\"fp4_recipe\",\"nvfp4\"],[\"fp4_param\",false],[\"fp4_qu"
    "antizer_factory\",null],[\"high_priority_a2a_comm_stream\",false],[\"moe_shared_expert_intermediate_size\",null],[\"moe_sh"
    "ared_expert_gate\",false],[\"moe_shared_expert_overlap\",false],[\"use_grouped_gemm_for_shared_expert\",false],[\"moe_shar"
    "ed_expert_glu_interleave_size\",null],[\"moe_layer_freq\",1],[\"moe_ffn_hidden_size\",null],[\"moe_router_load_balancing_t"
    "ype\",\"aux_loss\"],[\"moe_router_topk\",2],[\"moe_enable_routing_replay\",false],[\"moe_router_topk_limited_devices\",null],"
    "[\"moe_router_padding_for_quantization\",false],[\"moe_router_padding_for_fp8\",false],[\"moe_router_num_groups\",null],[\""
    "moe_router_group_topk\",null],[\"moe_router_pre_softmax\",false],[\"moe_router_topk_scaling_factor\",null],[\"moe_router_s"
    "core_function\",\"softmax\"],[\"moe_router_dtype\",null],[\"moe_router_enable_expert_bias\",false],[\"moe_router_bias_update"
    "_rate\",0.001],[\"moe_router_quantile_balancing_ema\",0.0],[\"moe_router_force_load_balancing\",false],[\"moe_router_force"
    "_biased\",null],[\"use_grouped_gemm_for_dense_mlp\",false],[\"moe_grouped_gemm\",false],[\"moe_single_grouped_weight\",fals"
    "e],[\"moe_single_grouped_bias\",false],[\"moe_aux_loss_coeff\",0.0],[\"moe_z_loss_coeff\",null],[\"moe_input_jitter_eps\",nu"
    "ll],[\"moe_token_dropping\",false],[\"moe_token_dispatcher_type\",\"allgather\"],[\"moe_enable_deepep\",false],[\"moe_flex_di"
    "spatcher_backend\",\"deepep\"],[\"moe_permute_fusion_into_hybridep\",false],[\"moe_hybridep_pad_uneven_dispatch_inputs\",fa"
    "lse],[\"moe_per_layer_logging\",false],[\"moe_expert_capacity_factor\",null],[\"moe_pad_expert_input_to_capacity\",false],"
    "[\"moe_pad_experts_for_cuda_graph_inference\",false],[\"moe_token_drop_policy\",\"probs\"],[\"moe_layer_recompute\",false],["
    "\"moe_permute_fusion\",false],[\"moe_router_fusion\",false],[\"moe_apply_probs_on_input\",false],[\"moe_latent_size\",null],"
    "\"gtp_remat_opt_in_modules\",[\"moe_flex_dispatcher_num_sms\",null],[\"moe_deepep_num_sms\",null],[\"moe_hybridep_num_sms\","
    "null],[\"moe_hybridep_num_blocks_permute\",null],[\"moe_hybridep_num_blocks_unpermute\",null],[\"moe_hybridep_num_sms_pre"
    "processing\",108],[\"moe_ncclep_zero_copy\",false],[\"moe_mlp_glu_interleave_size\",null],[\"moe_expert_rank_capacity_fact"
    "or\",null],[\"cp_comm_type\",null],[\"enable_cuda_graph\",false],[\"cuda_graph_use_single_mempool\",true],[\"cuda_graph_reta"
    "in_backward_graph\",false],[\"cuda_graph_warmup_steps\",3],[\"external_cuda_graph\",false],[\"cuda_graph_impl\",\"none\"],[\"c"
    "uda_graph_modules\",\"full\"],[\"inference_cuda_graph_scope\",null],[\"cuda_graph_scope\",null],[\"clone_scatter_output_in_e"
    "mbedding\",true],[\"disable_parameter_transpose_cache\",false],[\"config_logger_dir\",\"\"],[\"flash_decode\",false],[\"batch_"
    "invariant_mode\",false],[\"use_te_activation_func\",false],[\"inference_rng_tracker\",false],[\"inference_sampling_seed\",4"
    "2],[\"symmetric_ar_type\",null],[\"nccl_all_reduce_for_prefill\",false],[\"use_inference_optimized_layers\",false],[\"infer"
    "ence_fuse_tp_communication\",false],[\"inference_disable_triton_nvls_kernels\",false],[\"inference_grouped_gemm_backend\""
    ",\"vllm\"],[\"inference_moe_disable_fused_quant_kernels\",false],[\"inference_moe_token_dispatcher_type\",\"nvls\"],[\"mrope_"
    "section\",null],[\"is_hybrid_model\",false],[\"mamba_state_dim\",128],[\"mamba_head_dim\",64],[\"mamba_num_groups\",8],[\"mamb"
    "a_num_heads\",null],[\"gdp_num_householder\",3],[\"mamba_training_ssm_states_dtype\",null],[\"use_mamba_mem_eff_path\",true"
    "],[\"mlp_chunks_for_prefill\",1],[\"mlp_chunks_for_training\",1],[\"heterogeneous_block_specs\",false],[\"hetereogenous_dis"
    "t_checkpoint\",false],[\"quant_recipe\",null],[\"transformer_impl\",\"transformer_engine\"],[\"fine_grained_activation_offlo"
    "ading\",false],\"offload_modules\",\"min_offloaded_tensor_size\",[\"delay_offload_until_cuda_graph\",false],[\"delta_offload"
    "_bytes_across_pp_ranks\",0],[\"activation_offload_fraction\",1.0],[\"moe_paged_stash\",false],[\"moe_paged_stash_page_size"
    "\",64],[\"moe_paged_stash_buffer_size_factor_cuda\",1.1],[\"moe_paged_stash_buffer_size_factor_cpu\",0.0],[\"fine_grained_"
    "offloading_max_inflight_offloads\",null]],\"GPTModelProvider+\":[[\"cross_entropy_loss_fusion\",true],[\"deallocate_pipeli"
    "ne_outputs\",true],[\"attention_softmax_in_fp32\",false],[\"masked_softmax_fusion\",true],[\"fp16_lm_cross_entropy\",false]"
    ",[\"logit_dtype\",null],[\"parallel_output\",true],[\"share_embeddings_and_output_weights\",true],[\"make_vocab_size_divisi"
    "ble_by\",128],[\"position_embedding_type\",\"learned_absolute\"],[\"rotary_base\",10000],[\"rotary_percent\",1.0],[\"rope_scal"
    "ing\",false],[\"rope_scaling_factor\",1.0],[\"rotary_scaling_factor\",null],[\"seq_len_interpolation_factor\",null],[\"yarn_"
    "rotary_scaling_factor\",null],[\"yarn_original_max_position_embeddings\",null],[\"yarn_beta_fast\",null],[\"yarn_beta_slow"
    "\",null],[\"yarn_mscale\",null],[\"yarn_mscale_all_dim\",null],[\"yarn_correction_range_round_to_int\",null],[\"seq_length\","
    "1024],[\"scatter_embedding_sequence_parallel\",true],[\"tp_comm_overlap_cfg\",null],[\"use_transformer_engine_full_layer_"
    "spec\",false],[\"dense_grouped_gemm\",false],\"transformer_layer_spec\",[\"hf_model_id\",null],[\"hf_model_revision\",null],["
    "\"vocab_size\",null],[\"should_pad_vocab\",false],[\"mtp_enabled\",false],[\"restore_modelopt_state\",false],[\"use_arbitrary"
    "_attention_mask\",null],[\"_pg_collection\",null]]}"
)
FIELDS = json.loads("".join(_FIELDS_JSON))
