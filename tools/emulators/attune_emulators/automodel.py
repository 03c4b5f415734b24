"""NeMo AutoModel (NVIDIA-NeMo/Automodel, version file 0.5.0, main @ 36044ad3d)
for the attune emulators: the `automodel` console script and `python -m
nemo_automodel.cli.app` (what `torchrun -m nemo_automodel.cli.app CFG` runs
in every worker), and the two LLM recipe scripts the CLI hands to torchrun
when it spawns the workers itself (recipes/llm/train_ft.py, benchmark.py).

What is emulated: the CLI's argparse parser and its errors; the YAML loader
(PyYAML, then ConfigNode: `_target_`/`*_fn` resolved at load, `${VAR}` and
`$VAR` expansion, scalars through ast.literal_eval so quoted numbers become
numbers); the `recipe:` key and its registry; the `--a.b v` overrides; the
launcher choice (in-process under torchrun or on one GPU, torchrun spawned
otherwise); the recipe's setup in source order with its typed-section checks,
the device-mesh checks on WORLD_SIZE and the batch checks; the fine-tune loop
(the step line on global rank 0 at every step, validation, checkpoints with
auto-resume, the SIGTERM preemption save, rank 0's tqdm bar) and the
benchmark loop with its summary; exit codes and tracebacks.

Not emulated (the boundary): models, tokenizers, datasets, HF downloads and
GPUs are assumed present and working; W&B/MLflow/Comet, SkyPilot and NeMo-Run
are not. The framework's documentation section cites the source of each
behaviour.
"""

import argparse
import ast
import json
import math
import os
import shutil
import signal
import socket
import sys
import tempfile
import time

import yaml

from . import harness

VERSION = "0.5.0"
COMMIT = "36044ad3d139363fb6c73c24af2e7c6b65ec52f6"

# The installed package as the emulated node sees it: the stand-in checkout
# that holds the recipe scripts torchrun is given (`Path(__file__).parents[3]`
# of components/launcher/interactive.py is its root).
PKG_ROOT = os.path.join(harness.EMULATORS_DIR, "checkouts", "automodel")


def _src(rel):
    return os.path.join(PKG_ROOT, "nemo_automodel", rel)


APP = _src("cli/app.py")
UTILS = _src("cli/utils.py")
ARGP = _src("components/config/_arg_parser.py")
LOADER = _src("components/config/loader.py")
LAUNCH = _src("components/launcher/interactive.py")
TRAIN_FT = _src("recipes/llm/train_ft.py")
BENCH = _src("recipes/llm/benchmark.py")
TYPED = _src("recipes/_typed_config.py")
DIST_UTILS = _src("recipes/_dist_utils.py")
DIST_CONFIG = _src("components/distributed/config.py")
MESH = _src("components/distributed/mesh.py")
MESH_UTILS = _src("components/distributed/mesh_utils.py")
STEP_SCHED = _src("components/training/step_scheduler.py")
SIG_HANDLER = _src("components/training/signal_handler.py")
CKPT_CONFIG = _src("components/checkpoint/config.py")
BASE_RECIPE = _src("recipes/base_recipe.py")
LIFECYCLE = _src("components/checkpoint/lifecycle.py")

FINETUNE = "nemo_automodel.recipes.llm.train_ft.TrainFinetuneRecipeForNextTokenPrediction"
BENCHMARK = "nemo_automodel.recipes.llm.benchmark.BenchmarkingRecipeForNextTokenPrediction"

# cli/utils.py _discover_recipe_classes: `^class\s+(\w*Recipe\w*)\s*[\(:]` over
# nemo_automodel/recipes/**/*.py (files not starting with "_"), BaseRecipe left out.
RECIPES = {
    "BenchmarkingRecipeForNextTokenPrediction": BENCHMARK,
    "DiffusionGemmaSFTRecipe": "nemo_automodel.recipes.dllm.train_ft.DiffusionGemmaSFTRecipe",
    "DiffusionLMSFTRecipe": "nemo_automodel.recipes.dllm.train_ft.DiffusionLMSFTRecipe",
    "EmbeddingDistillRecipe": "nemo_automodel.recipes.retrieval.distill_bi_encoder.EmbeddingDistillRecipe",
    "FinetuneRecipeForMultimodal": "nemo_automodel.recipes.multimodal.finetune.FinetuneRecipeForMultimodal",
    "FinetuneRecipeForVLM": "nemo_automodel.recipes.vlm.finetune.FinetuneRecipeForVLM",
    "KnowledgeDistillationRecipeForNextTokenPrediction":
        "nemo_automodel.recipes.llm.kd.KnowledgeDistillationRecipeForNextTokenPrediction",
    "KnowledgeDistillationRecipeForVLM": "nemo_automodel.recipes.vlm.kd.KnowledgeDistillationRecipeForVLM",
    "MineHardNegativesRecipe": "nemo_automodel.recipes.retrieval.mine_hard_negatives.MineHardNegativesRecipe",
    "PeagleRecipeMixin": "nemo_automodel.recipes.llm.peagle_recipe.PeagleRecipeMixin",
    "PretrainRecipeForMultimodal": "nemo_automodel.recipes.multimodal.pretrain.PretrainRecipeForMultimodal",
    "TrainBiEncoderRecipe": "nemo_automodel.recipes.retrieval.train_bi_encoder.TrainBiEncoderRecipe",
    "TrainCrossEncoderRecipe": "nemo_automodel.recipes.retrieval.train_cross_encoder.TrainCrossEncoderRecipe",
    "TrainDFlash2Recipe": "nemo_automodel.recipes.llm.train_dflash2.TrainDFlash2Recipe",
    "TrainDFlashRecipe": "nemo_automodel.recipes.llm.train_dflash.TrainDFlashRecipe",
    "TrainDSparkRecipe": "nemo_automodel.recipes.llm.train_dspark.TrainDSparkRecipe",
    "TrainDiffusionRecipe": "nemo_automodel.recipes.diffusion.train.TrainDiffusionRecipe",
    "TrainDominoRecipe": "nemo_automodel.recipes.llm.train_domino.TrainDominoRecipe",
    "TrainEagle1Recipe": "nemo_automodel.recipes.llm.train_eagle1.TrainEagle1Recipe",
    "TrainEagle2Recipe": "nemo_automodel.recipes.llm.train_eagle2.TrainEagle2Recipe",
    "TrainEagle3Recipe": "nemo_automodel.recipes.llm.train_eagle3.TrainEagle3Recipe",
    "TrainFinetuneRecipeForNextTokenPrediction": FINETUNE,
    "TrainFinetuneRecipeForSequenceClassification":
        "nemo_automodel.recipes.llm.train_seq_cls.TrainFinetuneRecipeForSequenceClassification",
    "TrainJetSpecRecipe": "nemo_automodel.recipes.llm.train_jetspec.TrainJetSpecRecipe",
    "TrainVispecRecipe": "nemo_automodel.recipes.llm.train_vispec.TrainVispecRecipe",
    "TrainVispecStage1Recipe": "nemo_automodel.recipes.llm.train_vispec.TrainVispecStage1Recipe",
}
# names a recipe module binds by import (benchmark.py imports the fine-tune class)
_IMPORTED = {"nemo_automodel.recipes.llm.benchmark": {"TrainFinetuneRecipeForNextTokenPrediction": FINETUNE}}
_RECIPE_PACKAGES = {"nemo_automodel", "nemo_automodel.recipes", "nemo_automodel.recipes.llm",
                    "nemo_automodel.recipes.vlm", "nemo_automodel.recipes.dllm", "nemo_automodel.recipes.diffusion",
                    "nemo_automodel.recipes.retrieval", "nemo_automodel.recipes.multimodal"}

# Top-level import names of the package and its dependencies (pyproject.toml
# dependencies and the [all]/[moe] extras, with what they pull in): a
# `_target_` under one of these is taken to import; any other that is not in
# the standard library cannot be imported on the node.
INSTALLED = {
    "nemo_automodel", "torch", "torchdata", "torchao", "torchvision", "triton", "transformers", "tokenizers",
    "huggingface_hub", "safetensors", "datasets", "megatron_fsdp", "mistral_common", "pybind11", "yaml",
    "tiktoken", "wandb", "mlflow", "flashoptim", "quack", "diffusers", "ftfy", "imageio", "kernels",
    "causal_conv1d", "mamba_ssm", "cudnn", "grouped_gemm", "onnxscript", "transformer_engine", "tilelang",
    "tile_kernels", "tvm_ffi", "bitsandbytes", "perceptron", "sentencepiece", "fla", "deltalake", "databricks",
    "nemo_run", "boto3", "backoff", "numpy", "numba", "open_clip", "PIL", "soundfile", "timm", "deep_ep",
    "packaging",
}

# Sizes of the public splits the example recipes train on (the emulator's
# stand-in for len(dataset); any other dataset counts DEFAULT_SAMPLES).
DATASET_SAMPLES = {
    ("rajpurkar/squad", "train"): 87599, ("rajpurkar/squad", "validation"): 10570,
    ("squad", "train"): 87599, ("squad", "validation"): 10570,
    ("rowan/hellaswag", "train"): 39905, ("rowan/hellaswag", "validation"): 10042,
}
DEFAULT_SAMPLES = 10000
DEFAULT_SEQ_LEN = 512

# The emulator's own simulated durations (seconds).
STARTUP_S = 10.0       # imports, process group
MODEL_BUILD_S = 45.0   # model, optimizer, tokenizer, data loaders
RESUME_LOAD_S = 10.0
CKPT_SAVE_S = 8.0


# ---------------------------------------------------------------- Python's errors


class _PyError(Exception):
    """An exception of the framework's process: its type, message and the frames of its traceback."""

    def __init__(self, exc_type, message, frames=(), cause=None):
        super().__init__(message)
        self.exc_type, self.message, self.frames, self.cause = exc_type, message, list(frames), cause


def _traceback_lines(frames, exc_type, message):
    lines = ["Traceback (most recent call last):"]
    for path, line, func in frames:
        lines.append('  File "{}", line {}, in {}'.format(path, line, func))
    head, _, rest = message.partition("\n")
    lines.append("{}: {}".format(exc_type, head) if message else exc_type)
    if rest:
        lines.extend(rest.split("\n"))
    return lines


def _die(e, outer):
    """Print an uncaught exception as Python does, then exit 1."""
    if e.cause is not None:
        ctype, cmsg, cframes = e.cause
        for line in _traceback_lines(cframes, ctype, cmsg):
            harness.err(line)
        harness.err("")
        harness.err("The above exception was the direct cause of the following exception:")
        harness.err("")
    for line in _traceback_lines(list(outer) + e.frames, e.exc_type, e.message):
        harness.err(line)
    sys.exit(1)


# ---------------------------------------------------------------- the config loader (components/config/loader.py)


class Node(dict):
    """A ConfigNode: a mapping whose values went through ConfigNode._wrap."""


class _Orig(str):
    """A string resolved from `$VAR` that prints as its original text (_OrigValueStr)."""

    def __new__(cls, value, orig):
        s = super().__new__(cls, value)
        s.orig = orig
        return s


class _Target(str):
    """A `_target_`/`*_fn` value: resolved at load, printed as its original string."""


def translate_value(v):
    if not isinstance(v, str):
        return v
    special = {"none": None, "None": None, "true": True, "True": True, "false": False, "False": False}
    if v in special:
        return special[v]
    if len(v) > 1000:
        return v
    try:
        return ast.literal_eval(v)
    except Exception:
        return v


_BRACED = None
_DOLLAR = None


def resolve_env(value, frames):
    """resolve_yaml_env_vars on one string."""
    global _BRACED, _DOLLAR
    import re

    if isinstance(value, _Orig) or "$" not in value:
        return value
    if _BRACED is None:
        _BRACED = re.compile(r"\$\{([^}]+)\}")
        _DOLLAR = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)")

    def get(name, default, token):
        if name in os.environ:
            return os.environ[name]
        if default is not None:
            return default
        msg = "Environment variable '{}' is not set (required by '{}').".format(name, token)
        raise _PyError("KeyError", repr(msg), frames + [(LOADER, 204, "_get_env")])

    def braced(m):
        expr = m.group(1).strip()
        if expr.startswith("oc.env:"):
            expr = expr[len("oc.env:"):].strip()
        if "," in expr:
            name, default = expr.split(",", 1)
            return get(name.strip(), default.strip(), m.group(0))
        return get(expr, None, m.group(0))

    value = _BRACED.sub(lambda m: braced(m), value)
    return _DOLLAR.sub(lambda m: get(m.group(1), None, m.group(0)), value)


def resolve_target(dotted, frames):
    """_resolve_target: what importing a `_target_` would give on the emulated node."""
    if not isinstance(dotted, str):
        return dotted
    here = frames + [(LOADER, 0, "_resolve_target")]
    if ":" in dotted:
        file_part, attr = dotted.split(":", 1)
        if not file_part.endswith(".py"):
            raise _PyError("AssertionError", "Left side of ':' must be a .py file", here[:-1] + [(LOADER, 292, "_resolve_target")])
        if not os.path.exists(file_part):
            raise _PyError("AssertionError", "Python script does not exist: {}".format(file_part),
                           here[:-1] + [(LOADER, 294, "_resolve_target")])
        if attr.startswith("_") or "__" in attr:
            raise _PyError("ImportError", "Access to private or dunder attributes is disabled by default. To allow "
                           "out-of-tree code, set NEMO_ENABLE_USER_MODULES=1 or call set_enable_user_modules(True).",
                           here[:-1] + [(LOADER, 297, "_resolve_target")])
        return _Target(dotted)
    top = dotted.split(".")[0]
    if top in INSTALLED or top in sys.stdlib_module_names:
        return _Target(dotted)
    raise _PyError("ImportError", "Cannot resolve target (blocked or not found): {}".format(dotted),
                   here[:-1] + [(LOADER, 333, "_resolve_target")])


def wrap(key, v, frames):
    """ConfigNode._wrap (loader.py:379-410)."""
    if isinstance(v, dict):
        return make_node(v, frames + [(LOADER, 390, "_wrap")])
    if isinstance(v, list):
        return [wrap("", i, frames + [(LOADER, 392, "_wrap")]) for i in v]
    if isinstance(key, str) and key.endswith("_fn"):
        return resolve_target(v, frames + [(LOADER, 396, "_wrap")])
    if key == "_target_":
        return resolve_target(v, frames + [(LOADER, 400, "_wrap")])
    if isinstance(v, str) and "$" in v:
        resolved = resolve_env(v, frames + [(LOADER, 405, "_wrap"), (LOADER, 234, "resolve_yaml_env_vars")])
        translated = translate_value(resolved)
        if isinstance(translated, str) and resolved != v:
            return _Orig(translated, v)
        return translated
    return translate_value(v)


def make_node(d, frames=()):
    frames = list(frames)
    if not isinstance(d, dict):
        raise _PyError("AttributeError", "'{}' object has no attribute 'items'".format(type(d).__name__),
                       frames + [(LOADER, 357, "__init__")])
    inner = frames + [(LOADER, 357, "__init__")]
    return Node((k, wrap(k, v, inner)) for k, v in d.items())


def cfg_get(node, dotted, default=None):
    """ConfigNode.get: a dotted path, lists by index."""
    cur = node
    for p in str(dotted).split("."):
        if isinstance(cur, Node):
            if p not in cur:
                return default
            cur = cur[p]
        elif isinstance(cur, list):
            try:
                cur = cur[int(p)]
            except (ValueError, IndexError):
                return default
        else:
            return default
    return cur


def set_by_dotted(node, dotted, value, frames):
    parts = dotted.split(".")
    for p in parts[:-1]:
        if not isinstance(node.get(p), Node):
            node[p] = Node()
        node = node[p]
    node[parts[-1]] = wrap(parts[-1], value, frames)


def to_plain(v, orig=False):
    """ConfigNode.to_dict (the resolved values: a section's kwargs) or, with orig, to_yaml_dict(use_orig_values=True)
    (the `${...}` placeholders and target strings as written: what is printed)."""
    if isinstance(v, dict):
        return {k: to_plain(x, orig) for k, x in v.items()}
    if isinstance(v, list):
        return [to_plain(x, orig) for x in v]
    if isinstance(v, _Orig):
        return str(v.orig) if orig else str(v)
    if isinstance(v, _Target):
        return str(v)
    return v


def load_yaml_config(path, frames):
    """loader.py:832-844."""
    here = frames + [(LOADER, 842, "load_yaml_config")]
    try:
        with open(path) as f:
            raw = yaml.safe_load(f)
    except FileNotFoundError:
        raise _PyError("FileNotFoundError", "[Errno 2] No such file or directory: {!r}".format(str(path)), here)
    except IsADirectoryError:
        raise _PyError("IsADirectoryError", "[Errno 21] Is a directory: {!r}".format(str(path)), here)
    except yaml.YAMLError as e:
        raise _PyError("{}.{}".format(type(e).__module__, type(e).__qualname__), str(e),
                       frames + [(LOADER, 843, "load_yaml_config")])
    import copy

    node = make_node(raw, frames + [(LOADER, 844, "load_yaml_config")])
    return node, copy.deepcopy(raw)


# ---------------------------------------------------------------- logging (components/loggers/log_utils.py)


class _Log:
    """The root handler setup_logging() installs: stderr, "%(asctime)s | %(levelname)s | %(name)s | %(message)s",
    RankFilter (global rank 0 only); level names coloured on a TTY or with FORCE_COLOR."""

    LEVELS = {"DEBUG": 10, "INFO": 20, "WARNING": 30, "ERROR": 40, "CRITICAL": 50}
    COLORS = {10: "\x1b[36m", 20: "\x1b[32m", 30: "\x1b[33m", 40: "\x1b[31m", 50: "\x1b[31;1m"}

    def __init__(self, rank):
        self.on = rank == 0
        self.level = 20
        self.ready = False
        if os.getenv("FORCE_COLOR"):
            self.color = True
        elif os.getenv("NO_COLOR"):
            self.color = False
        else:
            self.color = sys.stderr.isatty() or sys.stdout.isatty()

    def emit(self, level, name, msg):
        n = self.LEVELS[level]
        if not self.on:
            return
        if not self.ready:
            # before setup_logging: the CLI set the root level to INFO with no handler, so
            # logging's lastResort prints WARNING and above as the bare message
            if n >= 30:
                harness.err(msg)
            return
        if n < self.level:
            return
        shown = "{}{}\x1b[0m".format(self.COLORS[n], level) if self.color else level
        harness.err("{} | {} | {} | {}".format(harness.now_text(), shown, name, msg))

    def info(self, msg, name="root"):
        self.emit("INFO", name, msg)

    def warning(self, msg, name="root"):
        self.emit("WARNING", name, msg)


# ---------------------------------------------------------------- the ranks' collectives


class _Group:
    """What the collectives give the real ranks: the all-gathers and barriers
    the recipe makes, over files in the temp dir keyed by the job's identity."""

    def __init__(self, w):
        self.rank, self.world = w.rank, w.world_size
        self.base = None
        self.run_dir = None
        self.n = 0

    def start(self):
        """init_process_group: every rank joins; the run's own directory is agreed here."""
        if self.world <= 1:
            return
        import hashlib

        ident = "|".join(os.environ.get(k, "") for k in (
            "SLURM_JOB_ID", "SLURM_STEP_ID", "TORCHELASTIC_RUN_ID", "MASTER_ADDR", "WORLD_SIZE",
            "ATTUNE_EMULATE_SEED"))
        if os.environ.get("GROUP_WORLD_SIZE", "1") == "1":
            ident += "|{}".format(os.getppid())  # one node: the workers' torchrun agent
        self.base = os.path.join(tempfile.gettempdir(), "attune-emulate-automodel",
                                 hashlib.sha256(ident.encode()).hexdigest()[:20])
        d = os.path.join(self.base, "init")
        os.makedirs(d, exist_ok=True)
        mine = "{:.6f}".format(time.time())
        harness.write_file(os.path.join(d, str(self.rank)), mine)
        deadline = time.monotonic() + 1800
        while True:
            stamps = {}
            for r in range(self.world):
                try:
                    with open(os.path.join(d, str(r))) as f:
                        t = f.read().strip()
                    if float(t) >= float(mine) - 600:
                        stamps[r] = t
                except (OSError, ValueError):
                    pass
            if len(stamps) == self.world:
                break
            if time.monotonic() > deadline:
                harness.emulator_fault("rank {}: the other ranks never joined the process group".format(self.rank))
            time.sleep(0.01)
        self.run_dir = os.path.join(self.base, "run-" + stamps[0])
        os.makedirs(self.run_dir, exist_ok=True)

    def gather(self, flag=False):
        """One collective: every rank's flag once all have reached it."""
        if self.world <= 1:
            return [bool(flag)]
        self.n += 1
        d = os.path.join(self.run_dir, str(self.n))
        os.makedirs(d, exist_ok=True)
        open(os.path.join(d, "{}.{}".format(self.rank, int(bool(flag)))), "w").close()
        deadline = time.monotonic() + 1800
        pause = 0.001
        while True:
            try:
                names = os.listdir(d)
            except OSError:
                names = []
            if len(names) >= self.world:
                break
            if time.monotonic() > deadline:
                harness.emulator_fault("rank {}: the other ranks never reached collective {}".format(self.rank, self.n))
            time.sleep(pause)
            pause = min(0.02, pause * 1.5)
        flags = [False] * self.world
        for name in names:
            r, _, f = name.partition(".")
            if r.isdigit() and int(r) < self.world:
                flags[int(r)] = f == "1"
        if self.rank == 0 and self.n > 2:
            shutil.rmtree(os.path.join(self.run_dir, str(self.n - 2)), ignore_errors=True)
        return flags

    def barrier(self):
        self.gather(False)

    def finish(self):
        """destroy_process_group at exit: once every rank is here, the files go."""
        if self.world <= 1 or self.run_dir is None:
            return
        self.barrier()  # no rank is still waiting in an earlier collective
        try:
            os.remove(os.path.join(self.base, "init", str(self.rank)))
        except OSError:
            pass
        open(os.path.join(self.run_dir, "done.{}".format(self.rank)), "w").close()
        try:
            done = [n for n in os.listdir(self.run_dir) if n.startswith("done.")]
        except OSError:
            return
        if len(done) >= self.world:
            shutil.rmtree(self.run_dir, ignore_errors=True)
            for d in (os.path.join(self.base, "init"), self.base):
                try:
                    os.rmdir(d)
                except OSError:
                    pass


# ---------------------------------------------------------------- the device mesh (recipes/_dist_utils.py, mesh_utils.py)


FSDP2_FIELDS = ["sequence_parallel", "tp_plan", "patch_is_packed_sequence", "mp_policy", "offload_policy",
                "autocast_dtype", "activation_checkpointing", "activation_checkpointing_scope",
                "defer_fsdp_grad_sync", "reshard_after_forward", "enable_async_tensor_parallel", "enable_compile",
                "enable_fsdp2_prefetch", "fsdp2_backward_prefetch_depth", "fsdp2_forward_prefetch_depth",
                "multimodal"]
MFSDP_FIELDS = ["megatron_fsdp_unit_modules", "zero_dp_strategy", "init_fsdp_with_meta_device", "grad_reduce_in_fp32",
                "preserve_fp32_weights", "overlap_grad_reduce", "overlap_param_gather", "check_for_nan_in_grad",
                "report_nan_in_param_grad", "average_in_collective", "disable_bucketing", "calculate_per_token_loss",
                "keep_fp8_transpose_cache", "nccl_ub", "fsdp_double_buffer", "activation_checkpointing"]
DDP_FIELDS = ["activation_checkpointing", "activation_checkpointing_scope", "broadcast_buffers",
              "find_unused_parameters", "static_graph", "bucket_cap_mb", "gradient_as_bucket_view", "autocast_dtype"]
STRATEGIES = {"fsdp2": FSDP2_FIELDS, "megatron_fsdp": MFSDP_FIELDS, "megatron-fsdp": MFSDP_FIELDS,
              "mfsdp": MFSDP_FIELDS, "ddp": DDP_FIELDS}
PIPELINE_FIELDS = ["pp_schedule", "pp_schedule_csv", "pp_microbatch_size", "pp_batch_size", "layers_per_stage",
                   "round_virtual_stages_to_pp_multiple", "module_fqns_per_model_part", "patch_inner_model",
                   "patch_causal_lm_model", "patch_stage_backward_maybe_with_nosync", "dtype",
                   "scale_grads_in_schedule", "loss_fn", "pp_seq_len"]
MOE_FIELDS = ["ignore_router_for_ac", "reshard_after_forward", "lm_head_precision", "wrap_outer_model", "mp_policy"]


def _unexpected_kwarg(cls, fields, kwargs, frames):
    for k in kwargs:
        if k not in fields:
            raise _PyError("TypeError", "{}.__init__() got an unexpected keyword argument '{}'".format(cls, k), frames)


class Layout:
    """The parallel sizes of this run as DistributedSetup.build makes them from `distributed:` and WORLD_SIZE."""

    def __init__(self, dist, world, rank, log, frames):
        f = frames + [(DIST_UTILS, 382, "create_distributed_setup_from_config")]
        cfg = dict(to_plain(dist or {}))
        strategy = cfg.pop("strategy", "fsdp2")
        strategy = strategy.lower() if isinstance(strategy, str) else strategy
        sizes = {}
        for k, default in (("tp_size", 1), ("pp_size", 1), ("cp_size", 1), ("ep_size", 1), ("dp_size", None),
                           ("dp_replicate_size", None)):
            v = cfg.pop(k, default)
            sizes[k] = v if v is not None else default
        pipeline = cfg.pop("pipeline", None)
        moe = cfg.pop("moe", None)
        ac = cfg.pop("activation_checkpointing", False)
        if not (ac is None or isinstance(ac, bool) or isinstance(ac, str) and ac.lower().replace("-", "_") in (
                "false", "off", "none", "disabled", "no", "true", "on", "full", "enabled", "yes", "selective")):
            raise _PyError("ValueError", "distributed.activation_checkpointing must be a boolean or one of 'full', "
                           "'selective', 'false'.", f + [(DIST_UTILS, 107, "parse_distributed_section"),
                                                         (DIST_UTILS, 69, "_normalize_activation_checkpointing")])
        selective = isinstance(ac, str) and ac.lower().replace("-", "_") == "selective"
        for key in ("_target_", "_recursive_", "_convert_"):
            cfg.pop(key, None)
        ep = sizes["ep_size"] or 1
        if selective and strategy not in ("fsdp2", "ddp"):
            raise _PyError("ValueError", "selective activation checkpointing is supported only for FSDP2 and DDP "
                           "configs.", f + [(DIST_UTILS, 182, "parse_distributed_section")])
        pp = sizes["pp_size"] or 1
        if pipeline is not None and pp <= 1:
            log.warning("`distributed.pipeline` is set but pp_size={} (<= 1): pipeline parallelism is disabled and "
                        "the pipeline settings are ignored. Set pp_size > 1 to enable it.".format(pp),
                        "nemo_automodel.recipes._dist_utils")
            pipeline = None
        if moe is not None and ep <= 1:
            moe = None
        pf = f + [(DIST_UTILS, 204, "parse_distributed_section")]
        if strategy not in STRATEGIES:
            raise _PyError("ValueError", "Unknown strategy: {}. Valid strategies: {}".format(
                strategy, sorted(STRATEGIES)), pf + [(DIST_CONFIG, 486, "_resolve_strategy_config")])
        unknown = set(cfg) - set(STRATEGIES[strategy])
        if unknown:
            raise _PyError("ValueError", "Unknown options for strategy '{}': {}".format(strategy, sorted(unknown)),
                           pf + [(DIST_CONFIG, 491, "_resolve_strategy_config")])
        self.pipeline = None
        if pipeline is not None:
            if isinstance(pipeline, dict):
                _unexpected_kwarg("PipelineConfig", PIPELINE_FIELDS, pipeline,
                                  f + [(DIST_UTILS, 210, "parse_distributed_section")])
            self.pipeline = dict(pipeline) if isinstance(pipeline, dict) else {}
        elif pp > 1:
            raise _PyError("ValueError", "`pp_size={}` (> 1) enables pipeline parallelism but no `distributed.pipeline` "
                           "block was provided. Add a `distributed.pipeline` section (e.g. `pp_schedule`, "
                           "`pp_microbatch_size`); an empty `pipeline: {{}}` selects defaults.".format(pp),
                           f + [(DIST_UTILS, 212, "parse_distributed_section")])
        if ep > 1 and isinstance(moe, dict):
            _unexpected_kwarg("MoEParallelizerConfig", MOE_FIELDS, moe,
                              f + [(DIST_UTILS, 256, "parse_distributed_section")])
        self.strategy = strategy
        self.world = world
        mf = frames + [(DIST_UTILS, 383, "create_distributed_setup_from_config"),
                       (DIST_CONFIG, 152, "build"), (MESH, 224, "build")]
        deg = lambda v: v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 1  # noqa: E731
        tp, cp, pp, ep = deg(sizes["tp_size"]), deg(sizes["cp_size"]), deg(sizes["pp_size"]), deg(sizes["ep_size"])
        rep = deg(sizes["dp_replicate_size"])
        self.tp, self.cp, self.pp, self.ep = tp, cp, pp, ep
        if sizes["dp_replicate_size"] is not None and isinstance(sizes["dp_replicate_size"], int) \
                and sizes["dp_replicate_size"] > 1 and strategy != "fsdp2":
            raise _PyError("ValueError", "dp_replicate_size is only supported with FSDP2Config",
                           mf + [(MESH_UTILS, 76, "_create_device_meshes")])

        def infer(non_dp, expression, factors, where):
            dp = sizes["dp_size"]
            if isinstance(dp, int) and not isinstance(dp, bool) and dp > 0:
                return dp
            if world % non_dp != 0:
                raise _PyError("ValueError", "world_size ({}) must be divisible by ({}) ({} = {})".format(
                    world, expression, " * ".join(str(x) for x in factors), non_dp),
                    mf + where + [(MESH_UTILS, 118, "_infer_dp_size")])
            return world // non_dp

        def size_one(name, size, feature, line):
            if size > 1:
                raise _PyError("ValueError", "{} does not support {}".format(name, feature),
                               mf + [(MESH_UTILS, line, "_create_device_meshes"), (MESH_UTILS, 50, "_require_size_one")])

        if strategy == "fsdp2":
            where = [(MESH_UTILS, 79, "_create_device_meshes"), (MESH_UTILS, 300, "_create_fsdp2_device_mesh")]
            dp = infer(tp * cp * pp, "tp_size * cp_size * pp_size", (tp, cp, pp), where)
            where = where[:1] + [(MESH_UTILS, 0, "_create_fsdp2_device_mesh")]
            if dp % rep != 0:
                raise _PyError("ValueError", "dp_size must be a multiple of dp_replicate_size",
                               mf + where[:1] + [(MESH_UTILS, 309, "_create_fsdp2_device_mesh")])
            if rep >= dp and rep != 1:
                raise _PyError("ValueError", "dp_replicate_size={} must be less than dp_size={} since DDP usecase is "
                               "not supported by FSDP2".format(rep, dp),
                               mf + where[:1] + [(MESH_UTILS, 311, "_create_fsdp2_device_mesh")])
            non_pp = dp * cp * tp
            if non_pp % ep != 0:
                raise _PyError("ValueError", "non_pp_size={} must be a multiple of ep_size={}".format(non_pp, ep),
                               mf + where[:1] + [(MESH_UTILS, 318, "_create_fsdp2_device_mesh")])
            self._mesh_size(pp * dp * cp * tp, mf)
            self.dp, self.rep = dp, rep
        elif strategy in ("megatron_fsdp", "megatron-fsdp", "mfsdp"):
            size_one("megatron_fsdp", pp, "pipeline parallelism", 86)
            size_one("megatron_fsdp", ep, "expert parallelism", 87)
            dp = infer(tp * cp, "tp_size * cp_size", (tp, cp),
                       [(MESH_UTILS, 88, "_create_device_meshes"), (MESH_UTILS, 366, "_create_megatron_fsdp_device_mesh")])
            self._mesh_size(dp * cp * tp, mf)
            self.dp, self.rep = dp, 1
        else:
            size_one("ddp", tp, "tensor parallelism", 96)
            size_one("ddp", pp, "pipeline parallelism", 97)
            size_one("ddp", cp, "context parallelism", 98)
            size_one("ddp", ep, "expert parallelism", 99)
            self.dp, self.rep = world, 1
        # this rank's coordinates in the mesh (pp, dp_replicate, dp_shard, cp, tp), tp fastest
        r = rank
        self.tp_rank = r % self.tp
        r //= self.tp
        self.cp_rank = r % self.cp
        r //= self.cp
        self.dp_rank = r % self.dp
        self.pp_rank = r // self.dp
        self.dp_cp_rank = self.dp_rank * self.cp + self.cp_rank

    def _mesh_size(self, n, frames):
        if n > self.world:
            # torch.distributed.device_mesh.DeviceMesh._get_or_create_default_group
            raise _PyError("RuntimeError", "Mesh should not be bigger than default world size {}, but found {} "
                           "ranks!".format(self.world, n), frames + [(MESH_UTILS, 141, "_init_named_mesh")])
        if n < self.world:
            harness.emulator_fault("a device mesh of {} ranks in a world of {}: how torch fails on the ranks outside "
                                   "the mesh is not emulated".format(n, self.world))


# ---------------------------------------------------------------- the step scheduler (components/training/step_scheduler.py)


STEP_SCHED_FIELDS = ["global_batch_size", "num_epochs", "max_steps", "ckpt_every_steps", "save_checkpoint_every_epoch",
                     "val_every_steps", "log_remote_every_steps", "loss_average_window_steps", "gc_every_steps",
                     "start_step", "start_epoch", "preemption_signal"]
CKPT_FIELDS = ["enabled", "checkpoint_dir", "model_save_format", "model_cache_dir", "model_repo_id", "save_consolidated",
               "is_peft", "model_state_dict_keys", "is_async", "wait_for_staging", "cpu_offload",
               "allow_legacy_pickle_restore", "dequantize_base_checkpoint", "original_model_root_dir",
               "skip_task_head_prefixes_for_base_model", "single_rank_consolidation", "staging_dir", "v4_compatible",
               "diffusers_compatible", "best_metric_key", "consolidation_timeout_minutes", "max_recent_checkpoints"]
LR_FIELDS = ["lr_warmup_steps", "lr_decay_steps", "lr_decay_style", "init_lr", "max_lr", "min_lr", "start_wd", "end_wd",
             "wd_incr_steps", "wd_incr_style", "use_checkpoint_opt_param_scheduler", "override_opt_param_scheduler",
             "wsd_decay_steps", "lr_wsd_decay_style"]
LOADER_FIELDS = {"shuffle", "group_by_length", "shuffle_buffer_size", "batch_size", "num_workers", "pin_memory",
                 "persistent_workers", "prefetch_factor", "drop_last"}


def resolve_signal(spec, frames):
    """signal_handler.py:201-239."""
    f = frames + [(SIG_HANDLER, 126, "__init__")]
    if isinstance(spec, bool):
        raise _PyError("TypeError", "Signal must be an int, str or signal.Signals, got bool: {!r}".format(spec),
                       f + [(SIG_HANDLER, 225, "resolve_signal")])
    if isinstance(spec, int):
        try:
            return signal.Signals(spec)
        except ValueError:
            raise _PyError("ValueError", "Invalid signal number: {}".format(spec), f + [(SIG_HANDLER, 230, "resolve_signal")],
                           cause=("ValueError", "{} is not a valid Signals".format(spec),
                                  [(SIG_HANDLER, 228, "resolve_signal")]))
    if isinstance(spec, str):
        name = spec.strip().upper()
        if not name.startswith("SIG"):
            name = "SIG" + name
        try:
            return signal.Signals[name]
        except KeyError:
            raise _PyError("ValueError", "Unknown signal name: {!r}".format(spec), f + [(SIG_HANDLER, 238, "resolve_signal")],
                           cause=("KeyError", repr(name), [(SIG_HANDLER, 236, "resolve_signal")]))
    raise _PyError("TypeError", "Signal must be an int, str or signal.Signals, got {}".format(type(spec).__name__),
                   f + [(SIG_HANDLER, 239, "resolve_signal")])


class StepScheduler:
    def __init__(self, kw, lbs, dp, epoch_len, log, group, frames):
        f = frames
        gbs = kw["global_batch_size"]

        def bad(line, msg):
            raise _PyError("ValueError", msg, f + [(STEP_SCHED, line, "__init__")])

        if gbs <= 0:
            bad(108, "global_batch_size must be greater than 0, got {}".format(gbs))
        if lbs <= 0:
            bad(110, "local_batch_size must be greater than 0, got {}".format(lbs))
        if dp <= 0:
            bad(112, "dp_size must be greater than 0, got {}".format(dp))
        if gbs % (lbs * dp) != 0:
            bad(115, "global_batch_size ({}) must be divisible by local_batch_size * dp_size ({} * {})".format(
                gbs, lbs, dp))
        self.ga = gbs // (lbs * dp)
        if self.ga < 1:
            bad(121, "grad_acc_steps ({}) must be greater than or equal to 1. Please ensure that global_batch_size >= "
                     "(local_batch_size * dp_size)".format(self.ga))
        self.step, self.epoch = kw["start_step"], kw["start_epoch"]
        if self.step < 0:
            bad(128, "start_step must be greater than or equal to 0, got {}".format(self.step))
        if self.epoch < 0:
            bad(131, "start_epoch must be greater than or equal to 0, got {}".format(self.epoch))
        self.epoch_len = None if epoch_len is None else -(-epoch_len // self.ga)
        max_steps, num_epochs = kw["max_steps"], kw["num_epochs"]
        if num_epochs is None:  # _calculate_num_epochs
            num_epochs = 10 if self.epoch_len is None or max_steps is None else -(-max_steps // self.epoch_len)
        self.num_epochs = num_epochs
        if num_epochs is not None and num_epochs <= 0:
            bad(148, "num_epochs must be greater than 0 or None if max_steps is provided, got {}".format(num_epochs))
        self.val_every = kw["val_every_steps"]
        if self.val_every is not None and self.val_every <= 0:
            bad(152, "val_every_steps must be greater than 0 if not None, got {}".format(self.val_every))
        if kw["log_remote_every_steps"] <= 0:
            bad(155, "log_remote_every_steps must be greater than 0, got {}".format(kw["log_remote_every_steps"]))
        if kw["loss_average_window_steps"] <= 0:
            bad(158, "loss_average_window_steps must be greater than 0, got {}".format(kw["loss_average_window_steps"]))
        self.gc_every = kw["gc_every_steps"]
        if self.gc_every is not None and self.gc_every <= 0:
            bad(161, "gc_every_steps must be greater than 0 if not None, got {}".format(self.gc_every))
        if max_steps is None:
            if self.epoch_len is None:
                bad(164, "epoch_len must be provided if max_steps is not provided")
            max_steps = self.num_epochs * self.epoch_len
            log.info("max_steps not provided; will run for up to {} steps".format(max_steps),
                     "nemo_automodel.components.training.step_scheduler")
        self.max_steps = max_steps
        if max_steps <= 0:
            bad(169, "max_steps must be greater than 0, got {}".format(max_steps))
        ckpt = kw["ckpt_every_steps"]
        if ckpt is None:
            ckpt = max(1, self.max_steps // 2) if self.epoch_len is None else self.epoch_len
            log.info("ckpt_every_steps not provided; will save checkpoint every {} steps".format(ckpt),
                     "nemo_automodel.components.training.step_scheduler")
        if ckpt <= 0:
            bad(178, "ckpt_every_steps must be greater than 0, got {}".format(ckpt))
        self.ckpt_every = ckpt
        self.save_every_epoch = kw["save_checkpoint_every_epoch"]
        self.group = group
        self.received = None
        self.handler = None
        spec = kw["preemption_signal"]
        if spec is not None:
            hf = f + [(STEP_SCHED, 184, "__init__")]
            specs = spec if isinstance(spec, (list, tuple)) else [spec]
            sigs = [resolve_signal(s, hf) for s in specs]
            if not sigs:
                raise _PyError("ValueError", "At least one signal must be provided", hf + [(SIG_HANDLER, 129, "__init__")])
            if len(set(sigs)) != len(sigs):
                raise _PyError("ValueError", "Duplicate signals provided: {}".format([s.name for s in sigs]),
                               hf + [(SIG_HANDLER, 131, "__init__")])

            def handler(signum, frame):
                log.info("Received signal {}, initiating graceful stop".format(signum))
                self.received = signum

            for s in sigs:
                harness.on_signal(s, handler)
                log.info("Signal handler installed for {}".format(s.name))
            self.handler = sigs
        self.sigterm_flag = False
        self.polled = None

    # the properties, as the loop evaluates them
    def sigterm_received(self):
        if self.sigterm_flag:
            return True
        if self.handler is None:
            return False
        if self.polled == self.step:
            return False
        self.polled = self.step
        self.sigterm_flag = any(self.group.gather(self.received is not None))
        return self.sigterm_flag

    def is_last_batch(self):
        return self.epoch_len is not None and self.step % self.epoch_len == self.epoch_len - 1

    def is_last_step(self):
        if self.step + 1 >= self.max_steps:
            return True
        if self.num_epochs is not None and self.epoch + 1 >= self.num_epochs:
            return self.is_last_batch()
        return False

    def is_ckpt_step(self):
        periodic = self.step % self.ckpt_every == self.ckpt_every - 1
        return periodic or (self.save_every_epoch and self.is_last_batch()) or self.is_last_step() \
            or self.sigterm_received()

    def is_val_step(self):
        is_val = bool(self.val_every) and self.step % self.val_every == self.val_every - 1
        return (is_val or self.is_ckpt_step()) and not self.sigterm_flag


# ---------------------------------------------------------------- the recipes


def _frames_setup(kind):
    return [(BENCH, 158, "setup"), (TRAIN_FT, 0, "setup")] if kind == "benchmark" else [(TRAIN_FT, 0, "setup")]


def _at(frames, line):
    """The frames with the innermost frame's line set."""
    out = list(frames)
    path, _, func = out[-1]
    out[-1] = (path, line, func)
    return out


class Recipe:
    """TrainFinetuneRecipeForNextTokenPrediction and its BenchmarkingRecipeForNextTokenPrediction subclass as
    this emulator runs them: setup() in source order, then the fine-tune loop or run_benchmark()."""

    def __init__(self, kind, cfg, raw, frames):
        self.kind, self.cfg, self.raw = kind, cfg, raw
        self.w = harness.worker()
        self.rank, self.world = self.w.rank, self.w.world_size
        self.log = _Log(self.rank)
        if kind == "benchmark":
            # benchmark.py:117-145: ConfigNode attribute access, so a missing key is AttributeError(<key>)
            f = frames + [(BENCH, 0, "__init__")]

            def attr(node, key, line):
                if not isinstance(node, Node) or key not in node:
                    raise _PyError("AttributeError", key, _at(f, line) + [(LOADER, 376, "__getattr__")])
                return node[key]

            bench = attr(cfg, "benchmark", 117)
            self.warmup = attr(bench, "warmup_steps", 118)
            self.peak = attr(bench, "peak_tflops", 119)
            self.nsys_start = attr(bench, "nsys_start", 120)
            self.nsys_end = attr(bench, "nsys_end", 121)
            self.nsys_ranks = attr(bench, "nsys_ranks", 122)
            self.json_out = bench.get("json_output_path")
            self.bench_steps = attr(attr(cfg, "step_scheduler", 127), "max_steps", 127)
            self.bench_seq = attr(attr(cfg, "dataset", 130), "seq_len", 130)
            ss = cfg["step_scheduler"]
            cfg["dataset"]["batch_size"] = ss.get("local_batch_size", 1) if isinstance(ss, Node) else 1
        self.pred = harness.prediction(self.w)
        self.clock = harness.StepClock(self.pred)
        self.group = _Group(self.w)

    # -------------------------------------------------------- setup (train_ft.py:471-820)

    def setup(self, frames):
        cfg, log, rank = self.cfg, self.log, self.rank
        fs = frames + _frames_setup(self.kind)
        self.setup_s = 0.0  # the simulated seconds setup() took (the benchmark's "setup" timer)
        self._sleep(STARTUP_S)
        if rank == 0:
            harness.out("> initializing torch distributed with {} workers.".format(self.world))
        harness.check_device(self.w)  # torch.cuda.set_device(local rank) (init_utils.py:131-134)
        self.group.start()
        level = os.getenv("LOGGING_LEVEL")
        log.level = int(level) if level is not None and level.strip().lstrip("-").isdigit() else 20
        log.ready = True
        log.info("Setting logging level to {}".format(log.level), "nemo_automodel.components.loggers.log_utils")
        df = _at(fs, 504) + [(TRAIN_FT, 465, "_create_distributed_setup")]
        if "distributed" not in cfg:  # `cfg.distributed`: ConfigNode attribute access
            raise _PyError("AttributeError", "distributed", df + [
                (DIST_UTILS, 361, "create_distributed_setup_from_config"), (DIST_UTILS, 278, "_distributed_cfg_to_dict"),
                (TYPED, 657, "__getattr__"), (LOADER, 376, "__getattr__")])
        dist = cfg["distributed"]
        if not isinstance(dist, Node):
            raise _PyError("TypeError", "'{}' object is not iterable".format(type(dist).__name__), df + [
                (DIST_UTILS, 361, "create_distributed_setup_from_config"), (DIST_UTILS, 279, "_distributed_cfg_to_dict")])
        self.layout = Layout(dist, self.world, rank, log, df)
        L = self.layout
        self.pp_enabled = L.pp > 1
        if rank == 0:
            self._experiment_details()
        if cfg.get("loss_fn") is None:  # RecipeConfig.loss_fn is None, then None.build()
            raise _PyError("AttributeError", "'NoneType' object has no attribute 'build'", _at(fs, 535))
        if self.pp_enabled:
            pbs = cfg_get(cfg, "step_scheduler.local_batch_size", 1)
            pmb = cfg_get(cfg, "distributed.pipeline.pp_microbatch_size", 1)
            if not pbs // pmb >= L.pp:
                raise _PyError("AssertionError", "pp_batch_size {} // pp_microbatch_size {} must be >= pp_size {}".format(
                    pbs, pmb, L.pp), _at(fs, 547))
            if L.strategy != "fsdp2" and L.strategy != "ddp":
                raise _PyError("AssertionError", "MegatronFSDPConfig is not supported when pipeline parallelism is enabled",
                               _at(fs, 564))
        self.peft = cfg.get("peft") is not None
        self._checkpoint_config(_at(fs, 590) + [(TYPED, 651, "checkpoint")])
        if cfg_get(cfg, "clip_grad_norm.max_norm") is None:
            log.info("No clip_grad_norm.max_norm specified in config, using default value of 1.0")
        if self.ck["save_consolidated"] == "every" and self.ck["format"] == "safetensors" and not self.peft:
            log.warning("checkpoint.save_consolidated=every exports HuggingFace safetensors during every checkpoint "
                        "save and can leave GPUs idle during consolidation and filesystem writes. Recommended: "
                        "checkpoint.save_consolidated=final, or checkpoint.save_consolidated=false and run bash "
                        "<checkpoint>/model/consolidate.sh after training.",
                        "nemo_automodel.components.checkpoint.checkpointing")
        if "model" not in cfg:
            raise _PyError("AttributeError", "model", _at(fs, 614) + [(TYPED, 657, "__getattr__"),
                                                                      (LOADER, 376, "__getattr__")])
        self._sleep(MODEL_BUILD_S)
        if cfg.get("optimizer") is None:
            raise _PyError("AttributeError", "'NoneType' object has no attribute 'build'", _at(fs, 631))
        if "dataset" not in cfg:
            raise _PyError("AttributeError", "dataset", _at(fs, 697) + [(TYPED, 657, "__getattr__"),
                                                                        (LOADER, 376, "__getattr__")])
        model = cfg.get("model") if isinstance(cfg.get("model"), Node) else Node()
        self.model_name = _model_name(model)
        ds = cfg.get("dataset") if isinstance(cfg.get("dataset"), Node) else Node()
        if "tokenizer" not in ds and self.model_name is not None:
            log.info("Using model config to instantiate tokenizer")
        self.train_samples, _ = self._dataloader(ds, cfg.get("dataloader"), _at(fs, 727) + [(TYPED, 188, "dataloader")],
                                              train=True)
        self.val = {}
        for key in list(cfg):
            if isinstance(key, str) and key.startswith("validation_dataset") and cfg[key] is not None:
                name = key.replace("validation_dataset", "")
                if len(name) > 1 and name[0] in ("_", "-", "."):
                    name = name[1:]
                self.val[name or "default"] = self._dataloader(
                    cfg[key], cfg.get("validation_dataloader"), _at(fs, 729) + [(TYPED, 326, "validation_dataloaders")],
                    train=False)
        self._step_scheduler(_at(fs, 751), _at(fs, 752))
        if self.sched.gc_every is not None:
            log.info("[GC] Initial GC collection took 0.01 seconds", "nemo_automodel.components.training.garbage_collection")
        self._lr_scheduler(_at(fs, 761) + [(TYPED, 171, "lr_scheduler")])
        self.ckpt_dir = str(self.ck["checkpoint_dir"])
        # every rank opens the JSONL loggers in append mode (loggers/metric_logger.py:103-115)
        os.makedirs(self.ckpt_dir, exist_ok=True)
        open(os.path.join(self.ckpt_dir, "training.jsonl"), "a").close()
        for name in self.val:
            open(os.path.join(self.ckpt_dir, "validation.jsonl" if name == "default"
                              else "validation_{}.jsonl".format(name)), "a").close()
        self.records = []
        self._load_checkpoint(_at(fs, 806) + [(BASE_RECIPE, 0, "load_checkpoint")])
        s = self.sched
        log.info("Step scheduler:")
        for k, v in (("Gradient accumulation steps", s.ga), ("Checkpoint every steps", s.ckpt_every),
                     ("Garbage collect every steps", s.gc_every), ("Current Epoch", s.epoch),
                     ("Number of epochs", s.num_epochs), ("Validation every steps", s.val_every),
                     ("Max train steps", s.max_steps)):
            log.info("- {}: {}".format(k, v))
        log.info("- Checkpoint retention: {}".format(self._retention()))
        if self.kind == "benchmark":
            self._benchmark_setup()

    def _sleep(self, seconds):
        self.setup_s += seconds
        harness.sleep(seconds)

    def _experiment_details(self):
        import getpass
        from datetime import datetime

        cfg = self.cfg
        model = cfg.get("model")
        try:
            user = getpass.getuser()
        except Exception:
            user = str(os.getuid())
        details = {
            "Timestamp": datetime.fromtimestamp(harness.wall_time()).isoformat(timespec="seconds"),
            "User": user,
            "Host": socket.gethostname(),
            "World size": self.world,
            "Backend": cfg_get(cfg, "dist_env.backend", "nccl"),
            "Recipe": "BenchmarkingRecipeForNextTokenPrediction" if self.kind == "benchmark"
            else "TrainFinetuneRecipeForNextTokenPrediction",
            "Model name": model.get("pretrained_model_name_or_path") if isinstance(model, Node) else None,
        }
        try:
            if isinstance(details["Model name"], (_Orig, _Target)):
                # a str subclass: yaml's SafeDumper cannot represent it
                raise yaml.representer.RepresenterError("cannot represent an object", details["Model name"])
            text = yaml.safe_dump(details, sort_keys=False, default_flow_style=False).strip()
            for line in ("Experiment_details:\n" + text).splitlines():
                self.log.info(line)
        except yaml.YAMLError:
            self.log.info("Experiment details: {}".format(details))
        try:
            harness.out(yaml.safe_dump(to_plain(cfg, orig=True), sort_keys=False, default_flow_style=False).strip())
        except yaml.YAMLError:
            self.log.info("Recipe config: <unavailable>", "nemo_automodel.recipes.base_recipe")

    def _checkpoint_config(self, frames):
        """RecipeConfig.checkpoint -> CheckpointingConfig(**kwargs) and its __post_init__ (checkpoint/config.py:89-204)."""
        node = self.cfg.get("checkpoint")
        kw = dict(to_plain(node)) if isinstance(node, Node) else {}
        self.restore_from = kw.pop("restore_from", None)
        kw.update(model_repo_id=None, model_cache_dir=None, is_peft=self.peft)
        _unexpected_kwarg("CheckpointingConfig", CKPT_FIELDS, kw, frames)
        f = frames + [(CKPT_CONFIG, 0, "__post_init__")]
        if kw.get("consolidation_timeout_minutes", 30) <= 0:
            raise _PyError("ValueError", "checkpoint.consolidation_timeout_minutes must be greater than 0", _at(f, 135))
        if not isinstance(kw.get("allow_legacy_pickle_restore", False), bool):
            raise _PyError("ValueError", "checkpoint.allow_legacy_pickle_restore must be a boolean", _at(f, 137))
        fmt = kw.get("model_save_format", "safetensors")
        cons = kw.get("save_consolidated", "final")
        if self.peft and fmt == "torch_save":
            self.log.warning("PEFT checkpointing is not supported for `torch_save` format; falling back to "
                             "`safetensors` (all other checkpoint settings are preserved).")
            fmt, cons = "safetensors", "final"
        mrc = kw.get("max_recent_checkpoints")
        if mrc is not None and (isinstance(mrc, bool) or not isinstance(mrc, int) or mrc < 1):
            raise _PyError("ValueError", "checkpoint.max_recent_checkpoints must be unset or a positive integer",
                           _at(f, 160))
        if fmt not in ("torch_save", "safetensors"):
            raise _PyError("AssertionError", "Unsupported model save format: {}. Supported formats: {}".format(
                fmt, ["torch_save", "safetensors"]), _at(f, 173))
        if isinstance(cons, bool):
            cons = "every" if cons else "false"
        elif isinstance(cons, str) and cons.strip().lower() in ("true", "every", "final", "false"):
            cons = {"true": "every"}.get(cons.strip().lower(), cons.strip().lower())
        else:
            raise _PyError("ValueError", "Unsupported save_consolidated value: {}. Supported values are false, final, "
                           "every, and legacy booleans.".format(cons),
                           _at(f, 176) + [(CKPT_CONFIG, 82, "_normalize_save_consolidated")])
        if cons != "false" and not self.peft:
            if fmt != "safetensors":
                self.log.warning("checkpoint.save_consolidated={} is ignored when checkpoint.model_save_format={}. "
                                 "Export sharded torch_save checkpoints back to Hugging Face safetensors after "
                                 "training with scripts/export_llm_dcp_to_hf.py.".format(cons, fmt))
            elif not kw.get("v4_compatible", False):
                self.log.warning("save_consolidated={} but v4_compatible=False; checkpoint assets may be not compatible "
                                 "with transformers v4; [experimental] set --checkpoint.v4_compatible=True to "
                                 "enable".format(cons))
            else:
                self.log.warning("[experimental] v4_compatible=True enables transformers v4 compatibility")
        self.ck = {"enabled": kw.get("enabled", True), "checkpoint_dir": kw.get("checkpoint_dir", "checkpoints/"),
                   "format": fmt, "save_consolidated": cons, "max_recent": mrc}

    def _dataloader(self, ds, loader, frames, train):
        """RecipeConfig._resolve_dataloader's field check, and len(dataloader) of this rank."""
        lk = dict(to_plain(loader)) if isinstance(loader, Node) else {}
        lk.pop("_target_", None)
        lk.pop("collate_fn", None)
        lk.pop("dataset", None)
        lk.pop("dataloader_type", None)
        unknown = sorted(set(lk) - LOADER_FIELDS)
        if unknown:
            raise _PyError("TypeError", "Unexpected dataloader config field(s): {}".format(", ".join(unknown)),
                           frames + [(TYPED, 286, "_resolve_dataloader")])
        lbs = cfg_get(self.cfg, "step_scheduler.local_batch_size", 1)
        bs = lk["batch_size"] if "batch_size" in lk else lbs
        target = str(ds.get("_target_", "")) if isinstance(ds, Node) else ""
        dp = self.layout.dp
        if target.endswith("mock_iterable_dataset.MockIterableDataset"):
            n = ds.get("num_samples", 1000000)
            if train:
                self.log.warning("IterableDataset does not support sharding; Data may be duplicated across ranks.",
                                 "nemo_automodel.components.datasets.loader")
                self.seq_len = ds.get("seq_len", 1024)
                self.mock = True
            return (n if bs is None else -(-n // bs)), n
        if train:
            self.mock = False
            self.seq_len = ds.get("seq_len") if isinstance(ds.get("seq_len"), int) else None
        name = ds.get("path_or_dataset", ds.get("dataset_name")) if isinstance(ds, Node) else None
        n = DATASET_SAMPLES.get((name, ds.get("split")), DEFAULT_SAMPLES) if isinstance(ds, Node) else DEFAULT_SAMPLES
        for cap in ("num_samples_limit", "limit_dataset_samples"):
            if isinstance(ds, Node) and isinstance(ds.get(cap), int) and ds.get(cap) > 0:
                n = min(n, ds.get(cap))
        per_rank = n // dp
        return -(-per_rank // (bs or 1)), n

    def _step_scheduler(self, frames, build_frames):
        node = self.cfg.get("step_scheduler")
        kw = {k: v for k, v in to_plain(node).items() if k not in ("local_batch_size", "dp_size", "dataloader")} \
            if isinstance(node, Node) else {}
        _unexpected_kwarg("StepSchedulerConfig", STEP_SCHED_FIELDS, kw, frames + [(TYPED, 166, "step_scheduler")])
        full = {"global_batch_size": 32, "num_epochs": 10, "max_steps": None, "ckpt_every_steps": 100,
                "save_checkpoint_every_epoch": True, "val_every_steps": None, "log_remote_every_steps": 1,
                "loss_average_window_steps": 50, "gc_every_steps": None, "start_step": 0, "start_epoch": 0,
                "preemption_signal": "SIGTERM"}
        full.update(kw)
        self.lbs = cfg_get(self.cfg, "step_scheduler.local_batch_size", 1)
        self.gbs = full["global_batch_size"]
        self.sched = StepScheduler(full, self.lbs, self.layout.dp, self.train_samples, self.log, self.group,
                                   build_frames + [(STEP_SCHED, 415, "build")])

    def _lr_scheduler(self, frames):
        opt = self.cfg.get("optimizer")
        lr = opt.get("lr", 1e-3) if isinstance(opt, Node) else 1e-3
        self.base_lr = float(lr) if isinstance(lr, (int, float)) else 1e-3
        wd = opt.get("weight_decay", 0.0) if isinstance(opt, Node) else 0.0
        self.base_wd = float(wd) if isinstance(wd, (int, float)) else 0.0
        node = self.cfg.get("lr_scheduler")
        self.lr_sched = None
        if not isinstance(node, Node) or not node:
            return
        kw = dict(to_plain(node))
        kw.pop("_target_", None)
        _unexpected_kwarg("LRSchedulerConfig", LR_FIELDS, kw, frames)
        s = self.sched
        total = min(s.num_epochs * s.epoch_len, s.max_steps) if s.epoch_len is not None and s.num_epochs \
            else s.max_steps
        warm = kw.get("lr_warmup_steps")
        self.lr_sched = {
            "init": kw.get("init_lr") if kw.get("init_lr") is not None else self.base_lr * 0.1,
            "max": kw.get("max_lr") if kw.get("max_lr") is not None else self.base_lr,
            "min": kw.get("min_lr") if kw.get("min_lr") is not None else self.base_lr * 0.01,
            "warmup": warm if warm is not None else min(1000, total // 10),
            "decay": kw.get("lr_decay_steps") if kw.get("lr_decay_steps") is not None else total,
            "style": kw.get("lr_decay_style", "cosine"),
            "wd": kw.get("start_wd") if kw.get("start_wd") is not None else self.base_wd,
            "decay_total": kw.get("wd_incr_steps") if kw.get("wd_incr_steps") is not None else total,
            "use_ckpt": kw.get("use_checkpoint_opt_param_scheduler", True),
            "override": kw.get("override_opt_param_scheduler", False),
        }
        self.log.info("Building LR scheduler with total_steps={}, warmup_steps={}, decay_style={}".format(
            total, self.lr_sched["warmup"], self.lr_sched["style"]), "nemo_automodel.components.optim.optimizer")

    def lr(self, num_steps):
        """OptimizerParamScheduler.get_lr (components/optim/scheduler.py:185-247)."""
        s = self.lr_sched
        if s is None:
            return self.base_lr
        if s["warmup"] > 0 and num_steps <= s["warmup"]:
            return s["init"] + (s["max"] - s["init"]) * float(num_steps) / float(s["warmup"])
        if s["style"] == "constant":
            return s["max"]
        if num_steps > s["decay"]:
            return s["min"]
        if s["style"] == "inverse-square-root":
            return float(max(s["min"], s["max"] * max(s["warmup"], 1) ** 0.5 / max(num_steps, 1) ** 0.5))
        ratio = float(num_steps - s["warmup"]) / float(max(1, s["decay"] - s["warmup"]))
        coeff = 1.0 - ratio if s["style"] == "linear" else 0.5 * (math.cos(math.pi * ratio) + 1.0)
        return s["min"] + coeff * (s["max"] - s["min"])

    def _retention(self):
        if not self.ck["enabled"]:
            return "inactive because checkpointing is disabled"
        k = self.ck["max_recent"]
        if k is None:
            return "disabled; keeping all checkpoints (checkpoint.max_recent_checkpoints=None)"
        return ("keeping the most recent {} {}, plus pointer-protected checkpoints "
                "(checkpoint.max_recent_checkpoints={})".format(
                    k, "checkpoint directory" if k == 1 else "checkpoint directories", k))

    # -------------------------------------------------------- checkpoints (base_recipe.py, checkpoint/*)

    def _latest(self):
        """find_latest_checkpoint (checkpoint/utils.py:346-386)."""
        root = self.ckpt_dir
        if not os.path.exists(root):
            return None
        target = _read_pointer(root, "LATEST")
        if target is not None and os.path.isdir(target):
            if not os.path.exists(os.path.join(target, ".incomplete")):
                return target
            self.log.warning("LATEST points at {}, which an interrupted save left incomplete; falling back to the "
                             "most recent complete checkpoint".format(target), "nemo_automodel.components.checkpoint.utils")
        found = [p for p in _step_dirs(root) if not os.path.exists(os.path.join(p, ".incomplete"))]
        return max(found, key=_step_num) if found else None

    def _load_checkpoint(self, frames):
        log = self.log
        rf = self.restore_from
        if not self.ck["enabled"]:
            if self.rank == 0 and rf is not None:
                harness.out("Enable checkpointing to resume from a checkpoint, skipping...")
            return
        if rf:
            # resolve_restore_from_to_checkpoint_dir (checkpoint/utils.py:264-313)
            rf = str(rf)
            ckpt = None
            local = os.sep not in rf and not os.path.isabs(rf)
            if local:
                pointed = _read_pointer(self.ckpt_dir, rf)
                if pointed is not None and os.path.isdir(pointed) and \
                        not os.path.exists(os.path.join(pointed, ".incomplete")):
                    ckpt = pointed
            if ckpt is None:
                if rf.upper() == "LATEST":
                    ckpt = self._latest()
                else:
                    ckpt = os.path.join(self.ckpt_dir, rf) if local else rf
            if ckpt is None:
                log.warning("restore_from='LATEST' specified but no checkpoint found in {}. Starting fresh.".format(
                    self.ckpt_dir))
                return
            if not os.path.exists(ckpt):
                lines = ["", "=" * 80, "ERROR: Checkpoint directory does not exist", "=" * 80,
                         "Specified: checkpoint.restore_from: '{}'".format(rf), "Resolved to: {}".format(ckpt), "",
                         "Please check:", "  1. The checkpoint directory exists",
                         "  2. The path is correct (restore_from: '{}')".format(rf),
                         "  3. Available checkpoints in {}:".format(self.ckpt_dir)]
                have = _step_dirs(self.ckpt_dir)
                if have:
                    lines.append("       " + ", ".join(os.path.basename(p) for p in have[:5]))
                    if len(have) > 5:
                        lines.append("       ... and {} more".format(len(have) - 5))
                else:
                    lines.append("       (no checkpoints found)" if os.path.exists(self.ckpt_dir)
                                 else "       (checkpoint_dir does not exist)")
                lines.append("=" * 80)
                msg = "\n".join(lines) if self.rank == 0 else "Checkpoint directory does not exist: {}".format(ckpt)
                raise _PyError("FileNotFoundError", msg, _at(frames, 492) + [(LIFECYCLE, 275, "validate_checkpoint_dir_exists")])
        else:
            ckpt = self._latest()
            if ckpt is None:
                return
        ok, reason = _compatible(self.raw, ckpt)
        if not ok:
            if not rf:
                log.warning("Auto-detected checkpoint at {} is incompatible with current model configuration: {}. "
                            "Skipping restore.".format(ckpt, reason))
                return
            log.warning("Checkpoint at {} may be incompatible with current model configuration: {}. Proceeding with "
                        "restore anyway.".format(ckpt, reason))
        if self.rank == 0:
            harness.out("Loading checkpoint from {}".format(ckpt))
        try:
            with open(os.path.join(ckpt, "step_scheduler.pt")) as f:
                state = json.load(f)
            self.sched.step, self.sched.epoch = int(state["step"]), int(state["epoch"])
        except (OSError, ValueError, KeyError, TypeError):
            raise _PyError("FileNotFoundError", "[Errno 2] No such file or directory: {!r}".format(
                os.path.join(ckpt, "step_scheduler.pt")), _at(frames, 532))
        self._sleep(RESUME_LOAD_S)
        self._load_lr_scheduler(ckpt, _at(frames, 552))

    def _load_lr_scheduler(self, ckpt, frames):
        """OptimizerParamScheduler.load_state_dict (optim/scheduler.py:281-356), through load_optimizer."""
        s = self.lr_sched
        if s is None:
            return
        try:
            with open(os.path.join(ckpt, "optim", ".metadata")) as f:
                sd = json.load(f)["lr_scheduler"]
        except (OSError, ValueError, KeyError, TypeError):
            return
        name = "nemo_automodel.components.optim.scheduler"

        def check(mine, theirs, what):
            if s["override"]:
                self.log.info("overriding {} value to {}".format(what, mine), name)
                return mine
            if not s["use_ckpt"] and mine != theirs:
                raise _PyError("AssertionError", "OptimizerParamScheduler: class input value {} and checkpointvalue {} "
                               "for {} do not match".format(mine, theirs, what), frames)
            self.log.info("using checkpoint value {} for {}".format(theirs, what), name)
            return theirs

        s["max"] = check(s["max"], sd["max_lr"], "learning rate")
        s["min"] = check(s["min"], sd["min_lr"], "minimum learning rate")
        s["warmup"] = check(s["warmup"], sd["lr_warmup_steps"], "warmup iterations")
        s["decay"] = check(s["decay"], sd["lr_decay_steps"], "total number of iterations")
        s["style"] = check(s["style"], sd["lr_decay_style"], "learning rate decay style")
        s["wd"] = check(s["wd"], sd["start_wd"], "start weight decay")
        check(s["wd"], sd["end_wd"], "end weight decay")
        s["decay_total"] = check(s["decay_total"], sd["wd_incr_steps"], "total number of weight decay iterations")
        check("constant", sd["wd_incr_style"], "weight decay incr style")

    def save_checkpoint(self, epoch, step, loss, val_losses):
        """BaseRecipe.save_checkpoint (base_recipe.py:245-402)."""
        if not self.ck["enabled"]:
            return
        log, rank, g = self.log, self.rank, self.group
        path = os.path.join(self.ckpt_dir, "epoch_{}_step_{}".format(epoch, step))
        published = rank == 0 and os.path.exists(path) and not os.path.exists(os.path.join(path, ".incomplete"))
        if any(g.gather(published)):
            raise _PyError("FileExistsError", "Checkpoint directory {} already holds a published checkpoint. Remove it, "
                           "or point checkpoint.checkpoint_dir at a fresh directory, before re-running this step."
                           .format(path), [(TRAIN_FT, 981, "run_train_validation_loop"), (BASE_RECIPE, 268, "save_checkpoint"),
                                           (LIFECYCLE, 117, "reserve")])
        if rank == 0:
            if os.path.exists(path):
                log.warning("Replacing checkpoint directory {} left behind by an interrupted save".format(path),
                            "nemo_automodel.components.checkpoint.lifecycle")
                shutil.rmtree(path)
            staging = "{}.reserving-{}".format(path, os.urandom(16).hex())
            os.makedirs(staging)
            open(os.path.join(staging, ".incomplete"), "w").close()
            os.rename(staging, path)
        g.barrier()
        name = "nemo_automodel.recipes.base_recipe"
        best = None
        if rank == 0:
            log.info("Saving checkpoint to {}".format(path), name)
            losses = {"train_loss": loss}
            if val_losses:
                if len(val_losses) == 1:
                    losses["val_loss"] = best = next(iter(val_losses.values()))
                else:
                    losses.update(val_losses)
                    best = val_losses.get("default")
            with open(os.path.join(path, "losses.json"), "w") as f:
                json.dump(losses, f)
        g.barrier()
        L = self.layout
        final = self.sched.is_last_step()
        harness.write_file(os.path.join(path, "rng", "rng_global_rank_{}.pt".format(rank)), "emulated\n")
        if L.tp_rank == 0 and L.pp_rank == 0:
            harness.write_file(os.path.join(path, "dataloader", "dataloader_dp_rank_{}.pt".format(L.dp_cp_rank)),
                               "emulated\n")
        for part in ("model", "optim"):
            harness.write_file(os.path.join(path, part, "__{}_0.distcp".format(rank)), "emulated\n")
        model_dir = os.path.join(path, "model")
        ck = self.ck
        hf = ck["format"] == "safetensors" and not self.peft
        consolidated = hf and (ck["save_consolidated"] == "every" or ck["save_consolidated"] == "final" and final)
        if rank == 0:
            harness.write_file(os.path.join(path, "step_scheduler.pt"),
                               json.dumps({"step": min(self.sched.max_steps, step + 1), "epoch": epoch}) + "\n")
            harness.write_file(os.path.join(model_dir, ".metadata"), "emulated\n")
            state = {}
            if self.lr_sched is not None:  # OptimizerParamScheduler.state_dict (optim/scheduler.py:263-279)
                s = self.lr_sched
                state["lr_scheduler"] = {"max_lr": s["max"], "lr_warmup_steps": s["warmup"], "num_steps": step + 1,
                                         "lr_decay_style": s["style"], "lr_decay_steps": s["decay"], "min_lr": s["min"],
                                         "start_wd": s["wd"], "end_wd": s["wd"], "wd_incr_style": "constant",
                                         "wd_incr_steps": s["decay_total"]}
            harness.write_file(os.path.join(path, "optim", ".metadata"), json.dumps(state) + "\n")
            if hf:
                os.makedirs(os.path.join(model_dir, ".hf_metadata"), exist_ok=True)
                harness.write_file(os.path.join(model_dir, "consolidate.sh"),
                                   "#!/usr/bin/env bash\nset -euo pipefail\n# emulated\n")
            if consolidated:
                harness.write_file(os.path.join(model_dir, "consolidated", "model.safetensors.index.json"), "{}\n")
            with open(os.path.join(path, "config.yaml"), "w") as f:
                yaml.dump(self.raw, f, sort_keys=False, default_flow_style=False)
        harness.sleep(CKPT_SAVE_S)
        if consolidated:
            log.info("Successfully exported consolidated HF safetensors to {}.".format(
                os.path.join(model_dir, "consolidated")), "nemo_automodel.components.checkpoint.checkpointing")
        elif final and hf and ck["save_consolidated"] == "false":
            log.info("Final checkpoint was saved with checkpoint.save_consolidated=false. To export Hugging Face "
                     "consolidated weights if needed, run bash {}.".format(os.path.join(model_dir, "consolidate.sh")),
                     "nemo_automodel.components.checkpoint.checkpointing")
        g.barrier()
        if rank == 0:
            _set_pointer(self.ckpt_dir, "LATEST", path)
            try:
                os.remove(os.path.join(path, ".incomplete"))
            except OSError:
                pass
            if best is not None and math.isfinite(best):
                if self.best_val is None:
                    tgt = _read_pointer(self.ckpt_dir, "LOWEST_VAL")
                    self.best_val = _read_metric(tgt) if tgt is not None else None
                if self.best_val is None or best < self.best_val:
                    self.best_val = best
                    _set_pointer(self.ckpt_dir, "LOWEST_VAL", path)
                    log.info("Updated LOWEST_VAL checkpoint symlink to {} (val_loss={:.4f})".format(
                        os.path.basename(path), best), "nemo_automodel.components.checkpoint.lifecycle")
            self._prune()
        g.barrier()

    best_val = None

    def _prune(self):
        k = self.ck["max_recent"]
        if k is None:
            return
        import re

        pat = re.compile(r"^epoch_\d+_step_(\d+)$")
        ckpts = [p for p in _step_dirs(self.ckpt_dir) if pat.match(os.path.basename(p))]
        protected = set()
        for ptr in ("LATEST", "LOWEST_VAL"):
            t = _read_pointer(self.ckpt_dir, ptr)
            if t is not None:
                protected.add(os.path.abspath(t))
        complete = [p for p in ckpts if not os.path.exists(os.path.join(p, ".incomplete"))]
        keep = {os.path.abspath(p) for p in complete[-k:]} | protected
        for p in ckpts:
            if os.path.abspath(p) not in keep:
                shutil.rmtree(p, ignore_errors=True)
                self.log.info("Pruned old checkpoint directory {}".format(p), "nemo_automodel.components.checkpoint.lifecycle")

    # -------------------------------------------------------- the loops

    def _tokens(self):
        """Tokens of one optimizer step over the job (the dataset's, as far as the emulator knows it)."""
        pack = cfg_get(self.cfg, "packed_sequence.packed_sequence_size", 0)
        seq = self.seq_len or (pack if isinstance(pack, int) and pack > 0 else DEFAULT_SEQ_LEN)
        return self.gbs * seq, (self.gbs * (seq - 1) if self.mock else self.gbs * seq)

    def _metrics(self, step):
        """tps, tps/gpu, label tokens, seconds of step `step` (0-based)."""
        n = step + 1
        dt = self.clock.seconds(n)
        tokens, labels = self._tokens()
        if self.pred.tokens_per_s_per_gpu > 0:
            tps = self.clock.tokens_per_s_per_gpu(n) * self.world
        else:
            tps = tokens / dt
        per = tps / self.layout.cp / max(self.layout.dp, 1)
        return dt, tps, per, labels

    def _oom(self, frames):
        raise _PyError("torch.OutOfMemoryError", harness.cuda_oom_message(self.pred, self.w.local_rank), frames)

    def run_train_validation_loop(self, frames):
        """train_ft.py:936-1006 with the step scheduler's iteration (step_scheduler.py:188-318)."""
        s = self.sched
        lf = frames + [(TRAIN_FT, 956, "run_train_validation_loop"), (TRAIN_FT, 1226, "_run_train_optim_step"),
                       (TRAIN_FT, 1186, "_forward_backward_step")]
        self.pbar = _Tqdm(s.max_steps, s.step) if self.rank == 0 else None
        try:
            self._epochs(lf)
        finally:
            if self.pbar is not None:
                self.pbar.close()
        self._close()

    def _epochs(self, lf):
        s, log, rank = self.sched, self.log, self.rank
        fail_at = max(1, self.pred.fails_at_step) if self.pred.ooms else None
        for e in range(s.epoch, s.num_epochs if s.num_epochs is not None else 1 << 62):
            if s.step >= s.max_steps or s.sigterm_received():
                break
            s.epoch = e
            left = None if s.epoch_len is None else (e + 1) * s.epoch_len - s.step
            stopped = False
            while left is None or left > 0:
                step = s.step
                dt, tps, per, labels = self._metrics(step)
                if fail_at is not None and step + 1 >= fail_at:
                    harness.sleep(dt * 0.5)
                    self._oom(lf)
                harness.sleep(dt)
                loss, lr = harness.loss(step + 1), self.lr(step + 1)
                if rank == 0:
                    tokens, _ = self._tokens()
                    self.records.append({"step": step, "epoch": e, "timestamp": _iso_now(), "loss": loss,
                                         "grad_norm": harness.grad_norm(step + 1), "lr": lr,
                                         "mem": self.pred.peak_allocated_gib, "tps": tps, "tps_per_gpu": per,
                                         "mfu": None, "num_tokens_per_step": tokens, "num_label_tokens": labels})
                    if len(self.records) >= 100:  # MetricLogger's buffer (metric_logger.py:117-124)
                        self._flush_records()
                    log.info("step {} | epoch {} | loss {:.4f} | grad_norm {:.4f} | lr {:.2e} | mem {:.2f} GiB | "
                             "tps {:.2f}({:.2f}/gpu) | num_label_tokens {}".format(
                                 step, e, loss, harness.grad_norm(step + 1), lr, self.pred.peak_allocated_gib, tps, per,
                                 labels))
                    if self.pbar is not None:
                        self.pbar.set_postfix(loss="{:.4f}".format(loss), lr="{:.2e}".format(lr), tps="{:.0f}".format(tps))
                        self.pbar.update()
                val_losses = {}
                if s.is_val_step():
                    for name, sizes in self.val.items():
                        val_losses[name] = self._validate(name, step, e, lr, sizes)
                if s.is_ckpt_step():
                    self.save_checkpoint(e, step, loss, val_losses)
                if s.gc_every is not None and step > 1 and step % s.gc_every == 0:
                    log.info("[GC] Performing periodic GC collection took 0.01 seconds",
                             "nemo_automodel.components.training.garbage_collection")
                s.step += 1
                if left is not None:
                    left -= 1
                if s.step >= s.max_steps or s.sigterm_flag:
                    stopped = True
                    break
            if not stopped:
                s.epoch += 1

    def _validate(self, name, step, epoch, lr, sizes):
        """_run_validation_epoch + log_val_metrics (train_ft.py:1338-1521): the emulator takes a third of a
        micro-batch's time per validation batch; the loss is the training objective's plus 0.05."""
        batches, samples = sizes
        per_batch = self.clock.seconds(step + 1) / max(1, self.sched.ga) / 3.0
        harness.sleep(per_batch * max(1, batches))
        self.group.barrier()
        loss = harness.loss(step + 1) + 0.05
        tokens = samples * (self.seq_len or DEFAULT_SEQ_LEN)
        self.log.info('[val] name "{}" | step {} | epoch {} | loss {:.4f} | lr {:.2e} | num_label_tokens {}{}'.format(
            name, step, epoch, loss, lr, tokens, ""))
        if self.rank == 0:
            fn = "validation.jsonl" if name == "default" else "validation_{}.jsonl".format(name)
            with open(os.path.join(self.ckpt_dir, fn), "a") as f:
                f.write(json.dumps({"step": step, "epoch": epoch, "timestamp": _iso_now(), "val_loss": loss, "lr": lr,
                                    "num_label_tokens": tokens, "mem": self.pred.peak_allocated_gib}) + "\n")
        return loss

    def _flush_records(self):
        if self.rank == 0 and self.records:
            with open(os.path.join(self.ckpt_dir, "training.jsonl"), "a") as f:
                for r in self.records:
                    f.write(json.dumps(r, ensure_ascii=False) + "\n")
        self.records = []

    def _close(self):
        """MetricLogger.close: the buffered training records go to training.jsonl."""
        self._flush_records()
        self.group.finish()

    # -------------------------------------------------------- benchmark (recipes/llm/benchmark.py)

    def _tflops(self):
        if self.pred.tflops_per_gpu > 0:
            return self.pred.tflops_per_gpu * self.world * self.pred.step_s
        # no prediction: the model FLOPs for 40% MFU at the nominal step time (the emulator's own choice)
        return 0.4 * float(self.peak) * self.world * self.pred.step_s

    def _benchmark_setup(self):
        log, name = self.log, "nemo_automodel.recipes.llm.benchmark"
        self.tflops = self._tflops()
        log.info("MTP TFLOPs/GPU: {:.6f} (backbone {:.6f}, total {:.6f})".format(0.0, self.tflops, self.tflops), name)
        log.info("TFLOPs/GPU: {:.6f}".format(self.tflops), name)
        self.setup_time = self.setup_s
        self.group.barrier()
        if self.rank == 0:
            _timers([("setup", self.setup_time)])

    def run_benchmark(self, frames):
        """benchmark.py:284-435: max_steps iterations, the summary at the end."""
        log, rank, name = self.log, self.rank, "nemo_automodel.recipes.llm.benchmark"
        steps, warm = self.bench_steps, self.warmup
        dp = self.layout.dp
        ga = self.gbs // (self.lbs * dp)
        if not ga > 0:
            raise _PyError("AssertionError", "Global batch size must be divisible by local batch size * dp_size",
                           frames + [(BENCH, 312, "run_benchmark")])
        log.info("Running {} iterations with {} warmup steps".format(steps, warm), name)
        log.info("GA steps: {}, DP size: {}, Local batch size: {}, Global batch size: {}".format(
            ga, dp, self.lbs, self.gbs), name)
        fail_at = max(1, self.pred.fails_at_step) if self.pred.ooms else None
        total = {"iteration": 0.0, "iteration_warmup": 0.0}
        _, labels = self._tokens()
        for i in range(steps):
            self.sched.step = i
            if i == self.nsys_start and rank in (self.nsys_ranks or []):
                log.info("Rank {} | Starting nsys profiling".format(rank), name)
            log.info("Rank {} | Iteration {}".format(rank, i), name)
            timer = "iteration_warmup" if i < warm else "iteration"
            dt = self.clock.seconds(i + 1)
            if fail_at is not None and i + 1 >= fail_at:
                harness.sleep(dt * 0.5)
                self._oom(frames + [(BENCH, 361, "run_benchmark"), (TRAIN_FT, 1186, "_forward_backward_step")])
            harness.sleep(dt)
            self.group.barrier()
            total[timer] += dt
            loss = harness.loss(i + 1)
            if rank == 0:
                harness.out("num_label_tokens={} | loss={:.4f}".format(labels, loss))
                log.info("Rank {} | Iteration {} | num_label_tokens={} | Max Memory Allocated: {:.2f} GB | "
                         "loss={:.4f}".format(rank, i, labels, self.pred.peak_allocated_gib, loss), name)
                mfu = self.tflops / (self.world * dt) / float(self.peak) * 100
                log.info("Max iter time: {:.6f} seconds".format(dt), name)
                log.info("MFU: {:.6f}%".format(mfu), name)
                opt = dt * 0.05
                rows = [(timer, dt), ("optimizer", opt)] + [
                    ("forward_backward_{}".format(k), (dt - opt) / ga) for k in range(ga)]
                _timers(rows)
            if i == self.nsys_end and rank in (self.nsys_ranks or []):
                log.info("Rank {} | Stopping nsys profiling".format(rank), name)
            if self.sched.gc_every is not None and i > 1 and i % self.sched.gc_every == 0:
                log.info("[GC] Performing periodic GC collection took 0.01 seconds",
                         "nemo_automodel.components.training.garbage_collection")
        self.group.barrier()
        bar = "=" * 60
        log.info(bar, name)
        log.info("Benchmarking Summary", name)
        log.info(bar, name)
        it, wt = total["iteration"], total["iteration_warmup"]
        log.info("Total setup time: {:.2f} seconds".format(self.setup_time), name)
        log.info("Total warmup time ({} steps): {:.2f} seconds".format(warm, wt), name)
        log.info("Total iteration time ({} steps): {:.2f} seconds".format(steps - warm, it), name)
        avg = it / (steps - warm) if steps > warm else it / steps
        tail = " (excluding first {} warmup iterations)".format(warm) if steps > warm else " (all {} iterations)".format(steps)
        log.info("Average iteration time: {:.3f} seconds".format(avg) + tail, name)
        mfu = self.tflops / (self.world * avg) / float(self.peak) * 100 if avg > 0 else float("nan")
        log.info("Average MFU: {:.6f}%".format(mfu) + tail, name)
        log.info(bar + "\n", name)
        if rank == 0 and self.json_out is not None:
            path = os.path.abspath(str(self.json_out))
            harness.write_file(path, json.dumps({
                "total_steps": steps, "warmup_steps": warm, "training_steps": steps - warm,
                "setup_time_seconds": self.setup_time, "warmup_time_seconds": wt, "training_time_seconds": it,
                "avg_iter_time_seconds": avg, "avg_mfu_percent": mfu, "tflops_per_gpu": self.tflops,
                "peak_tflops": self.peak, "world_size": self.world, "global_batch_size": self.gbs,
                "local_batch_size": self.lbs, "seq_len": self.bench_seq}, indent=2))
            log.info("Benchmark summary saved to {}".format(path), name)
        self.group.finish()


class _Tqdm:
    """The rank-0 progress bar of BaseRecipe._make_progress_bar (base_recipe.py:836-876): tqdm(total=max_steps,
    initial=step, desc="Training", unit="step", dynamic_ncols=True) on stderr, as tqdm 4.x draws it on a
    stream that is not a terminal (no width: a 10-cell bar; "\\r" before each redraw, no newline until close),
    on the simulated clock."""

    CHARS = " " + "".join(chr(c) for c in range(0x258F, 0x2587, -1))

    def __init__(self, total, initial):
        self.total, self.n, self.initial = total, initial, initial
        self.start = self.last_t = harness.sim_elapsed()
        self.last_n = initial
        self.postfix = ""
        self.last_len = 0
        self.ema_dn = self.ema_dt = 0.0
        self.calls = 0
        self.overall = False
        cols = os.environ.get("COLUMNS"), os.environ.get("LINES")
        self.ncols = int(cols[0]) - 1 if all(c and c.isdigit() for c in cols) else None
        self.display()

    @staticmethod
    def _interval(t):
        mins, sec = divmod(int(t), 60)
        h, m = divmod(mins, 60)
        return "{:d}:{:02d}:{:02d}".format(h, m, sec) if h else "{:02d}:{:02d}".format(m, sec)

    def _text(self):
        elapsed = harness.sim_elapsed() - self.start
        rate = None
        if not self.overall and self.calls:
            rate = self.ema_dn / self.ema_dt if self.ema_dt else None
        if rate is None and elapsed:
            rate = (self.n - self.initial) / elapsed
        inv = 1 / rate if rate else None
        if inv and inv > 1:
            rate_fmt = "{:5.2f}s/step".format(inv)
        else:
            rate_fmt = ("{:5.2f}".format(rate) if rate else "?") + "step/s"
        total = self.total if self.total and self.n < self.total + 0.5 else None
        postfix = ", " + self.postfix if self.postfix else ""
        remaining = "?" if not rate else self._interval((total - self.n) / rate if total else 0)
        if not total:
            return "Training: {}step [{}, {}{}]".format(self.n, self._interval(elapsed), rate_fmt, postfix)
        frac = self.n / total
        l_bar = "Training: {:3.0f}%|".format(frac * 100)
        r_bar = "| {}/{} [{}<{}, {}{}]".format(self.n, total, self._interval(elapsed), remaining, rate_fmt, postfix)
        width = max(1, self.ncols - len(l_bar + r_bar)) if self.ncols else 10
        full, part = divmod(int(frac * width * 8), 8)
        bar = self.CHARS[-1] * full
        if full < width:
            bar += self.CHARS[part] + self.CHARS[0] * (width - full - 1)
        return l_bar + bar + r_bar

    def display(self):
        text = self._text()
        sys.stderr.write("\r" + text + " " * max(self.last_len - len(text), 0))
        sys.stderr.flush()
        self.last_len = len(text)

    def set_postfix(self, **kw):
        self.postfix = ", ".join("{}={}".format(k, str(kw[k]).strip()) for k in sorted(kw))
        self.display()

    def update(self):
        self.n += 1
        now = harness.sim_elapsed()
        dt, dn = now - self.last_t, self.n - self.last_n
        if dt >= 0.1:  # mininterval
            if dt and dn:  # smoothing 0.3: exponential moving averages, bias-corrected alike
                self.ema_dn = 0.3 * dn + 0.7 * self.ema_dn
                self.ema_dt = 0.3 * dt + 0.7 * self.ema_dt
                self.calls += 1
            self.display()
            self.last_n, self.last_t = self.n, now

    def close(self):
        self.overall = True
        self.display()
        sys.stderr.write("\n")
        sys.stderr.flush()


def _timers(rows):
    """Timers.log with log_option "minmax" (components/training/timers.py:393-410): stdout, rank 0."""
    out = "(min, max) time across ranks (ms):"
    for name, t in rows:
        out += "\n    {}: ({:.2f}, {:.2f})".format((name + " ").ljust(48, "."), t * 0.998, t)
    harness.out(out)


def _iso_now():
    from datetime import datetime, timezone

    return datetime.fromtimestamp(harness.wall_time(), timezone.utc).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z")


def _model_name(model):
    if model.get("pretrained_model_name_or_path") is not None:
        return model["pretrained_model_name_or_path"]
    c = model.get("config")
    if c is not None:
        return c if isinstance(c, str) else (c.get("pretrained_model_name_or_path") if isinstance(c, Node) else None)
    return None


def _step_num(path):
    import re

    m = re.search(r"step_(\d+)$", os.path.basename(path))
    return int(m.group(1)) if m else -1


def _step_dirs(root):
    if not os.path.isdir(root):
        return []
    out = []
    for n in os.listdir(root):
        p = os.path.join(root, n)
        if "step_" in n and os.path.isdir(p) and not os.path.islink(p) and _step_num(p) >= 0:
            out.append(p)
    return sorted(out, key=_step_num)


def _read_pointer(root, name):
    link = os.path.join(root, name)
    raw = None
    if os.path.islink(link):
        try:
            raw = os.readlink(link)
        except OSError:
            pass
    elif os.path.isfile(link + ".txt"):
        try:
            with open(link + ".txt") as f:
                raw = f.read().strip()
        except OSError:
            pass
    if not raw:
        return None
    return os.path.abspath(raw if os.path.isabs(raw) else os.path.join(root, raw))


def _set_pointer(root, name, target):
    """CheckpointLifecycle._update_checkpoint_pointer: a relative symlink, replaced atomically."""
    rel = os.path.relpath(os.path.abspath(target), os.path.abspath(root))
    tmp = os.path.join(root, ".{}.{}.tmp".format(name, os.urandom(16).hex()))
    os.symlink(rel, tmp)
    os.replace(tmp, os.path.join(root, name))


def _read_metric(path):
    try:
        with open(os.path.join(path, "losses.json")) as f:
            v = json.load(f).get("val_loss")
        return float(v) if v is not None else None
    except (OSError, ValueError, AttributeError, TypeError):
        return None


_SIG_KEYS = ("pretrained_model_name_or_path", "architectures", "model_type", "hidden_size", "num_hidden_layers",
             "num_attention_heads", "num_key_value_heads", "intermediate_size", "vocab_size", "tie_word_embeddings",
             "rope_theta", "rope_scaling")


def _signature(cfg):
    if not isinstance(cfg, dict):
        return {}
    model = cfg.get("model", {})
    model = model if isinstance(model, dict) else {}
    sig = {k: model.get(k) for k in _SIG_KEYS}
    sig["_has_peft"] = isinstance(cfg.get("peft"), dict)
    return sig


def _norm(v):
    if v is None or isinstance(v, (bool, int, float)):
        return v
    if isinstance(v, str):
        try:
            f = float(v)
            return int(f) if f == int(f) else f
        except (ValueError, TypeError, OverflowError):
            return v
    if isinstance(v, dict):
        return {k: _norm(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_norm(x) for x in v]
    return v


def _compatible(raw, ckpt):
    """_is_checkpoint_model_config_compatible (base_recipe.py:957-995)."""
    path = os.path.join(ckpt, "config.yaml")
    if not os.path.exists(path):
        return True, "checkpoint has no config.yaml (cannot validate)"
    try:
        with open(path) as f:
            saved = yaml.safe_load(f) or {}
    except (OSError, yaml.YAMLError) as e:
        return True, "failed to read checkpoint config.yaml (cannot validate): {}".format(e)
    a, b = _signature(saved), _signature(raw)
    if not a or not b:
        return True, "could not extract model signature (cannot validate)"
    if set(a) != set(b) or any(_norm(b[k]) != _norm(a[k]) for k in b):
        return False, "model signature mismatch (checkpoint={}, current={})".format(a, b)
    return True, "model signature matches"


# ---------------------------------------------------------------- the CLI (cli/app.py, cli/utils.py, _arg_parser.py)


def build_parser():
    p = argparse.ArgumentParser(
        prog="automodel",
        description="CLI for NeMo AutoModel recipes. The YAML config specifies both the recipe and the launcher.")
    p.add_argument("config", metavar="<config.yaml>", help="Path to YAML configuration file (must specify a recipe "
                   "target)")
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=None,
                   help="Number of workers per node for local/interactive jobs. Ignored when a skypilot/nemo_run "
                        "section is present.")
    return p


def parse_cli_argv(default_cfg_path, argv, frames):
    """_arg_parser.py:20-76."""
    overrides = []
    i = 0
    cfg_path = default_cfg_path
    while i < len(argv):
        tok = argv[i]
        if tok in ("--config", "-c"):
            if i + 1 >= len(argv):
                raise _PyError("ValueError", "Expected a path after --config", frames + [(ARGP, 46, "parse_cli_argv")])
            cfg_path = argv[i + 1]
            i += 2
            continue
        if tok.startswith("--"):
            key = tok.lstrip("-")
            if "=" in key:
                overrides.append(key)
                i += 1
            elif i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                overrides.append("{}={}".format(key, argv[i + 1]))
                i += 2
            else:
                overrides.append("{}=True".format(key))
                i += 1
            continue
        i += 1
    if not cfg_path:
        raise _PyError("ValueError", "You must specify --config <path>", frames + [(ARGP, 75, "parse_cli_argv")])
    return cfg_path, overrides


def parse_args_and_load_config(default_cfg_path, argv, frames):
    """_arg_parser.py:79-123: every rank prints the config path."""
    cfg_path, overrides = parse_cli_argv(default_cfg_path, argv, frames + [(ARGP, 87, "parse_args_and_load_config")])
    harness.out("cfg-path: {}".format(cfg_path))
    cfg, raw = load_yaml_config(cfg_path, frames + [(ARGP, 90, "parse_args_and_load_config")])
    for kv in overrides:
        dotted, val = kv.split("=", 1)
        set_by_dotted(cfg, dotted, translate_value(val), frames + [(ARGP, 95, "parse_args_and_load_config"),
                                                                   (LOADER, 745, "set_by_dotted")])
    wandb = cfg.get("wandb")
    if isinstance(wandb, Node):
        enabled = bool(wandb.get("enable", True))
        wandb.pop("enable", None)
        if not enabled:
            cfg.pop("wandb", None)
    return cfg, raw


def _resolve_recipe_cls(target, frames):
    """interactive.py:40-48: import the recipe's module, take the class."""
    module, _, cls = target.rpartition(".")
    known_modules = {fqn.rpartition(".")[0] for fqn in RECIPES.values()}
    if module in known_modules:
        names = {fqn.rpartition(".")[2]: fqn for fqn in RECIPES.values() if fqn.rpartition(".")[0] == module}
        names.update(_IMPORTED.get(module, {}))
        if cls not in names:
            raise _PyError("AttributeError", "module '{}' has no attribute '{}'".format(module, cls),
                           frames + [(LAUNCH, 48, "resolve_recipe_cls")])
        target = names[cls]
    else:
        parts = module.split(".")
        missing = None
        if parts[0] not in INSTALLED and parts[0] not in sys.stdlib_module_names:
            missing = parts[0]
        elif parts[0] == "nemo_automodel":
            for i in range(2, len(parts) + 1):
                prefix = ".".join(parts[:i])
                if prefix not in _RECIPE_PACKAGES and prefix not in known_modules:
                    if ".".join(parts[:i - 1]) in _RECIPE_PACKAGES and ".".join(parts[:2]) == "nemo_automodel.recipes":
                        missing = prefix
                    break
        if missing is not None:
            raise _PyError("ModuleNotFoundError", "No module named '{}'".format(missing),
                           frames + [(LAUNCH, 47, "resolve_recipe_cls")])
        harness.emulator_fault("recipe target {!r}: only the recipes of nemo_automodel/recipes are known to the "
                               "emulator".format(target))
    if target not in (FINETUNE, BENCHMARK):
        harness.emulator_fault("recipe {} is not emulated (the emulator runs {} and {})".format(
            target.rpartition(".")[2], FINETUNE.rpartition(".")[2], BENCHMARK.rpartition(".")[2]))
    return "benchmark" if target == BENCHMARK else "finetune"


def _run_in_process(target, cfg, raw, frames):
    """InteractiveLauncher._run_recipe_in_process: recipe_cls(cfg); setup(); run_train_validation_loop()."""
    kind = _resolve_recipe_cls(target, frames + [(LAUNCH, 90, "_run_recipe_in_process")])
    recipe = Recipe(kind, cfg, raw, frames + [(LAUNCH, 91, "_run_recipe_in_process")])
    recipe.setup(frames + [(LAUNCH, 92, "_run_recipe_in_process")])
    # a benchmark recipe has no run_train_validation_loop of its own: the fine-tune loop runs
    recipe.run_train_validation_loop(frames + [(LAUNCH, 93, "_run_recipe_in_process")])
    return None


def _spawn_torchrun(argv, config_path, target, nproc, extra):
    """InteractiveLauncher.launch, several devices (interactive.py:130-141): torchrun's own parser over the
    command line, the recipe module's file as the script, `-c CONFIG` and the overrides after it."""
    from . import torchrun

    module = target.rpartition(".")[0]
    cwd = os.getcwd()
    if os.path.exists(os.path.join(cwd, "nemo_automodel/components")) and os.path.exists(os.path.join(cwd, "examples/")):
        root = cwd
        os.environ["PYTHONPATH"] = cwd + (":" + os.environ["PYTHONPATH"] if "PYTHONPATH" in os.environ else "")
    else:
        root = PKG_ROOT
    script = os.path.join(root, module.replace(".", "/") + ".py")
    a, _ = torchrun.parser().parse_known_args(argv)
    cmd = [os.path.join(harness.BIN_DIR, "torchrun"),
           "--nnodes={}".format(a.nnodes), "--nproc-per-node={}".format(nproc),
           "--rdzv-backend={}".format(a.rdzv_backend), "--rdzv-endpoint={}".format(a.rdzv_endpoint),
           "--rdzv-id={}".format(a.rdzv_id), "--rdzv-conf={}".format(a.rdzv_conf),
           "--max-restarts={}".format(a.max_restarts), "--monitor-interval={}".format(a.monitor_interval),
           "--start-method={}".format(a.start_method), "--role={}".format(a.role),
           "--redirects={}".format(a.redirects), "--tee={}".format(a.tee),
           "--local-ranks-filter={}".format(a.local_ranks_filter), "--node-rank={}".format(a.node_rank),
           "--master-addr={}".format(a.master_addr), "--master-port={}".format(a.master_port)]
    if a.standalone:
        cmd.append("--standalone")
    if a.module:
        cmd.append("--module")
    if a.no_python:
        cmd.append("--no-python")
    if a.run_path:
        cmd.append("--run-path")
    for opt, v in (("--log-dir", a.log_dir), ("--local-addr", a.local_addr), ("--logs-specs", a.logs_specs)):
        if v is not None:
            cmd.append("{}={}".format(opt, v))
    cmd += [script, "-c", str(config_path)] + list(extra)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(cmd[0], cmd)


def _run_cli(argv, entry):
    """cli/app.py:95-159 (main) and InteractiveLauncher.launch (interactive.py:95-141)."""
    if entry == "module":
        outer = [("<frozen runpy>", 198, "_run_module_as_main"), ("<frozen runpy>", 88, "_run_code"),
                 (APP, 163, "<module>")]
    else:
        outer = [(os.path.abspath(sys.argv[0]), 8, "<module>")]
    rank = int(os.environ.get("RANK", "0") or 0)
    log = _Log(rank)  # rank > 0: logging.disable(CRITICAL) at import (app.py:59-62)
    args, extra = build_parser().parse_known_args(argv)
    config_path = os.path.realpath(args.config)
    try:
        try:
            with open(config_path) as f:
                config = yaml.safe_load(f)
        except FileNotFoundError:
            log.emit("ERROR", "nemo_automodel.cli.utils", "File '{}' was not found.".format(config_path))
            raise _PyError("FileNotFoundError", "[Errno 2] No such file or directory: {!r}".format(config_path),
                           [(APP, 107, "main"), (UTILS, 74, "load_yaml"), (UTILS, 70, "load_yaml")])
        except IsADirectoryError:
            raise _PyError("IsADirectoryError", "[Errno 21] Is a directory: {!r}".format(config_path),
                           [(APP, 107, "main"), (UTILS, 70, "load_yaml")])
        except yaml.YAMLError as e:
            log.emit("ERROR", "nemo_automodel.cli.utils", "parsing YAML file '{}' failed: {}".format(config_path, e))
            raise _PyError("{}.{}".format(type(e).__module__, type(e).__qualname__), str(e),
                           [(APP, 107, "main"), (UTILS, 77, "load_yaml"), (UTILS, 71, "load_yaml")])
        if not isinstance(config, dict):
            raise _PyError("AttributeError", "'{}' object has no attribute 'get'".format(type(config).__name__),
                           [(APP, 109, "main")])
        section = config.get("recipe")
        if isinstance(section, str) and section.strip():
            raw_target = section.strip()
        elif isinstance(section, dict) and "_target_" in section:
            raw_target = section["_target_"]
        else:
            log.emit("ERROR", "nemo_automodel.cli.app",
                     "YAML config must specify a recipe target.\nExamples:\n"
                     "  recipe: TrainFinetuneRecipeForNextTokenPrediction\n"
                     "  recipe: nemo_automodel.recipes.llm.train_ft.TrainFinetuneRecipeForNextTokenPrediction\n"
                     "  recipe:\n"
                     "    _target_: nemo_automodel.recipes.llm.train_ft.TrainFinetuneRecipeForNextTokenPrediction\n\n"
                     "See docs/BREAKING_CHANGES.md for the full list of available recipe targets.")
            sys.exit(1)
        if not isinstance(raw_target, str):
            raise _PyError("TypeError", "argument of type '{}' is not iterable".format(type(raw_target).__name__),
                           [(APP, 129, "main"), (UTILS, 58, "resolve_recipe_name")])
        if "." in raw_target:
            target = raw_target
        elif raw_target in RECIPES:
            target = RECIPES[raw_target]
        else:
            log.emit("ERROR", "nemo_automodel.cli.app", "Unknown recipe class '{}'. Available short names:\n{}".format(
                raw_target, "\n".join("  - {}".format(n) for n in sorted(RECIPES))))
            sys.exit(1)
        if config.get("skypilot"):
            harness.emulator_fault("the `skypilot:` launcher (a remote launch through SkyPilot) is not emulated")
        if config.get("nemo_run"):
            harness.emulator_fault("the `nemo_run:` launcher (a launch through NeMo-Run) is not emulated")
        frames = [(APP, 158, "main")]
        cfg, raw = parse_args_and_load_config(config_path, extra, frames)
        frames = [(APP, 159, "main")]
        env = os.environ
        if "LOCAL_RANK" in env and "TORCHELASTIC_RUN_ID" in env:
            return _run_in_process(target, cfg, raw, frames + [(LAUNCH, 118, "launch")])
        gpus = env.get("ATTUNE_EMULATE_GPUS", "")
        if not gpus or int(gpus) <= 0:
            raise _PyError("ValueError", "Cuda is not available.", frames + [(LAUNCH, 124, "launch")])
        devices = int(gpus)
        if args.nproc_per_node == 1 or devices == 1:
            return _run_in_process(target, cfg, raw, frames + [(LAUNCH, 129, "launch")])
        nproc = args.nproc_per_node if args.nproc_per_node is not None else devices
        # the workers run the recipe module's own main(): the class named in `recipe:` is not imported here
        module = target.rpartition(".")[0]
        known = {fqn.rpartition(".")[0] for fqn in RECIPES.values()}
        if module in known and module not in (FINETUNE.rpartition(".")[0], BENCHMARK.rpartition(".")[0]):
            harness.emulator_fault("recipe module {} is not emulated (the emulator runs recipes/llm/train_ft.py and "
                                   "recipes/llm/benchmark.py)".format(module))
        _spawn_torchrun(argv, config_path, target, nproc, extra)
    except _PyError as e:
        _die(e, outer)


def _run_recipe_script(kind, argv):
    """`python recipes/llm/train_ft.py -c CFG ...` / benchmark.py: the module's main() (train_ft.py:1587-1597,
    benchmark.py:588-611)."""
    script = TRAIN_FT if kind == "finetune" else BENCH
    here = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0].endswith(".py") else script
    outer = [(here, 1601 if kind == "finetune" else 615, "<module>")]
    default = os.path.join(os.path.dirname(script), "llama_3_2_1b_hellaswag.yaml") if kind == "finetune" else \
        os.path.join(PKG_ROOT, "examples", "benchmark", "configs", "moonlight_16b_torch.yaml")
    line = 1594 if kind == "finetune" else 603
    try:
        cfg, raw = parse_args_and_load_config(default, argv, [(here, line, "main")])
        recipe = Recipe(kind, cfg, raw, [(here, line + 1 if kind == "finetune" else 604, "main")])
        recipe.setup([(here, 1596 if kind == "finetune" else 606, "main")])
        if kind == "finetune":
            recipe.run_train_validation_loop([(here, 1597, "main")])
        else:
            recipe.run_benchmark([(here, 607, "main")])
    except _PyError as e:
        _die(e, outer)


# ---------------------------------------------------------------- entry points


def main(argv):
    """`python -m nemo_automodel.cli.app ARGS` (app.py:162-163: main()'s return value is dropped, so exit 0)."""
    _run_cli(list(argv), "module")
    return None


def cli_main():
    """The `automodel`/`am` console script: sys.exit(main())."""
    return _run_cli(sys.argv[1:], "console")


def train_ft_main(argv):
    """`python nemo_automodel/recipes/llm/train_ft.py ARGS` (what the CLI's torchrun runs per worker)."""
    _run_recipe_script("finetune", list(argv))
    return None


def benchmark_main(argv):
    """`python nemo_automodel/recipes/llm/benchmark.py ARGS`."""
    _run_recipe_script("benchmark", list(argv))
    return None
