"""NVIDIA Megatron-LM's `pretrain_gpt.py` (main @ d98e8a64dd, megatron-core
0.20.0, after core_v0.19.0) as one of its processes behaves: its parser (the
options in megatron_options.tsv, parsed twice as the script does: leniently
without the nvidia-modelopt options, then strictly), validate_args' checks,
the later failures of missing arguments, the start-up lines, the training_log
line on the last rank, evaluation, checkpoints (iter_%07d directories and
latest_checkpointed_iteration.txt), the exit conditions and the signal
handling. Timing, memory and out-of-memory come from the harness (attune's
simulator). The source of each behaviour is cited in docs/frameworks.md.

nvidia-modelopt is taken as installed only when ATTUNE_EMULATE_MEGATRON_MODELOPT=1.
"""

import argparse
import datetime
import enum
import json
import math
import os
import signal
import sys
import tempfile
import time
import traceback

from . import harness

COMMIT = "d98e8a64ddf34856e74b24714e3bedb2f5a39553"
MCORE_VERSION = "0.20.0"
GIT_SHORT = "d98e8a64dd"  # `git rev-parse --short HEAD` of a full clone at the commit
TORCH_VERSION = "2.13.0"  # uv.lock
TE_VERSION = "2.17.1+4329ff84"  # uv.lock
EMULATED_STATE = "attune_emulated_state.json"  # the emulator's own marker (consumed samples) in its checkpoints
OPTIONS_TSV = os.path.join(os.path.dirname(os.path.abspath(__file__)), "megatron_options.tsv")

# Simulated seconds of the phases the framework's source does not time (the emulator's choice).
IMPORT_S = 20.0
TORCH_IMPORT_S = 5.0
INIT_S = 6.0
COMPILE_S = 2.0
MODEL_S = 12.0
LOAD_S = 15.0
DATA_S = 5.0
SAVE_S = 20.0
ASYNC_SAVE_S = 2.0


# ---------------------------------------------------------------- the parser's types


class AttnBackend(enum.Enum):
    """megatron/core/transformer/enums.py AttnBackend."""
    flash = 1
    fused = 2
    unfused = 3
    local = 4
    auto = 5


class CudaGraphModule(enum.Enum):
    """megatron/core/transformer/enums.py CudaGraphModule."""
    attn = 1
    mlp = 2
    moe = 3
    moe_router = 4
    moe_preprocess = 5
    mamba = 6


class InferenceCudaGraphScope(enum.Enum):
    """megatron/core/transformer/enums.py InferenceCudaGraphScope."""
    none = 1
    layer = 2
    block = 3


ENUMS = {"AttnBackend": AttnBackend, "Signals": signal.Signals}


def _enum_type(cls):
    def enum_type_handler(cli_arg):  # argument_utils.py:115-118: a KeyError is not an argparse error
        return cls[cli_arg]
    return enum_type_handler


def _eval_pattern(pattern):
    if any(c not in ",0123456789[]()+*" for c in pattern):
        raise ValueError("Invalid pattern: {}".format(pattern))
    return eval(pattern, {"__builtins__": {}}, {})  # only digits, brackets, + and *


def moe_freq_type(x):
    if isinstance(x, int):
        return x
    return _eval_pattern(x) if "[" in x else int(x)


def no_rope_freq_type(x):
    if x is None or isinstance(x, int):
        return x
    return _eval_pattern(x) if "[" in x else int(x)


def la_freq_type(x):
    if x is None or isinstance(x, int):
        return x
    return _eval_pattern(x) if "[" in x else int(x)


def tuple_type(x):
    if x is None or isinstance(x, tuple):
        return x
    return tuple(int(i) for i in x.strip("()").split(","))


def _parse_cuda_graph_modules_arg(scope):
    if scope in {"full", "full_iteration", "full_iteration_inference"}:
        return scope
    return CudaGraphModule[scope]


TYPES = {"int": int, "float": float, "str": str, "bool": bool, "moe_freq_type": moe_freq_type,
         "no_rope_freq_type": no_rope_freq_type, "la_freq_type": la_freq_type, "tuple_type": tuple_type,
         "_parse_cuda_graph_modules_arg": _parse_cuda_graph_modules_arg}

# Where a custom type's exception surfaces when it is not an argparse error (not ValueError/TypeError).
TYPE_FRAMES = {
    "AttnBackend": [("megatron/training/argument_utils.py", 116, "enum_type_handler")],
    "Signals": [("megatron/training/argument_utils.py", 116, "enum_type_handler")],
    "_parse_cuda_graph_modules_arg": [("megatron/training/arguments.py", 260, "_parse_cuda_graph_modules_arg")],
    "no_rope_freq_type": [("megatron/training/arguments.py", 322, "no_rope_freq_type"),
                          ("megatron/training/arguments.py", 253, "_eval_pattern")],
    "moe_freq_type": [("megatron/training/arguments.py", 347, "moe_freq_type"),
                      ("megatron/training/arguments.py", 253, "_eval_pattern")],
    "la_freq_type": [("megatron/training/arguments.py", 372, "la_freq_type"),
                     ("megatron/training/arguments.py", 253, "_eval_pattern")],
}


def _read_options():
    rows = []
    header = None
    with open(OPTIONS_TSV) as f:
        for line in f:
            if line.startswith("#"):
                continue
            cells = line.rstrip("\n").split("\t")
            if header is None:
                header = cells
                continue
            rows.append(dict(zip(header, cells)))
    return rows


def _default(text):
    if text.startswith("@env:"):
        _, name, dflt = text.split(":")
        return int(os.getenv(name, dflt))
    if text.startswith("@"):
        cls, _, member = text[1:].partition(".")
        return ENUMS[cls][member]
    return json.loads(text)


_LAST_TYPE = [None]


def _traced(name, func):
    """The type callable, remembering which one ran last (for the traceback of its exception)."""
    def call(value):
        _LAST_TYPE[0] = name
        return func(value)
    call.__name__ = func.__name__
    return call


def build_parser(prog, with_modelopt):
    """megatron/training/arguments.py:117-132 parse_args' parser."""
    parser = argparse.ArgumentParser(prog=prog, description="Megatron-LM Arguments", allow_abbrev=False)
    groups = {}
    for r in _read_options():
        if r["modelopt"] == "1" and not with_modelopt:
            continue
        group = groups.get(r["group"])
        if group is None:
            group = groups[r["group"]] = parser.add_argument_group(title=r["group"])
        kw = {"dest": r["dest"], "default": _default(r["default"])}
        action = r["action"]
        if action == "boolean_optional":
            kw["action"] = argparse.BooleanOptionalAction
        elif action:
            kw["action"] = action
        t = r["type"]
        if t in ENUMS:
            kw["type"] = _traced(t, _enum_type(ENUMS[t]))
            kw["choices"] = list(ENUMS[t])
        elif t in TYPE_FRAMES:
            kw["type"] = _traced(t, TYPES[t])
        elif t:
            kw["type"] = TYPES[t]
        if r["nargs"]:
            kw["nargs"] = int(r["nargs"]) if r["nargs"].isdigit() else r["nargs"]
        if r["choices"]:
            kw["choices"] = json.loads(r["choices"])
        if r["metavar"]:
            kw["metavar"] = r["metavar"]
        if r["help"] == "SUPPRESS":
            kw["help"] = argparse.SUPPRESS
        group.add_argument(*r["flags"].split(","), **kw)
    return parser


def modelopt_installed():
    return os.environ.get("ATTUNE_EMULATE_MEGATRON_MODELOPT", "") == "1"


# ---------------------------------------------------------------- failing as the process does


class Failure(Exception):
    """An uncaught Python exception of the framework: (type, message, frames)."""

    def __init__(self, exc_type, message="", frames=(), code=1, lines=None):
        super().__init__(message)
        self.exc_type, self.message, self.frames, self.code, self.lines = exc_type, message, list(frames), code, lines


class Exit(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


def _ts(t=None):
    return datetime.datetime.fromtimestamp(harness.wall_time() if t is None else t).strftime("%Y-%m-%d %H:%M:%S.%f")


class Dtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return "torch." + self.name

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, Dtype) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


FLOAT32, BFLOAT16, FLOAT16, UINT8 = Dtype("float32"), Dtype("bfloat16"), Dtype("float16"), Dtype("uint8")
DTYPE_MAP = {"fp32": FLOAT32, "bf16": BFLOAT16, "fp16": FLOAT16, "fp8": UINT8, "auto": None, None: None}


# ---------------------------------------------------------------- the process


class Process:
    def __init__(self, argv):
        self.argv = list(argv)
        self.w = harness.worker()
        script = sys.argv[0] if sys.argv and sys.argv[0] else "pretrain_gpt.py"
        self.prog = os.path.basename(script)
        self.root = os.path.dirname(os.path.abspath(script))
        self.rank = self.w.rank
        self.world = self.w.world_size
        self.dist_initialized = False  # torch.distributed.init_process_group has run
        self.log_level = 20  # logging.basicConfig(level=INFO), training.py:36
        self.pred = None
        self.clock = None
        self.t0 = harness.wall_time()
        self.real_start = time.time() - 1.0
        self.sim = 0.0  # simulated seconds this process has spent (start-up, steps, saves, evaluations)
        self.lock = None

    def sleep(self, seconds):
        """Simulated seconds of work. Once the ranks have met before the first step, every rank sleeps to
        the same deadlines (its own simulated clock from that meeting), so they stay in step as the
        collectives of each real step keep them."""
        self.sim += seconds
        if self.lock is None:
            harness.sleep(seconds)
            return
        target = self.lock[0] + (self.sim - self.lock[1]) / harness.time_scale()
        wait = target - time.time()
        if wait > 0:
            time.sleep(wait)

    def job_key(self):
        if os.environ.get("SLURM_JOB_ID"):
            # One job step: every node's ranks, whatever port each node's agent reports.
            return "{}.{}".format(os.environ["SLURM_JOB_ID"], os.environ.get("SLURM_STEP_ID", ""))
        elif self.w.nnodes == 1:
            job = "p{}".format(os.getppid())  # the node's torchrun agent
        else:
            job = os.environ.get("TORCHELASTIC_RUN_ID", "none")
        return "{}-{}-{}".format(job, self.w.master_addr, self.w.master_port)

    def meet(self):
        """The barrier of print_datetime('before the start of training step') (training.py:703-711): the
        ranks' shared start of the step clock (a directory of one file per rank, named after the job)."""
        if self.world <= 1:
            self.lock = (time.time(), self.sim)
            return
        d = os.path.join(tempfile.gettempdir(), "attune-emulate-megatron-" + self.job_key())
        if self.rank == 0:
            _prune_old(tempfile.gettempdir(), "attune-emulate-megatron-")
        os.makedirs(d, exist_ok=True)
        harness.write_file(os.path.join(d, "rank{}".format(self.rank)), "ready\n")
        fresh_key = bool(os.environ.get("SLURM_JOB_ID"))
        give_up = time.time() + 120.0
        while True:
            times = []
            for name in os.listdir(d):
                try:
                    t = os.path.getmtime(os.path.join(d, name))
                except OSError:
                    continue
                # A Slurm job step's directory is its own; elsewhere a file from
                # before this process started is an earlier run's. (Another
                # node's ranks may have arrived before this one started.)
                if name.startswith("rank") and (fresh_key or t >= self.real_start):
                    times.append(t)
            if len(times) >= self.world or time.time() > give_up:
                break
            time.sleep(0.002)
        self.lock = (max(times) if times else time.time(), self.sim)
        # The last rank to leave removes the directory.
        try:
            harness.write_file(os.path.join(d, "left{}".format(self.rank)), "left\n")
            if sum(1 for name in os.listdir(d) if name.startswith("left")) >= self.world:
                import shutil
                shutil.rmtree(d, ignore_errors=True)
        except OSError:
            pass

    # -- output
    def rank0(self):
        """is_rank0 / print_rank_0's rank: torch.distributed's once initialised, else RANK, else SLURM_PROCID
        (in a Slurm job), else 0 with a warning (megatron/core/_rank_utils.py:15-42)."""
        if self.dist_initialized or "RANK" in os.environ:
            return self.rank == 0
        if "SLURM_NTASKS" in os.environ and "SLURM_PROCID" in os.environ:
            return int(os.environ["SLURM_PROCID"]) == 0
        if not getattr(self, "rank_warned", False):
            self.rank_warned = True
            harness.err("{}:38: UserWarning: Could not determine rank from torch.distributed, RANK, or SLURM_PROCID. "
                        "Defaulting to rank 0.".format(self.path("megatron/core/_rank_utils.py")))
            harness.err("  warnings.warn(")
        return True

    def out0(self, line):
        if self.rank0():
            harness.out(line)

    def out_last(self, line):
        if self.rank == self.world - 1:
            harness.out(line)

    def info(self, logger, message, rank=0):
        """logger.info through the CustomHandler (stdout, 'LEVEL:name:message')."""
        if self.log_level <= 20 and self.rank == rank:
            harness.out("INFO:{}:{}".format(logger, message))

    def warn0(self, message, rank_given=False):
        """warn_rank_0: warnings.warn on rank 0 (stderr), common_utils.py:472-479."""
        if (self.rank == 0) if rank_given else self.rank0():
            line = 476 if rank_given else 479
            harness.err("{}:{}: UserWarning: {}".format(self.path("megatron/training/utils/common_utils.py"), line,
                                                       message))
            harness.err("  warnings.warn(message)")

    def path(self, rel):
        return os.path.join(self.root, rel)

    def frames(self, *frames):
        return [(self.path(f), line, func) for f, line, func in frames]

    def print_datetime(self, text):
        self.out0("[{}] datetime: {} ".format(text, _ts()))

    def timers_block(self, items):
        """Timers.log (megatron/core/timers.py:338-450) on the last rank, as --timing-log-option says
        (minmax, max, or all: every rank's time, here the same on each)."""
        if not items:
            return
        option = getattr(getattr(self, "a", None), "timing_log_option", "minmax")
        if option == "all":
            lines = ["times across ranks (ms):"]
            for name, lo, hi in items:
                if hi > 0:
                    lines.append("  {}:".format(name))
                    lines.extend("     rank {:2d}: {:.2f}".format(r, hi) for r in range(self.world))
            if len(lines) == 1:
                return
        else:
            lines = ["max time across ranks (ms):" if option == "max" else "(min, max) time across ranks (ms):"]
            for name, lo, hi in items:
                if option == "max":
                    lines.append("    {}: {:.2f}".format((name + " ").ljust(48, "."), hi))
                else:
                    lines.append("    {}: ({:.2f}, {:.2f})".format((name + " ").ljust(48, "."), lo, hi))
        self.info("megatron.core.timers", "\n".join(lines), rank=self.world - 1)

    def prediction(self):
        if self.pred is None:
            self.pred = harness.prediction(self.w)
            self.clock = harness.StepClock(self.pred)
        return self.pred

    def gpu_arch_major(self):
        """get_device_arch_version(): the emulated GPU's compute capability major (B200: 10, H100/H200: 9)."""
        return 10 if self.prediction().hbm_gib > 150.0 else 9

    # ------------------------------------------------------------ parse (arguments.py:117-169)

    def parse(self, first_pass):
        """The first pass is maybe_wrap_for_inprocess_restart's parse_known_args without the
        modelopt options (inprocess_restart.py:133); the second parse_and_validate_args' strict
        parse_args, with them when nvidia-modelopt imports (pretrain_gpt.py:525-528)."""
        parser = build_parser(self.prog, with_modelopt=not first_pass and modelopt_installed())
        if first_pass:
            head = [("pretrain_gpt.py", 523, "<module>"),
                    ("megatron/training/inprocess_restart.py", 133, "maybe_wrap_for_inprocess_restart"),
                    ("megatron/training/arguments.py", 130, "parse_args")]
        else:
            head = [("pretrain_gpt.py", 525, "<module>"),
                    ("megatron/training/arguments.py", 89, "parse_and_validate_args"),
                    ("megatron/training/arguments.py", 132, "parse_args")]
        _LAST_TYPE[0] = None
        try:
            if first_pass:
                args, _ = parser.parse_known_args(self.argv)
            else:
                args = parser.parse_args(self.argv)
        except (KeyError, SyntaxError) as e:
            frames = head + TYPE_FRAMES.get(_LAST_TYPE[0], [])
            lines = traceback.format_exception_only(type(e), e)
            text = "".join(lines).rstrip("\n").split("\n")
            raise Failure("", frames=self.frames(*frames), lines=text)
        args._is_global_batch_size_explicitly_specified = args.global_batch_size is not None
        if args.yaml_cfg is not None:
            self.yaml_cfg(args, head)
        args.rank = int(os.getenv("RANK", "0"))
        args.world_size = int(os.getenv("WORLD_SIZE", "1"))
        if args.disable_msc_deprecated:
            self.warn_once("--disable-msc is deprecated and will be removed in a future release. MSC is now "
                           "disabled by default; pass --enable-msc to opt in.")
            args.enable_msc = False
        if args.enable_msc:
            self.warn_once("The MSC feature is enabled.")
        return args

    _warned = set()

    def warn_once(self, message, rank_given=False):
        """warnings' default filter shows a message once per place it is issued."""
        key = (message, rank_given)
        if key not in self._warned:
            self._warned.add(key)
            self.warn0(message, rank_given)

    def yaml_cfg(self, args, head):
        """--yaml-cfg replaces the namespace with the YAML's (arguments.py:137-140, yaml_arguments.py:436-452);
        parse_args then reads args.disable_msc_deprecated (arguments.py:148), which such a YAML lacks."""
        harness.out("warning using experimental yaml arguments feature, argparse arguments will be ignored")
        frames = head[:-1] + [("megatron/training/arguments.py", 140, "parse_args"),
                              ("megatron/training/yaml_arguments.py", 443, "load_yaml")]
        try:
            with open(args.yaml_cfg) as f:
                import yaml
                config = yaml.safe_load(f)
        except OSError as e:
            raise Failure("FileNotFoundError" if isinstance(e, FileNotFoundError) else "OSError",
                          "[Errno {}] {}: '{}'".format(e.errno, e.strerror, args.yaml_cfg), self.frames(*frames))
        if not isinstance(config, dict) or "disable_msc_deprecated" not in config:
            raise Failure("AttributeError", "'types.SimpleNamespace' object has no attribute 'disable_msc_deprecated'",
                          self.frames(*(head[:-1] + [("megatron/training/arguments.py", 148, "parse_args")])))
        harness.emulator_fault("a --yaml-cfg namespace that gets past parse_args is not emulated")

    # ------------------------------------------------------------ validate_args (arguments.py:389-1987)

    def vfail(self, line, message="", exc="AssertionError", extra=()):
        raise Failure(exc, message, self.frames(("pretrain_gpt.py", 525, "<module>"),
                                                ("megatron/training/arguments.py", 108, "parse_and_validate_args"),
                                                ("megatron/training/arguments.py", line, "validate_args"), *extra))

    def validate(self, a):
        if a.ckpt_convert_format is not None:
            if a.ckpt_convert_save is None:
                self.vfail(393)
            if a.load is None:
                self.vfail(394)
            a.exit_on_missing_checkpoint = True
        if a.non_persistent_ckpt_type not in ("global", "local", None):
            self.vfail(398, "Currently only global and local checkpoints are supported")
        a.use_dist_ckpt = a.ckpt_format != "torch"
        tp, pp, cp = a.tensor_model_parallel_size, a.pipeline_model_parallel_size, a.context_parallel_size
        shards = a.tensor_parallel_num_weight_shards
        if shards is None:
            shards = tp
        else:
            if shards < tp:
                self.vfail(418, "tensor_parallel_num_weight_shards ({}) must be >= tensor_model_parallel_size ({})."
                           .format(shards, tp), "ValueError",
                           [("megatron/core/model_parallel_config.py", 32, "resolve_tensor_parallel_weight_shards")])
            if shards % tp:
                self.vfail(418, "tensor_parallel_num_weight_shards ({}) must be divisible by "
                           "tensor_model_parallel_size ({}).".format(shards, tp), "ValueError",
                           [("megatron/core/model_parallel_config.py", 37, "resolve_tensor_parallel_weight_shards")])
        a.tensor_parallel_num_weight_shards, a.gtp_weight_remat_size = shards, shards // tp
        total_model_size = tp * pp * cp * a.gtp_weight_remat_size
        if a.world_size % total_model_size != 0:
            self.vfail(432, "world size ({}) is not divisible by total_model_size (total_model_size={})".format(
                a.world_size, total_model_size))
        if a.attention_backend == AttnBackend.local and (not a.spec or a.spec[0] != "local"):
            self.vfail(437, "--attention-backend local is only supported with --spec local")
        a.transformer_pipeline_model_parallel_size = pp
        a.data_parallel_size = a.world_size // total_model_size
        if a.perform_rl_step:
            harness.emulator_fault("--perform-rl-step (RL training) is not emulated")
        self.out0("using world size: {}, data-parallel size: {}, context-parallel size: {}, hierarchical "
                  "context-parallel sizes: {}, tensor-model-parallel size: {}, pipeline-model-parallel size: {}"
                  .format(a.world_size, a.data_parallel_size, cp, a.hierarchical_context_parallel_sizes, tp, pp))
        if a.hierarchical_context_parallel_sizes:
            prod = 1
            for x in a.hierarchical_context_parallel_sizes:
                prod *= x
            if cp != prod:
                self.vfail(582)
        if any("a2a+p2p" in c for c in a.cp_comm_type) and a.hierarchical_context_parallel_sizes is None:
            self.vfail(584, "--hierarchical-context-parallel-sizes must be set when a2a+p2p is used in cp comm")
        if a.expert_tensor_parallel_size is None:
            a.expert_tensor_parallel_size = tp
        if a.batch_size is not None:
            self.vfail(591, "--batch-size argument is no longer valid, use --micro-batch-size instead")
        del a.batch_size
        if a.warmup is not None:
            self.vfail(594, "--warmup argument is no longer valid, use --lr-warmup-fraction instead")
        del a.warmup
        if a.model_parallel_size is not None:
            self.vfail(597, "--model-parallel-size is no longer valid, use --tensor-model-parallel-size instead")
        del a.model_parallel_size
        if a.checkpoint_activations:
            self.out0("--checkpoint-activations is no longer valid, use --recompute-activations, or, for more "
                      "control, --recompute-granularity and --recompute-method.")
            raise Exit(0)  # exit(), arguments.py:604
        del a.checkpoint_activations
        if a.recompute_activations:
            a.recompute_granularity = "selective"
        del a.recompute_activations
        if a.enable_cuda_graph or a.external_cuda_graph:
            if a.cuda_graph_impl != "none":
                self.vfail(612, "Do not use --enable-cuda-graph or --external-cuda-graph with --cuda-graph-impl.")
            if a.enable_cuda_graph and a.external_cuda_graph:
                self.vfail(615, "--enable-cuda-graph and --external-cuda-graph cannot be enabled at the same time.")
            if a.enable_cuda_graph:
                if a.rank == 0:
                    harness.out("--enable-cuda-graph is deprecated, use --cuda-graph-impl=local instead.")
                a.cuda_graph_impl = "local"
                del a.enable_cuda_graph
            if a.external_cuda_graph:
                if a.rank == 0:
                    harness.out("--external-cuda-graph is deprecated, use --cuda-graph-impl=transformer_engine "
                                "instead.")
                a.cuda_graph_impl = "transformer_engine"
                del a.external_cuda_graph
        if a.cuda_graph_scope_deprecated is not None:
            if a.cuda_graph_modules:
                self.vfail(634, "--cuda-graph-scope and --cuda-graph-modules cannot be used together.")
            self.warn0("--cuda-graph-scope is deprecated, use --cuda-graph-modules instead.")
            a.cuda_graph_modules = a.cuda_graph_scope_deprecated
        del a.cuda_graph_scope_deprecated
        full = [m for m in a.cuda_graph_modules if isinstance(m, str)]
        a.cuda_graph_modules = [m for m in a.cuda_graph_modules if not isinstance(m, str)]
        if full:
            harness.emulator_fault("the deprecated --cuda-graph-modules values {} are not emulated".format(full))
        scope = a.inference_cuda_graph_scope
        if scope is None:
            scope = InferenceCudaGraphScope.layer if a.cuda_graph_impl == "local" else InferenceCudaGraphScope.none
        else:
            scope = InferenceCudaGraphScope[scope]
        a.inference_cuda_graph_scope = scope
        allowed = {"none": {"none"}, "local": {"layer", "block"}, "transformer_engine": {"none"},
                   "full_iteration": {"none"}}[a.cuda_graph_impl]
        if scope.name not in allowed:
            self.vfail(647, "Invalid inference CUDA graph scope {!r} for --cuda-graph-impl={!r}.".format(
                scope.name, a.cuda_graph_impl))
        # args_defaults of pretrain_gpt.py: {'tokenizer_type': 'GPT2BPETokenizer'}
        if a.tokenizer_type is not None:
            self.warn0("Overriding default arguments for tokenizer_type:GPT2BPETokenizer with tokenizer_type:{}"
                       .format(a.tokenizer_type))
        else:
            a.tokenizer_type = "GPT2BPETokenizer"
        if a.data_path is not None and a.split is None:
            self.warn0('Please specify --split when using --data-path. Using legacy default value of "969, 30, 1"')
            a.split = "969, 30, 1"
        if (a.data_path is not None or a.data_args_path is not None) and not (
                a.data_path is None or a.data_args_path is None):
            self.vfail(677)
        if a.phase_transition_iterations:
            a.phase_transition_iterations = sorted(int(x.strip()) for x in a.phase_transition_iterations.split(","))
        if a.micro_batch_size is None:
            self.vfail(693)
        if not a.micro_batch_size > 0:
            self.vfail(694)
        if a.step_batch_size_schedule is not None and a._is_global_batch_size_explicitly_specified:
            self.vfail(699, "Cannot specify both --step-batch-size-schedule and --global-batch-size", "ValueError")
        if a.global_batch_size is None:
            a.global_batch_size = a.micro_batch_size * a.data_parallel_size
            self.out0("setting global batch size to {}".format(a.global_batch_size))
        if not a.global_batch_size > 0:
            self.vfail(705)
        if a.eval_global_batch_size is None:
            a.eval_global_batch_size = a.global_batch_size
        if a.eval_micro_batch_size is None:
            a.eval_micro_batch_size = a.micro_batch_size
        if a.eval_global_batch_size % (a.eval_micro_batch_size * a.data_parallel_size * a.gtp_weight_remat_size):
            self.vfail(715, "eval_global_batch_size ({}) must be divisible by eval_micro_batch_size ({}) * "
                       "data_parallel_size ({}) * gtp_weight_remat_size ({})".format(
                           a.eval_global_batch_size, a.eval_micro_batch_size, a.data_parallel_size,
                           a.gtp_weight_remat_size))
        if a.hybrid_override_pattern is not None or a.hybrid_layer_pattern is not None:
            harness.emulator_fault("hybrid (Mamba) layer patterns are pretrain_hybrid.py's; not emulated for GPT")
        if a.mtp_num_layers and a.position_embedding_type not in ("rope", "none"):
            self.vfail(883, "Multi-Token Prediction (MTP) is not supported with {} position embedding type.The "
                       "supported position embedding types are rope and none.".format(a.position_embedding_type))
        if a.mtp_hsm and not (a.mtp_num_layers and a.mtp_num_layers >= 2):
            self.warn0("--mtp-hsm needs at least two MTP layers to mix anything, but --mtp-num-layers is {}. "
                       "Disabling Hidden State Mixing.".format(a.mtp_num_layers), rank_given=True)
            a.mtp_hsm = False
        if a.mtp_hybrid_override_pattern is not None:
            self.warn0("--mtp-hybrid-override-pattern is for Mamba/hybrid models only. For GPT models, MTP "
                       "replicates the main transformer layer structure. This argument will be ignored.",
                       rank_given=True)
        n_vpp_opts = sum(x is not None for x in (a.num_layers_per_virtual_pipeline_stage,
                                                  a.num_virtual_stages_per_pipeline_rank,
                                                  a.pipeline_model_parallel_layout))
        if n_vpp_opts > 1:
            self.vfail(928, "No more than one of the following arguments can be set at the same time: "
                       "--num-layers-per-virtual-pipeline-stage, --num-virtual-stages-per-pipeline-rank,"
                       "--pipeline-model-parallel-layout. args.num_layers_per_virtual_pipeline_stage={!r}, "
                       "args.num_virtual_stages_per_pipeline_rank={!r}, args.pipeline_model_parallel_layout={!r}."
                       .format(a.num_layers_per_virtual_pipeline_stage, a.num_virtual_stages_per_pipeline_rank,
                               a.pipeline_model_parallel_layout))
        if a.pipeline_model_parallel_layout is not None:
            num_stages = _layout_stages(a.pipeline_model_parallel_layout)
            if num_stages % pp:
                self.vfail(945, "The length of pipeline_model_parallel_layout must be divisible by "
                           "pipeline_model_parallel_size (num_stages={}, args.pipeline_model_parallel_size={})"
                           .format(num_stages, pp))
            a.virtual_pipeline_model_parallel_size = num_stages // pp
            if a.virtual_pipeline_model_parallel_size == 1:
                a.virtual_pipeline_model_parallel_size = None
        elif a.num_layers_per_virtual_pipeline_stage is not None or a.num_virtual_stages_per_pipeline_rank is not None:
            if a.num_virtual_stages_per_pipeline_rank is None:
                if a.decoder_first_pipeline_num_layers is not None or a.decoder_last_pipeline_num_layers is not None:
                    self.vfail(955, "please use --num-virtual-stages-per-pipeline-rank to specify virtual pipeline "
                               "parallel degree when enable uneven pipeline parallelism")
                num_layers = a.num_layers if a.num_layers is not None else a.decoder_num_layers
                if num_layers is None:
                    self.vfail(968, "unsupported operand type(s) for %: 'NoneType' and 'int'", "TypeError")
                num_layers += int(a.account_for_embedding_in_pipeline_split) + \
                    int(a.account_for_loss_in_pipeline_split)
                if num_layers % pp:
                    self.vfail(968, "number of layers of the model must be divisible pipeline model parallel size")
                per_stage = num_layers // pp
                if per_stage % a.num_layers_per_virtual_pipeline_stage:
                    self.vfail(972, "number of layers per pipeline stage must be divisible number of layers per "
                               "virtual pipeline stage")
                a.virtual_pipeline_model_parallel_size = per_stage // a.num_layers_per_virtual_pipeline_stage
            else:
                a.virtual_pipeline_model_parallel_size = a.num_virtual_stages_per_pipeline_rank
            if a.virtual_pipeline_model_parallel_size == 1:
                a.virtual_pipeline_model_parallel_size = None
        else:
            a.virtual_pipeline_model_parallel_size = None
            if a.decoder_first_pipeline_num_layers is None and a.decoder_last_pipeline_num_layers is None:
                if a.num_layers is not None:
                    num_layers = a.num_layers + int(a.account_for_embedding_in_pipeline_split) + \
                        int(a.account_for_loss_in_pipeline_split)
                    if num_layers % pp:
                        self.vfail(997, "Number of layers should be divisible by the pipeline-model-parallel size")
        if a.virtual_pipeline_model_parallel_size is not None:
            if a.overlap_p2p_comm:
                if not pp > 1:
                    self.vfail(1002, "When interleaved schedule is used, pipeline-model-parallel size should be "
                               "greater than 1")
            elif not pp > 2:
                self.vfail(1006, "When interleaved schedule is used and p2p communication overlap is disabled, "
                           "pipeline-model-parallel size should be greater than 2 to avoid having multiple p2p sends "
                           "and recvs between same 2 ranks per communication batch")
        else:
            a.overlap_p2p_comm = False
            a.align_param_gather = False
            if a.rank == 0 and pp > 1:
                harness.out("WARNING: Setting args.overlap_p2p_comm and args.align_param_gather to False since "
                            "non-interleaved schedule does not support overlapping p2p communication and aligned "
                            "param AG")
        self.out0("Number of virtual stages per pipeline stage: {}".format(a.virtual_pipeline_model_parallel_size))
        if a.overlap_param_gather:
            if not (a.use_distributed_optimizer or a.use_megatron_fsdp or a.optimizer == "dist_muon"):
                self.vfail(1025, "--overlap-param-gather only supported with distributed optimizer, megatron fsdp, "
                           "or dist_muon")
            if not a.overlap_grad_reduce:
                self.vfail(1028, "Must use --overlap-param-gather with --overlap-grad-reduce")
        if a.use_torch_fsdp2:
            for line, ok, msg in (
                    (1034, pp == 1, "--use-torch-fsdp2 is not supported with pipeline parallelism"),
                    (1036, a.expert_model_parallel_size == 1, "--use-torch-fsdp2 is not supported with expert "
                                                              "parallelism"),
                    (1038, not a.use_distributed_optimizer, "--use-torch-fsdp2 is not supported with MCore's "
                                                            "distributed optimizer"),
                    (1040, not a.gradient_accumulation_fusion, "--use-torch-fsdp2 is not supported with gradient "
                                                               "accumulation fusion"),
                    (1042, a.ckpt_format in ("torch_dist", "torch_dcp"), "--use-torch-fsdp2 requires --ckpt-format "
                                                                         "torch_dist or torch_dcp"),
                    (1044, a.untie_embeddings_and_output_weights, "--use-torch-fsdp2 requires "
                                                                  "--untie-embeddings-and-output-weights"),
                    (1046, not a.fp16, "--use-torch-fsdp2 not supported with fp16 yet"),
                    (1048, os.environ.get("CUDA_DEVICE_MAX_CONNECTIONS") != "1",
                     "FSDP always requires CUDA_DEVICE_MAX_CONNECTIONS value large than one")):
                if not ok:
                    self.vfail(line, msg)
        if a.overlap_param_gather_with_optimizer_step:
            for line, ok, msg in (
                    (1067, a.use_distributed_optimizer, "--overlap-param-gather-with-optimizer-step only supported "
                                                        "with distributed optimizer"),
                    (1069, a.overlap_param_gather, "Must use --overlap-param-gather-with-optimizer-step with "
                                                   "--overlap-param-gather"),
                    (1071, a.virtual_pipeline_model_parallel_size is not None, "--overlap-param-gather-with-"
                     "optimizer-step only supported with interleaved pipeline parallelism"),
                    (1073, not a.use_dist_ckpt, "--overlap-param-gather-with-optimizer-step not supported with "
                                                "distributed checkpointing yet")):
                if not ok:
                    self.vfail(line, msg)
        for name in ("main_grads_dtype", "main_params_dtype", "exp_avg_dtype", "exp_avg_sq_dtype",
                     "mamba_inference_conv_states_dtype", "mamba_inference_ssm_states_dtype",
                     "mamba_training_ssm_states_dtype", "megatron_fsdp_main_params_dtype",
                     "megatron_fsdp_main_grads_dtype", "megatron_fsdp_grad_comm_dtype"):
            value = getattr(a, name, None)
            setattr(a, name, value if isinstance(value, Dtype) else DTYPE_MAP.get(value, value))
        a.logit_dtype = DTYPE_MAP.get(getattr(a, "logit_dtype", None))
        if a.fp8_param_gather and not (a.use_distributed_optimizer or a.use_torch_fsdp2 or a.use_megatron_fsdp):
            self.vfail(1096, "--fp8-param-gather only supported with distributed optimizer, torch fsdp2, megatron "
                       "fsdp, or inference mode")
        if a.fp4 and a.fp8:
            self.vfail(1101, "--fp4-format and --fp8-format cannot be used simultaneously. Please choose one.",
                       "ValueError")
        if a.fp4_param_gather and not a.fp4:
            self.vfail(1105, "--fp4-param-gather must be used together with --fp4-format.", "ValueError")
        if a.use_megatron_fsdp:
            a.use_custom_fsdp = True
            if a.megatron_fsdp_version == 2:
                if a.use_distributed_optimizer:
                    self.vfail(1125, "--megatron-fsdp-version 2 is not compatible with --use-distributed-optimizer")
            else:
                if not a.use_distributed_optimizer:
                    self.warn0("Megatron-FSDP v1 is only compatible with --use-distributed-optimizer. Using "
                               "DistributedOptimizer...", rank_given=True)
                a.use_distributed_optimizer = True
            a.reuse_grad_buf_for_mxfp8_param_ag = False
            if a.moe_single_grouped_weight or a.moe_single_grouped_bias:
                self.vfail(1143, "Megatron-FSDP does not currently support moe_single_grouped_weight or "
                           "moe_single_grouped_bias. Disable single grouped MoE parameters or use the regular "
                           "DDP/distributed optimizer path until Megatron-FSDP supports TE GroupedTensor param "
                           "buffers.", "ValueError")
            if a.optimizer not in ("sgd", "adam"):
                self.vfail(1150, "Megatron-FSDP does not support the {} optimizer yet.".format(a.optimizer))
            if a.data_parallel_sharding_strategy in ("optim_grads_params", "optim_grads") and \
                    a.gradient_accumulation_fusion:
                self.warn0("Verify that fused gradient accumulation is supported by TransformerEngine for "
                           "Megatron-FSDP.", rank_given=True)
            if a.data_parallel_sharding_strategy == "optim_grads_params" and \
                    a.check_weight_hash_across_dp_replicas_interval is not None:
                self.vfail(1163, "check_weight_hash_across_dp_replicas_interval is not supported with "
                           "optim_grads_params")
            if os.environ.get("CUDA_DEVICE_MAX_CONNECTIONS") == "1":
                self.vfail(1166, "FSDP requires CUDA_DEVICE_MAX_CONNECTIONS > 1 or unset.")
            if a.ckpt_format != "fsdp_dtensor":
                self.vfail(1169, "Megatron-FSDP requires the `fsdp_dtensor` checkpointing format.")
            if a.nccl_ub:
                a.fsdp_manual_registration = True
                a.fsdp_double_buffer = True
                self.warn0("FSDP double buffer and manual registration is enabled by default when --nccl-ub is "
                           "enabled!")
            if a.megatron_fsdp_max_pool_double_buffer:
                a.fsdp_double_buffer = True
            if a.init_model_with_meta_device and a.data_parallel_sharding_strategy == "no_shard":
                self.vfail(1184, "Meta device initialization (init_model_with_meta_device=True) is not supported or "
                           "necessary for the 'no_shard' / 0 sharding strategy.", "ValueError")
        if a.fsdp_manual_registration:
            if not a.use_megatron_fsdp:
                self.vfail(1190, "FSDP manual registration is only supported with Megatron FSDP.")
            if not a.nccl_ub:
                self.vfail(1191, "FSDP manual registration is only supported with --nccl-ub argument.")
        a.params_dtype = FLOAT32
        if a.fp16:
            if a.bf16:
                self.vfail(1196)
            a.params_dtype = FLOAT16
            if not a.loss_scale:
                a.check_for_nan_in_loss_and_grad = False
                self.warn0("Setting args.check_for_nan_in_loss_and_grad to False since dynamic loss scaling is "
                           "being used")
        if a.bf16:
            if a.fp16:
                self.vfail(1205)
            a.params_dtype = BFLOAT16
            if a.accumulate_allreduce_grads_in_fp32 and a.main_grads_dtype != FLOAT32:
                self.vfail(1210, "--main-grads-dtype can only be fp32 when --accumulate-allreduce-grads-in-fp32 is set")
            if a.grad_reduce_in_bf16:
                a.accumulate_allreduce_grads_in_fp32 = False
            elif not a.accumulate_allreduce_grads_in_fp32 and a.main_grads_dtype == FLOAT32:
                a.accumulate_allreduce_grads_in_fp32 = True
                self.out0("accumulate and all-reduce gradients in fp32 for bfloat16 data type.")
        if a.accumulate_allreduce_grads_in_fp32:
            for name in ("ddp_reduce_scatter_with_fp32_accumulation",
                         "gtp_remat_reduce_scatter_with_fp32_accumulation"):
                if getattr(a, name, False):
                    setattr(a, name, False)
                    self.warn0("Setting args.{} to False since --accumulate-allreduce-grads-in-fp32 already reduces "
                               "in fp32".format(name))
        if a.cuda_graph_impl == "full_iteration" and a.check_for_nan_in_loss_and_grad:
            self.vfail(1236, "--no-check-for-nan-in-loss-and-grad should be set with --cuda-graph-impl=full_iteration"
                       " for training.")
        self.out0("using {} for parameters ...".format(a.params_dtype))
        if a.dataloader_type is None:
            a.dataloader_type = "single"
        if not a.num_dataset_builder_threads > 0:
            self.vfail(1258)
        a.consumed_train_samples = 0
        a.skipped_train_samples = 0
        a.consumed_valid_samples = 0
        a.variable_seq_lengths = False
        if a.train_iters and not a.skip_train:
            if a.train_samples is not None:
                self.vfail(1279, "expected iteration-based training")
            if a.lr_decay_samples is not None:
                self.vfail(1281, "expected iteration-based learning rate decay")
            if a.lr_warmup_samples != 0:
                self.vfail(1283, "expected iteration-based learning rate warmup")
            if a.lr_warmup_fraction is not None and a.lr_warmup_iters != 0:
                self.vfail(1286, "can only specify one of lr-warmup-fraction and lr-warmup-iters")
        if a.train_samples and not a.skip_train:
            if a.train_iters is not None:
                self.vfail(1293, "expected sample-based training")
            if a.lr_decay_iters is not None:
                self.vfail(1295, "expected sample-based learning rate decay")
            if a.lr_warmup_iters != 0:
                self.vfail(1297, "expected sample-based learnig rate warmup")
            if a.lr_warmup_fraction is not None and a.lr_warmup_samples != 0:
                self.vfail(1300, "can only specify one of lr-warmup-fraction and lr-warmup-samples")
        if a.num_layers is not None:
            if a.encoder_num_layers is not None:
                self.vfail(1305, "cannot have both num-layers and encoder-num-layers specified")
            a.encoder_num_layers = a.num_layers
        else:
            if a.encoder_num_layers is None:
                self.vfail(1309, "either num-layers or encoder-num-layers should be specified")
            a.num_layers = a.encoder_num_layers
        for req in ("num_layers", "hidden_size", "num_attention_heads", "max_position_embeddings"):
            if getattr(a, req) is None:
                self.vfail(1317, "{} argument is None".format(req),
                           extra=[("megatron/training/arguments.py", 2005, "_check_arg_is_not_none")])
        if a.ffn_hidden_size is None:
            a.ffn_hidden_size = int((4 * a.hidden_size * 2 / 3) / 64) * 64 if a.swiglu else 4 * a.hidden_size
        if a.kv_channels is None:
            if a.hidden_size % a.num_attention_heads:
                self.vfail(1332)
            a.kv_channels = a.hidden_size // a.num_attention_heads
        if a.seq_length is not None and cp > 1 and a.seq_length % (cp * 2):
            self.vfail(1336, "seq-length should be a multiple of 2 * context-parallel-size if "
                       "context-parallel-size > 1.")
        if a.dataloader_inter_document_masking and a.create_attention_mask_in_dataloader:
            a.create_attention_mask_in_dataloader = False
        if a.seq_length is not None:
            if a.encoder_seq_length is not None:
                self.vfail(1347)
            a.encoder_seq_length = a.seq_length
        else:
            if a.encoder_seq_length is None:
                self.vfail(1350)
            a.seq_length = a.encoder_seq_length
        if a.seq_length is not None and not a.max_position_embeddings >= a.seq_length:
            self.vfail(1354, "max_position_embeddings ({}) must be greater than or equal to seq_length ({}).".format(
                a.max_position_embeddings, a.seq_length))
        if a.decoder_seq_length is not None and not a.max_position_embeddings >= a.decoder_seq_length:
            self.vfail(1358)
        if a.lr is not None and not a.min_lr <= a.lr:
            self.vfail(1360)
        if a.save is not None:
            if a.save_interval is None:
                self.vfail(1362)
            if not a.save_interval > 0:
                self.vfail(1363)
            if a.save_retain_interval is not None:
                if not a.save_retain_interval > 0:
                    self.vfail(1365)
                if a.save_retain_interval % a.save_interval:
                    self.vfail(1366)
            if a.save_params_interval is not None and a.overlap_param_gather:
                self.vfail(1368)
        if a.log_memory_interval is not None and a.log_memory_interval % a.log_interval:
            self.vfail(1370)
        if a.fp16_lm_cross_entropy and not a.fp16:
            self.vfail(1373, "lm cross entropy in fp16 only support in fp16 mode.")
        if a.fp32_residual_connection and not (a.fp16 or a.bf16):
            self.vfail(1375, "residual connection in fp32 only supported when using fp16 or bf16.")
        if a.no_weight_decay_cond_type is not None:
            if a.rank == 0:
                harness.out("WARNING: --no-weight-decay-cond-type is deprecated. Please use --apply-wd-to-qk-layernorm "
                            "instead.")
            a.apply_wd_to_qk_layernorm = True
            a.no_weight_decay_cond_type = None
        if a.weight_decay_incr_style == "constant":
            if a.start_weight_decay is not None:
                self.vfail(1394)
            if a.end_weight_decay is not None:
                self.vfail(1395)
            a.start_weight_decay = a.end_weight_decay = a.weight_decay
        else:
            if a.start_weight_decay is None:
                self.vfail(1399)
            if a.end_weight_decay is None:
                self.vfail(1400)
        if a.distribute_saved_activations:
            if not tp > 1:
                self.vfail(1411, "can distribute recomputed activations only across tensor model parallel groups")
            if a.recompute_granularity != "full":
                self.vfail(1414, "distributed recompute activations is only application to full recompute "
                           "granularity")
            if a.recompute_method is None:
                self.vfail(1417, "for distributed recompute activations to work you need to use a recompute method ")
        if a.recompute_granularity == "selective" and a.recompute_method is not None:
            self.vfail(1426, "recompute method is not yet supported for selective recomputing granularity")
        if tp == 1:
            if a.sequence_parallel:
                self.warn0("Disabling sequence parallelism because tensor model parallelism is disabled",
                           rank_given=True)
            a.sequence_parallel = False
        if a.tp_comm_overlap and a.sequence_parallel is not True:
            self.vfail(1442, "Tensor parallel communication/GEMM overlap can happen only when sequence parallelism "
                       "is enabled")
        if a.hybrid_context_parallel:
            for line, ok, msg in (
                    (1445, not pp > 1, "Hybrid context parallelism not supported with pipeline parallelism"),
                    (1447, not a.use_megatron_fsdp, "Hybrid context parallelism not supported with Megatron FSDP"),
                    (1448, a.dataloader_type == "single", "Hybrid context parallelism only supported with single "
                                                          "dataloader type"),
                    (1449, a.calculate_per_token_loss, "Hybrid context parallelism must be used with "
                                                       "--calculate-per-token-loss")):
                if not ok:
                    self.vfail(line, msg)
        if (tp > 1 or cp > 1) and self.gpu_arch_major() < 10:
            if a.use_torch_fsdp2 or a.use_megatron_fsdp:
                impl = "Torch-FSDP2" if a.use_torch_fsdp2 else "Megatron-FSDP"
                self.warn0("Using tensor model parallelism or context parallelism with {} together. Try not to using "
                           "them together since they require different CUDA_MAX_CONNECTIONS settings for best "
                           "performance. sequence parallelism requires setting the environment variable "
                           "CUDA_DEVICE_MAX_CONNECTIONS to 1 while {} requires not setting "
                           "CUDA_DEVICE_MAX_CONNECTIONS=1 for better parallelization.".format(impl, impl),
                           rank_given=True)
            elif a.overlap_moe_expert_parallel_comm:
                self.warn0("For Hopper and before, try not to use tensor model parallelism or context parallelism with "
                           "overlap_moe_expert_parallel_comm. Using tensor/context model parallelism requires setting "
                           "the environment variable CUDA_DEVICE_MAX_CONNECTIONS to 1 to maximize the performance. "
                           "While overlap_moe_expert_parallel_comm requires setting a larger "
                           "CUDA_DEVICE_MAX_CONNECTIONS for better parallelization. If you want to use both, you can "
                           "set CUDA_DEVICE_MAX_CONNECTIONS to 1 or 32, which depends on which parallelization you "
                           "want to prioritize.", rank_given=True)
            elif os.environ.get("CUDA_DEVICE_MAX_CONNECTIONS") != "1":
                self.vfail(1477, "Using tensor model parallelism or context parallelism require setting the "
                           "environment variable CUDA_DEVICE_MAX_CONNECTIONS to 1")
        a.expert_tensor_parallel_num_weight_shards = a.expert_tensor_parallel_num_weight_shards or \
            a.expert_tensor_parallel_size
        a.expert_gtp_weight_remat_size = a.expert_tensor_parallel_num_weight_shards // a.expert_tensor_parallel_size
        if not a.add_bias_linear:
            a.bias_gelu_fusion = False
        if a.add_bias_linear:
            a.add_qkv_bias = True
        if a.use_rotary_position_embeddings:
            a.position_embedding_type = "rope"
        if a.position_embedding_type != "rope":
            a.apply_rope_fusion = False
        if not a.add_position_embedding and a.position_embedding_type != "rope":
            self.vfail(1634, "--no-position-embedding is deprecated, use --position-embedding-type", "RuntimeError")
        if a.position_embedding_type == "relative" and a.transformer_impl != "transformer_engine":
            self.vfail(1638, "Local transformer implementation currently does not support attention bias-based "
                       "position embeddings.")
        if a.position_embedding_type == "mrope" and a.mrope_section is None:
            self.vfail(1644, "--mrope-section should be set when using --position-embedding-type mrope.")
        if a.num_experts == 0:
            a.num_experts = None
        if a.num_experts is not None and a.moe_ffn_hidden_size is None:
            a.moe_ffn_hidden_size = a.ffn_hidden_size
            self.warn0("moe_ffn_hidden_size is not set, using ffn_hidden_size for MoE instead.")
        if a.expert_model_parallel_size > 1:
            if a.num_experts is None:
                self.vfail(1656, "num_experts must be non None to use expert model parallelism")
            if a.num_experts % a.expert_model_parallel_size:
                self.vfail(1657, "Number of experts should be a multiple of expert model parallel_size.")
        if isinstance(a.moe_router_load_balancing_type, list) and len(a.moe_router_load_balancing_type) == 1:
            a.moe_router_load_balancing_type = a.moe_router_load_balancing_type[0]
        if isinstance(a.moe_aux_loss_coeff, list) and len(a.moe_aux_loss_coeff) == 1:
            a.moe_aux_loss_coeff = a.moe_aux_loss_coeff[0]
        if a.ckpt_format == "torch_dcp":
            for line, ok, msg in (
                    (1668, a.use_torch_fsdp2, "--ckpt-format torch_dcp is only tested with FSDP."),
                    (1669, tp <= 1, "--ckpt-format torch_dcp is not tested with megatron tensor parallelism."),
                    (1671, pp <= 1, "--ckpt-format torch_dcp is not tested with megatron pipeline parallelism.")):
                if not ok:
                    self.vfail(line, msg)
        if a.ckpt_format == "fsdp_dtensor" and not a.use_megatron_fsdp:
            self.vfail(1676, "--ckpt-format fsdp_dtensor is only tested with Megatron FSDP.")
        if int(a.mock_data) + int(bool(a.data_path)) + int(any([a.train_data_path, a.valid_data_path,
                                                                a.test_data_path])) > 1:
            self.vfail(1679, "A single data source must be provided in training mode, else None")
        if a.cross_entropy_loss_fusion and a.cross_entropy_fusion_impl == "te":
            self.vfail(1697, "Transformer Engine cross entropy loss fusion is disabled due to stability issues. Use "
                       "--cross-entropy-fusion-impl native, or omit --cross-entropy-loss-fusion.")
        if a.apply_query_key_layer_scaling:
            a.attention_softmax_in_fp32 = True
        a.use_layer_wise_distributed_optimizer = False
        if a.optimizer not in ("sgd", "adam"):
            if a.optimizer == "dist_muon":
                self.warn0("optimizer='dist_muon' is deprecated. Use --optimizer muon --use-distributed-optimizer "
                           "instead.")
                a.optimizer = "muon"
                a.use_layer_wise_distributed_optimizer = True
            if a.use_distributed_optimizer:
                a.use_layer_wise_distributed_optimizer = True
                a.use_distributed_optimizer = False
            if a.use_torch_fsdp2:
                self.vfail(1739, "Emerging optimizer does not support Torch-FSDP2 for now.")
            if a.use_megatron_fsdp:
                self.vfail(1740, "Emerging optimizer does not support Megatron-FSDP for now.")
            if a.ckpt_format not in ("torch", "torch_dist"):
                self.vfail(1741, "Emerging optimizer supports torch and torch_dist checkpoint format.")
        if not a.use_gloo_process_groups and a.use_distributed_optimizer and not a.use_dist_ckpt:
            self.vfail(1750)
        if a.ckpt_fully_parallel_save_deprecated and a.rank == 0:
            harness.out("--ckpt-fully-parallel-save flag is deprecated and has no effect. Use "
                        "--no-ckpt-fully-parallel-save to disable parallel save.")
        if a.use_dist_ckpt and not a.ckpt_fully_parallel_save and a.use_distributed_optimizer and a.rank == 0:
            harness.out("Warning: With non-parallel ckpt save and DistributedOptimizer, it will be impossible to "
                        "resume training with different parallelism. Consider removing flag "
                        "--no-ckpt-fully-parallel-save.")
        if a.use_dist_ckpt_deprecated and a.rank == 0:
            harness.out("--use-dist-ckpt is deprecated and has no effect. Use --ckpt-format to select the "
                        "checkpoint format.")
        if a.dist_ckpt_format_deprecated and a.rank == 0:
            harness.out("--dist-ckpt-format is deprecated and has no effect. Use --ckpt-format to select the "
                        "checkpoint format.")
        if a.use_dist_ckpt and a.ckpt_fully_parallel_load and a.ckpt_fully_parallel_load_exchange_algo != "broadcast":
            self.warn0("Currently only the 'broadcast' exchange algorithm is supported for fully parallel load. Other "
                       "algorithms cannot guarantee numerical stability yet.")
        if a.load_main_params_from_ckpt and not a.no_load_optim:
            self.vfail(1812, "--load-main-params-from-ckpt must be used with --no-load-optim.")
        if a.use_dist_ckpt and a.async_save and not a.use_persistent_ckpt_worker:
            self.warn0("--async-save is not supported without --use-persistent-ckpt-worker. Disabling --async-save.")
            a.async_save = False
        if not a.async_save:
            a.async_strategy = "mcore"
        if a.override_ckpt_iteration is not None and a.finetune:
            self.vfail(1852, "Cannot override checkpoint iteration together with finetune flag.")
        if a.moe_use_upcycling:
            harness.emulator_fault("--moe-use-upcycling is not emulated")
        if a.skip_train and not a.no_load_optim:
            a.no_load_optim = True
            self.warn0("enabling --no-load-optim when skipping training.")
        if a.non_persistent_ckpt_type == "local" and a.non_persistent_local_ckpt_dir is None:
            self.vfail(1894, "Tried to use local checkpointing without specifying --local-ckpt-dir!")
        if a.replication:
            if a.replication_jump is None:
                self.vfail(1897, "--replication requires the value of --replication-jump!")
        elif a.replication_jump:
            self.warn0("--replication-jump was specified despite not using replication. Ignoring.")
            a.replication_jump = None
        if a.cpu_offloading_num_layers > 0:
            a.cpu_offloading = True
        if a.cuda_graph_impl != "none" and "transformer_engine" in (a.transformer_impl, a.cuda_graph_impl) \
                and not a.te_rng_tracker:
            a.te_rng_tracker = True
            self.warn0("te_rng_tracker is not enabled, enabling it for CUDA graphs.", rank_given=True)
        if a.cuda_graph_impl == "full_iteration" and a.cuda_graph_modules:
            self.vfail(1969, "--cuda-graph-modules must be empty when --cuda-graph-impl=full_iteration.")
        if a.multi_latent_attention and a.group_query_attention:
            self.vfail(1974, "Group query attention is mutually exclusive with multi latent attention.")
        if a.mla_down_proj_fusion and not a.multi_latent_attention:
            self.vfail(1977, "--mla-down-proj-fusion requires --multi-latent-attention")
        if a.moe_latent_size is not None:
            if not a.moe_latent_size > 0:
                self.vfail(1981, "MoE latent projection dimension has to be greater than zero.")
            if a.num_experts is None:
                self.vfail(1982, "MoE latent projections are applicable only for MoE models.")
        self.print_args(a)

    def print_args(self, a):
        """_print_args('arguments', args), arguments.py:1990-2001: rank 0."""
        if self.rank != 0:
            return
        harness.out("------------------------ arguments ------------------------")
        lines = []
        for name, value in vars(a).items():
            lines.append("  {} {} {}".format(name, "." * (48 - len(name)), value))
        for line in sorted(lines, key=lambda x: x.lower()):
            harness.out(line)
        harness.out("-------------------- end of arguments ---------------------")

    # ------------------------------------------------------------ set_global_variables (global_vars.py:137-179)

    def set_global_variables(self, a):
        sg = [("pretrain_gpt.py", 525, "<module>"), ("megatron/training/arguments.py", 112, "parse_and_validate_args")]
        if a.step_batch_size_schedule is not None:
            harness.out("> using step batch size schedule: {}".format(a.step_batch_size_schedule))
        dp = a.data_parallel_size * a.gtp_weight_remat_size
        calc = sg + [("megatron/training/global_vars.py", 148, "set_global_variables"),
                     ("megatron/core/num_microbatches_calculator.py", 105, "init_num_microbatches_calculator"),
                     ("megatron/core/num_microbatches_calculator.py", 216,
                      "_configure_global_num_microbatches_calculator")]
        if a.step_batch_size_schedule is not None:
            if a.decrease_batch_size_if_needed:
                raise Failure("ValueError", "Cannot specify both --step-batch-size-schedule and "
                                            "--decrease-batch-size-if-needed",
                              self.frames(*calc, ("megatron/core/num_microbatches_calculator.py", 266,
                                                  "_build_num_microbatches_calculator")))
            init = calc + [("megatron/core/num_microbatches_calculator.py", 270, "_build_num_microbatches_calculator")]
            self.schedule = self.parse_schedule(a.step_batch_size_schedule, a.seq_length, init)
            if self.rank == 0:
                log = "megatron.core.num_microbatches_calculator"
                self.info(log, "> initializing step batch size schedule")
                self.info(log, '  raw schedule string: "{}"'.format(a.step_batch_size_schedule))
                unit = "tokens" if a.seq_length else "samples"
                self.info(log, "  seq_length: {} (thresholds interpreted as {})".format(a.seq_length, unit))
                self.info(log, "  micro_batch_size: {}".format(a.micro_batch_size))
                self.info(log, "  data_parallel_size: {}".format(dp))
                self.info(log, "step batch size schedule ({} steps):".format(len(self.schedule)))
                for threshold, bs in self.schedule:
                    nmb = bs // (a.micro_batch_size * dp)
                    if a.seq_length:
                        self.info(log, "  >= {:,} tokens ({:,} samples) -> batch_size={}, num_microbatches={}".format(
                            threshold * a.seq_length, threshold, bs, nmb))
                    else:
                        self.info(log, "  >= {:,} samples -> batch_size={}, num_microbatches={}".format(
                            threshold, bs, nmb))
        else:
            self.schedule = None
            ctor = calc + [("megatron/core/num_microbatches_calculator.py", 284, "_build_num_microbatches_calculator")]
            mbdp = a.micro_batch_size * dp
            if a.decrease_batch_size_if_needed:
                running = (a.global_batch_size // mbdp) * mbdp
                self.info("megatron.core.num_microbatches_calculator",
                          "decreasing batch size from {} to {}to keep divisiblity by micro_batch_size={} * "
                          "data_parallel_size={}".format(a.global_batch_size, running, a.micro_batch_size, dp))
            else:
                if a.global_batch_size % mbdp:
                    raise Failure("AssertionError", "global batch size ({}) is not divisible by micro batch size ({}) "
                                  "times data parallel size ({})".format(a.global_batch_size, a.micro_batch_size, dp),
                                  self.frames(*ctor, ("megatron/core/num_microbatches_calculator.py", 381,
                                                      "__init__")))
                running = a.global_batch_size
            if not running // mbdp >= 1:
                raise Failure("AssertionError", "number of microbatches should be at least 1, got {}.".format(
                    running // mbdp), self.frames(*ctor, ("megatron/core/num_microbatches_calculator.py", 389,
                                                          "__init__")))
            self.running_gbs = running
            self.info("megatron.core.num_microbatches_calculator",
                      "setting number of microbatches to constant {}".format(running // mbdp))
        # _build_tokenizer: the vocabulary size is known without the tokenizer's files only for NullTokenizer.
        if a.tokenizer_type == "NullTokenizer" and a.pad_vocab_size and a.vocab_size and a.padded_vocab_size is None:
            multiple = a.make_vocab_size_divisible_by * a.tensor_model_parallel_size
            after = int(math.ceil(a.vocab_size / multiple) * multiple)
            self.info("megatron.core.tokenizers.utils.build_tokenizer",
                      " > padded vocab (size: {}) with {} dummy tokens (new size: {})".format(
                          a.vocab_size, after - a.vocab_size, after))
            a.padded_vocab_size = after
        if a.tensorboard_dir and a.rank == a.world_size - 1:
            harness.out("> setting tensorboard ...")
            self.tensorboard_marker(a)
        if a.wandb_project and a.rank == a.world_size - 1:
            if a.wandb_exp_name == "":
                raise Failure("ValueError", "Please specify the wandb experiment name!", self.frames(
                    *sg, ("megatron/training/global_vars.py", 161, "set_global_variables"),
                    ("megatron/training/global_vars.py", 260, "_set_wandb_writer")))
            if not a.wandb_save_dir and a.save is None:
                raise Failure("TypeError", "expected str, bytes or os.PathLike object, not NoneType", self.frames(
                    *sg, ("megatron/training/global_vars.py", 161, "set_global_variables"),
                    ("megatron/training/global_vars.py", 267, "_set_wandb_writer")))
        if a.exit_signal_handler:
            harness.on_signal(a.exit_signal, self.on_exit_signal)  # DistributedSignalHandler.__enter__
        if a.exit_signal_handler_for_training:
            harness.on_signal(signal.SIGINT, self.graceful_shutdown)
            harness.on_signal(signal.SIGTERM, self.graceful_shutdown)

    def parse_schedule(self, text, seq_length, frames):
        """StepBatchsizeNumMicroBatchesCalculator._parse_schedule / _validate_schedule
        (num_microbatches_calculator.py:480-556)."""
        def number(value):
            value = value.strip().upper()
            mult = 1
            for suffix, m in (("T", 10 ** 12), ("B", 10 ** 9), ("M", 10 ** 6), ("K", 10 ** 3)):
                if value.endswith(suffix):
                    mult, value = m, value[:-1]
                    break
            return int(float(value) * mult)

        schedule = []
        for entry in text.strip().replace(",", " ").split():
            if ":" not in entry:
                raise Failure("ValueError", 'Invalid schedule entry "{}". Expected format: "THRESHOLD:BATCH_SIZE"'
                              .format(entry), self.frames(*frames, (
                                  "megatron/core/num_microbatches_calculator.py", 446, "__init__"), (
                                  "megatron/core/num_microbatches_calculator.py", 517, "_parse_schedule")))
            t, _, b = entry.partition(":")
            values = []
            for line, part in ((522, t), (523, b)):
                try:
                    values.append(number(part))
                except ValueError as e:
                    raise Failure("ValueError", str(e), self.frames(*frames, (
                        "megatron/core/num_microbatches_calculator.py", 446, "__init__"), (
                        "megatron/core/num_microbatches_calculator.py", line, "_parse_schedule"), (
                        "megatron/core/num_microbatches_calculator.py", 499, "_parse_numeric_value")))
            threshold, bs = values
            if seq_length is not None:
                threshold //= seq_length
            schedule.append((threshold, bs))
        schedule.sort(key=lambda x: x[0])
        vframes = frames + [("megatron/core/num_microbatches_calculator.py", 449, "__init__")]
        if not schedule:
            raise Failure("AssertionError", "schedule must have at least one entry", self.frames(
                *vframes, ("megatron/core/num_microbatches_calculator.py", 538, "_validate_schedule")))
        if schedule[0][0] != 0:
            raise Failure("AssertionError", "first schedule entry must have threshold 0, got {}".format(
                schedule[0][0]), self.frames(*vframes, ("megatron/core/num_microbatches_calculator.py", 539,
                                                         "_validate_schedule")))
        for i in range(1, len(schedule)):
            if not schedule[i][0] > schedule[i - 1][0]:
                raise Failure("AssertionError", "schedule thresholds must be strictly increasing, got {} before {}"
                              .format(schedule[i - 1][0], schedule[i][0]), self.frames(
                                  *vframes, ("megatron/core/num_microbatches_calculator.py", 545,
                                             "_validate_schedule")))
        for _, bs in schedule:
            if not bs > 0:
                raise Failure("AssertionError", "batch size must be positive, got {}".format(bs), self.frames(
                    *vframes, ("megatron/core/num_microbatches_calculator.py", 556, "_validate_schedule")))
        return schedule

    def tensorboard_marker(self, a):
        """SummaryWriter(log_dir=...) creates the directory and an events file (torch's); the emulator
        writes no event records, only a marker."""
        os.makedirs(a.tensorboard_dir, exist_ok=True)
        harness.write_file(os.path.join(a.tensorboard_dir, "ATTUNE_EMULATED_TENSORBOARD"),
                           "Megatron-LM pretrain_gpt.py (emulated): SummaryWriter(log_dir={!r}) on rank {}\n".format(
                               a.tensorboard_dir, a.rank))

    def graceful_shutdown(self, signum, frame):
        """--exit-signal-handler-for-training: _graceful_shutdown (global_vars.py:93-134)."""
        if self.rank == 0:
            harness.out("\nTermination requested. Performing orderly shutdown.")
        sys.exit(0)

    # ------------------------------------------------------------ the model's config (pretrain_gpt.py:529-535)

    def model_config(self, a):
        frames = [("pretrain_gpt.py", 534, "<module>"), ("megatron/training/argument_utils.py", 451,
                                                         "gpt_config_from_args"),
                  ("megatron/training/argument_utils.py", 376, "core_transformer_config_from_args")]
        tp = a.tensor_model_parallel_size
        if a.num_attention_heads % tp:
            raise Failure("ValueError", "num_attention_heads ({}) must be a multiple of tensor_model_parallel_size "
                          "({}).".format(a.num_attention_heads, tp), self.frames(
                              *frames, ("megatron/core/transformer/transformer_config.py", 1447, "__post_init__")))
        groups = a.num_query_groups if a.group_query_attention else None
        if groups is None:
            groups = a.num_attention_heads
        if groups % tp and tp % groups:
            raise Failure("ValueError", "num_query_groups ({}) must be a multiple or divisor of "
                          "tensor_model_parallel_size ({}).".format(groups, tp), self.frames(
                              *frames, ("megatron/core/transformer/transformer_config.py", 1465, "__post_init__")))
        if a.padded_vocab_size is None and a.vocab_size is None and not self.tokenizer_has_vocab(a):
            raise Failure("AssertionError", "Either --padded-vocab-size or --vocab-size must be specified.",
                          self.frames(("pretrain_gpt.py", 534, "<module>"),
                                      ("megatron/training/argument_utils.py", 478, "gpt_config_from_args")))

    def tokenizer_has_vocab(self, a):
        """The tokenizer (its files are taken as present) sets padded_vocab_size when --pad-vocab-size."""
        return a.pad_vocab_size and a.tokenizer_type != "NullTokenizer"

    # ------------------------------------------------------------ layout helpers

    def coords(self, a, rank):
        """(tp, cp, dp, pp) ranks of `rank`: RankGenerator order tp-cp-ep-dp-pp, or tp-cp-ep-pp-dp with
        --use-tp-pp-dp-mapping (initialize.py:395, parallel_state.py:857), gtp_remat after tp."""
        tp, g, cp = a.tensor_model_parallel_size, a.gtp_weight_remat_size, a.context_parallel_size
        pp, dp = a.pipeline_model_parallel_size, a.data_parallel_size
        r = rank
        tp_r = r % tp
        r //= tp * g
        cp_r = r % cp
        r //= cp
        if a.use_tp_pp_dp_mapping:
            pp_r, dp_r = r % pp, r // pp
        else:
            dp_r, pp_r = r % dp, r // dp
        return tp_r, cp_r, dp_r, pp_r

    def is_dp_rank_0(self):
        return self.coords(self.a, self.rank)[2] == 0

    def report_memory(self, name):
        """report_memory (utils/common_utils.py:313-334): each data-parallel rank 0."""
        if not self.is_dp_rank_0():
            return
        p = self.prediction()
        mem = p.data.get("memory") or {}
        steady = sum(float(mem.get(k) or 0.0) for k in ("weights_gib", "gradients_gib", "optimizer_gib"))
        allocated = steady if steady > 0 else p.peak_allocated_gib * 0.6
        mb = 1024.0
        harness.out("[Rank {}] {} memory (MB) | allocated: {:.2f} | max allocated: {:.2f} | reserved: {:.2f} | "
                    "max reserved: {:.2f}".format(self.rank, name, allocated * mb, p.peak_allocated_gib * mb,
                                                  p.peak_reserved_gib * mb, p.peak_reserved_gib * mb))

    # ------------------------------------------------------------ pretrain (training.py:1500-2152)

    def initialize_megatron(self, a):
        level = None
        if os.getenv("MEGATRON_LOGGING_LEVEL") is not None:
            level = int(os.getenv("MEGATRON_LOGGING_LEVEL"))
        if a.logging_level is not None:
            level = a.logging_level
        if level is not None:
            self.info("megatron.training.initialize", "Setting logging level to {}".format(level))
            self.log_level = level
        self.out0("> initializing torch distributed ...")
        harness.check_device(self.w)
        for var in ("MASTER_ADDR", "MASTER_PORT"):  # torch's env:// rendezvous (default init_method)
            if var not in os.environ:
                raise Failure("ValueError", "Error initializing torch.distributed using env:// rendezvous: "
                              "environment variable {} expected, but not set".format(var), self.frames(
                                  ("pretrain_gpt.py", 536, "<module>"), ("megatron/training/training.py", 1577,
                                                                         "pretrain"),
                                  ("megatron/training/initialize.py", 156, "initialize_megatron"),
                                  ("megatron/training/initialize.py", 111, "finish_mpu_init"),
                                  ("megatron/training/initialize.py", 359, "_initialize_distributed")))
        self.sleep(INIT_S)
        self.dist_initialized = True  # torch's excepthook now prefixes tracebacks with [rank{r}]
        ws = a.world_size
        etp = a.expert_tensor_parallel_size
        grid = etp * a.expert_model_parallel_size * a.pipeline_model_parallel_size * a.expert_gtp_weight_remat_size
        if ws % grid:
            raise Failure("RuntimeError", "world_size ({}) is not divisible by expert_tensor_model_pipeline_parallel "
                          "size ({})".format(ws, grid), self.frames(
                              ("pretrain_gpt.py", 536, "<module>"), ("megatron/training/training.py", 1577, "pretrain"),
                              ("megatron/training/initialize.py", 156, "initialize_megatron"),
                              ("megatron/training/initialize.py", 111, "finish_mpu_init"),
                              ("megatron/training/initialize.py", 377, "_initialize_distributed"),
                              ("megatron/core/parallel_state.py", 882, "initialize_model_parallel")))
        self.out0("> initialized tensor model parallel with size {}".format(a.tensor_model_parallel_size))
        self.out0("> initialized gtp weight remat with size {}".format(a.gtp_weight_remat_size))
        self.out0("> initialized pipeline model parallel with size {}".format(a.pipeline_model_parallel_size))
        self.out0("> setting random seeds to {} ...".format(a.seed))
        if self.rank == 0:
            harness.out("> compiling dataset index builder ...")
            self.sleep(COMPILE_S)
            harness.out(">>> done with dataset index builder. Compilation time: {:.3f} seconds".format(COMPILE_S))
        else:
            self.sleep(COMPILE_S)

    def pretrain(self, a):
        t_pretrain, s_pretrain = harness.wall_time(), self.sim
        self.initialize_megatron(a)
        s_init = self.sim
        legacy_start = TORCH_IMPORT_S  # training.py's import-time timestamp: after torch's import
        self.out0("time to initialize megatron (seconds): {:.3f}".format(s_init - legacy_start))
        self.out0("[after in-process setup and before initialize_megatron] datetime: {} ".format(_ts(t_pretrain)))
        self.out0("[after in-job setup and before initialize_megatron] datetime: {} ".format(_ts(t_pretrain)))
        ms = lambda s: s * 1000.0  # noqa: E731
        startup = [("startup-program-entry-spread", 0.0),
                   ("startup-library-setup", IMPORT_S),
                   ("startup-program-setup", s_pretrain - IMPORT_S),
                   ("startup-in-process-setup", 0.0),
                   ("startup-in-job-setup", 0.0),
                   ("startup-initialize-megatron", s_init - s_pretrain),
                   ("startup-set-jit-fusion-options", 0.0),
                   ("all-reduce-start-timestamps-tensor", 0.0),
                   ("startup-megatron-init-local", s_init - s_pretrain),
                   ("startup-megatron-init-global", s_init)]
        self.timers_block([(n, ms(v), ms(v)) for n, v in startup])
        self.out0("[before library-setup] datetime: {}".format(_ts(self.t0)))
        self.out0("[after library-setup] datetime: {}".format(_ts(self.t_main)))
        self.out0("[before megatron-init] datetime: {}".format(_ts(t_pretrain)))
        self.print_datetime("after megatron is initialized")
        s_model = self.sim
        self.setup_model_and_optimizer(a)
        setup_s = self.sim - s_model
        self.print_datetime("after model, optimizer, and learning rate scheduler are built")
        s_data = self.sim
        self.build_data(a)
        data_s = self.sim - s_data
        self.print_datetime("after dataloaders are built")
        self.out0("done with setup ...")
        self.timers_block([("model-and-optimizer-setup", ms(setup_s), ms(setup_s)),
                           ("train/valid/test-data-iterators-setup", ms(data_s), ms(data_s))])
        if not a.skip_train:
            self.out0("training ...")
            iteration = 0
            if a.do_train and (a.train_iters or 0) > 0:
                iteration = self.train(a)
            self.print_datetime("after training is done")
            if a.save and iteration != 0 and iteration % a.save_interval != 0:
                self.save_checkpoint(a, iteration)
        else:
            self.out0("skipping training (--skip-train is on) ...")
            iteration = a.iteration
        if a.do_valid:
            self.evaluate_and_print(a, "iteration {} on validation set".format(iteration), iteration, verbose=True)
        if a.do_test:
            self.evaluate_and_print(a, "iteration {} on test set".format(iteration), iteration, verbose=True)
        self.finalize_async(a, blocking=True)
        return 0

    def pfail(self, exc, message, frames, lines=None):
        raise Failure(exc, message, self.frames(("pretrain_gpt.py", 536, "<module>"), *frames), lines=lines)

    def setup_model_and_optimizer(self, a):
        setup = [("megatron/training/training.py", 1820, "pretrain")]
        vpp = a.virtual_pipeline_model_parallel_size or 1
        for _ in range(vpp):
            self.out0("building GPT model ...")
        self.sleep(MODEL_S)
        sched = setup + [("megatron/training/training.py", 2807, "setup_model_and_optimizer")]
        gbs = a.global_batch_size
        if a.train_iters:
            if a.lr_decay_iters is None:
                a.lr_decay_iters = a.train_iters
            decay = a.lr_decay_iters * gbs
            wsd = a.lr_wsd_decay_iters * gbs if a.lr_wsd_decay_iters is not None else None
            warmup = a.lr_warmup_fraction * decay if a.lr_warmup_fraction is not None else a.lr_warmup_iters * gbs
        elif a.train_samples:
            self.update_train_iters(a)
            if a.lr_decay_samples is None:
                a.lr_decay_samples = a.train_samples
            decay = a.lr_decay_samples
            wsd = a.lr_wsd_decay_samples
            warmup = a.lr_warmup_fraction * decay if a.lr_warmup_fraction is not None else a.lr_warmup_samples
        else:
            self.pfail("Exception", "either train-iters or train-samples should be provided.",
                       sched + [("megatron/training/training.py", 2586, "get_optimizer_param_scheduler")])
        ctor = sched + [("megatron/training/training.py", 2588, "get_optimizer_param_scheduler")]
        opsf = "megatron/core/optimizer_param_scheduler.py"
        if a.lr is None:
            self.pfail("TypeError", "float() argument must be a string or a real number, not 'NoneType'",
                       ctor + [(opsf, 148, "__init__")])
        for line, ok in ((150, a.min_lr >= 0.0), (151, float(a.lr) >= a.min_lr), (152, a.lr_warmup_init <= a.lr),
                         (159, decay > 0), (160, warmup < decay),
                         (164, a.lr_decay_style != "WSD" or wsd is not None),
                         (168, a.start_weight_decay >= 0.0), (169, a.end_weight_decay >= a.start_weight_decay)):
            if not ok:
                self.pfail("AssertionError", "", ctor + [(opsf, line, "__init__")])
        self.lr_sched = (a.lr_warmup_init, float(a.lr), a.min_lr, warmup, decay, a.lr_decay_style, wsd,
                         a.lr_wsd_decay_style)
        self.info("megatron.core.optimizer_param_scheduler", "> learning rate decay style: {}".format(a.lr_decay_style))
        a.iteration = 0
        a.num_floating_point_operations_so_far = 0
        if a.load is not None:
            t = self.sim
            self.load_checkpoint(a)
            s = (self.sim - t) * 1000.0
            self.timers_block([("load-checkpoint", s, s)])

    def update_train_iters(self, a):
        """training.py:2150-2176."""
        if self.schedule is not None:
            iterations, consumed = 0, 0
            while consumed < a.train_samples:
                consumed += self.batch_for(consumed)
                iterations += 1
            a.train_iters = iterations
        else:
            a.train_iters = a.train_samples // a.global_batch_size
        self.out0("setting training iterations to {}".format(a.train_iters))

    def batch_for(self, consumed):
        if self.schedule is None:
            return self.running_gbs
        bs = self.schedule[0][1]
        for threshold, b in self.schedule:
            if consumed >= threshold:
                bs = b
            else:
                break
        return bs

    def learning_rate(self, num_steps):
        """OptimizerParamScheduler.get_lr (megatron/core/optimizer_param_scheduler.py:221-281)."""
        init, max_lr, min_lr, warmup, decay, style, wsd, wsd_style = self.lr_sched
        if warmup > 0 and num_steps <= warmup:
            return init + (max_lr - init) * float(num_steps) / float(warmup)
        if style == "constant":
            return max_lr
        if num_steps > decay:
            return min_lr
        if style == "inverse-square-root":
            return max(min_lr, max_lr * max(warmup, 1) ** 0.5 / (max(num_steps, 1) ** 0.5))
        ratio = float(num_steps - warmup) / float(decay - warmup)
        if style == "linear":
            coeff = 1.0 - ratio
        elif style == "cosine":
            coeff = 0.5 * (math.cos(math.pi * ratio) + 1.0)
        else:  # WSD
            start = decay - wsd
            if num_steps <= start:
                coeff = 1.0
            else:
                r = float(num_steps - start) / float(wsd)
                coeff = {"linear": 1.0 - r, "cosine": 0.5 * (math.cos(math.pi * r) + 1.0),
                         "exponential": 2.0 * math.pow(0.5, r) - 1.0, "minus_sqrt": 1.0 - math.sqrt(r)}[wsd_style]
        return min_lr + coeff * (max_lr - min_lr)

    # ------------------------------------------------------------ checkpoints (checkpointing.py)

    def load_checkpoint(self, a):
        """load_checkpoint / _load_base_checkpoint (checkpointing.py:1995-2110, 2840-3170)."""
        load = a.load
        tracker = os.path.join(load, "latest_checkpointed_iteration.txt")
        frames = [("megatron/training/training.py", 1820, "pretrain"),
                  ("megatron/training/training.py", 2868, "setup_model_and_optimizer")]
        iteration, release = -1, False
        if os.path.isfile(tracker):
            with open(tracker) as f:
                text = f.read().strip()
            try:
                iteration = int(text)
            except ValueError:
                release = text == "release"
                if not release:
                    self.out0("ERROR: Invalid metadata file {}. Exiting".format(tracker))
                    raise Exit(0)
                iteration = 0
        if a.ckpt_step:
            iteration = a.ckpt_step
        self.loaded_iteration = iteration
        if iteration == -1:
            self.out0("WARNING: could not find the metadata file {}".format(tracker))
            self.out0("    will not load any checkpoints and will start from random")
            if a.exit_on_missing_checkpoint:
                self.out0(">> '--exit-on-missing-checkpoint' is set but no checkpoint was found under load directory "
                          "'{}' (missing metadata/tracker file '{}'). Exiting with a non-zero status. <<".format(
                              load, tracker))
                raise Exit(1)
            a.iteration = 0
            return
        name = os.path.join(load, "release" if release else "iter_{:07d}".format(iteration))
        if not os.path.isdir(name):
            self.pfail("FileNotFoundError", "[Errno 2] No such file or directory: '{}'".format(name),
                       frames + [("megatron/training/checkpointing.py", 2827, "load_checkpoint"),
                                 ("megatron/training/checkpointing.py", 2071, "_load_base_checkpoint"),
                                 ("megatron/training/checkpointing.py", 1977, "_get_checkpoint_format")])
        entries = os.listdir(name)
        if os.path.exists(os.path.join(name, "metadata.json")):
            fmt = "torch_dist"
        elif any(e.startswith("mp_rank_0") for e in entries):
            fmt = "torch"
        elif os.path.exists(os.path.join(name, ".metadata")):
            fmt = "fsdp_dtensor" if a.use_megatron_fsdp else "torch_dcp"
        else:
            self.pfail("NotImplementedError", "unknown checkpoint format in {}".format(name),
                       frames + [("megatron/training/checkpointing.py", 2827, "load_checkpoint"),
                                 ("megatron/training/checkpointing.py", 2071, "_load_base_checkpoint"),
                                 ("megatron/training/checkpointing.py", 1990, "_get_checkpoint_format")])
        if release:
            self.out0(" loading release {}checkpoint from {}".format("distributed " if fmt == "torch_dist" else "",
                                                                     load))
        else:
            self.out0(" loading {}checkpoint from {} at iteration {}".format(
                "distributed " if fmt == "torch_dist" else "", load, iteration))
        self.sleep(LOAD_S)
        state = {}
        try:
            with open(os.path.join(name, "common.pt" if fmt == "torch_dist" else EMULATED_STATE)) as f:
                state = json.load(f)
        except (OSError, ValueError):
            state = {}
        saved = state.get("args")
        if a.finetune or release:
            iteration = 0
        if saved is not None and not a.finetune:
            compared = [("num_layers", 201), ("hidden_size", 202), ("num_attention_heads", 203),
                        ("add_position_embedding", 206)]
            if not a.use_dist_ckpt:
                compared += [("tensor_model_parallel_size", 220), ("pipeline_model_parallel_size", 221)]
            for key, line in compared:  # check_checkpoint_args (checkpointing.py:176-221)
                if key in saved and saved[key] != getattr(a, key):
                    self.pfail("AssertionError", "{} value from checkpoint ({}) is not equal to the input argument "
                               "value ({}).".format(key, saved[key], getattr(a, key)),
                               frames + [("megatron/training/checkpointing.py", 2877, "load_checkpoint"),
                                         ("megatron/training/checkpointing.py", line, "check_checkpoint_args"),
                                         ("megatron/training/checkpointing.py", 199, "_compare")])
            a.consumed_train_samples = int(saved.get("consumed_train_samples", 0))
            a.skipped_train_samples = int(saved.get("skipped_train_samples", 0))
            a.consumed_valid_samples = int(saved.get("consumed_valid_samples", 0))
        else:
            self.out0("could not find arguments in the checkpoint ...")
        if a.override_ckpt_iteration is not None:
            iteration = a.override_ckpt_iteration
            a.consumed_train_samples = iteration * a.global_batch_size
            a.skipped_train_samples = 0
            self.out0("--override-ckpt-iteration: start at iteration {} (consumed_train_samples {})".format(
                iteration, a.consumed_train_samples))
        self.out0(" checkpoint version {}".format(state.get("checkpoint_version", 3.0)))
        tp_r, _, _, pp_r = self.coords(a, 0)
        self.out0("  successfully loaded checkpoint from {} [ t {}/{}, gtp_remat 1/{}, p {}/{} ] at iteration {}"
                  .format(load, tp_r + 1, a.tensor_model_parallel_size, a.gtp_weight_remat_size, pp_r + 1,
                          a.pipeline_model_parallel_size, iteration))
        a.iteration = iteration

    def save_checkpoint(self, a, iteration, non_persistent=False):
        """save_checkpoint_and_time (training.py:3798-3930) -> save_checkpoint (checkpointing.py:603-1110)."""
        self.saves = getattr(self, "saves", 0)
        if self.saves < 3:  # MAX_NUM_CHECKPOINTS_MEMORY_REPORTED
            self.report_memory("(before save_checkpoint for iteration {})".format(iteration))
        save_dir = a.save
        if non_persistent and a.non_persistent_ckpt_type == "global":
            save_dir = a.non_persistent_global_ckpt_dir or os.path.join(a.save, "non_persistent")
        fmt = a.ckpt_format if a.use_dist_ckpt or non_persistent else "torch"
        if a.async_save and self.pending_async:
            self.out0("WARNING: Starting a checkpoint save before previous has finished. Consider increasing the "
                      "checkpoint interval.")
        self.out0("[{}] saving checkpoint at iteration {:7d} to {} in {} format".format(
            _ts(), iteration, save_dir, fmt))
        if a.use_dist_ckpt and (a.use_distributed_optimizer or a.use_layer_wise_distributed_optimizer):
            kind = "fsdp_dtensor" if a.ckpt_format == "fsdp_dtensor" else (
                "fully_reshardable" if a.dist_ckpt_optim_fully_reshardable else "dp_reshardable")
            self.out0("Storing distributed optimizer sharded state of type {}".format(kind))
        t = self.sim
        self.write_checkpoint_files(a, save_dir, iteration, fmt)
        if a.async_save:
            self.sleep(ASYNC_SAVE_S)
            self.out0("  [{}] scheduled an async checkpoint save at iteration {:7d} to {}".format(
                _ts(), iteration, save_dir))
            self.pending_async.append((self.sim + SAVE_S, save_dir, iteration))
        else:
            self.sleep(SAVE_S)
            self.finish_save(a, save_dir, iteration)
        s = (self.sim - t) * 1000.0
        if self.saves < 3:
            self.report_memory("(after save_checkpoint for iteration {})".format(iteration))
        self.saves += 1
        self.timers_block([("save-checkpoint-non-persistent" if non_persistent else "save-checkpoint", s, s)])

    def finish_save(self, a, save_dir, iteration):
        """iter_finalize_fn (checkpointing.py:1063-1152), global rank 0: the tracker file, the 'successfully
        saved' line, and with --save-retain-interval the previous checkpoint's deletion."""
        if self.rank != 0:
            return
        tracker = os.path.join(save_dir, "latest_checkpointed_iteration.txt")
        prev = 0
        if a.save_retain_interval is not None and os.path.exists(tracker):
            try:
                with open(tracker) as f:
                    prev = int(f.read().strip())
            except ValueError:
                prev = 0
        harness.write_file(tracker, str(iteration))
        tp_r, _, _, pp_r = self.coords(a, 0)
        harness.out("  [{}] successfully saved checkpoint from iteration {:7d} to {} [ t {}/{}, gtp_remat 1/{}, "
                    "p {}/{} ]".format(_ts(), int(iteration), a.save, tp_r + 1, a.tensor_model_parallel_size,
                                       a.gtp_weight_remat_size, pp_r + 1, a.pipeline_model_parallel_size))
        if a.save_retain_interval is not None and prev > 0 and prev != iteration and \
                prev % a.save_retain_interval != 0:
            old = os.path.join(a.save, "iter_{:07d}".format(prev))
            if os.path.islink(old):
                harness.out("  skipping deleting checkpoint from iteration {:7d} at {} since it is a symbolic link"
                            .format(prev, a.save))
            else:
                import shutil
                shutil.rmtree(old, ignore_errors=True)

    def finalize_async(self, a, blocking):
        """maybe_finalize_async_save (async_utils.py:211-239)."""
        if not a.async_save or not self.pending_async:
            return
        if blocking:
            self.out0("Unfinalized async checkpoint saves. Finalizing them synchronously now.")
        while self.pending_async and (blocking or self.pending_async[0][0] <= self.sim):
            done_at, save_dir, iteration = self.pending_async.pop(0)
            self.sleep(max(0.0, done_at - self.sim))
            self.finish_save(a, save_dir, iteration)

    def write_checkpoint_files(self, a, save_dir, iteration, fmt):
        """Marker files in the checkpoint's layout (get_checkpoint_name, checkpointing.py:230-276): iter_%07d/
        with metadata.json + common.pt + .metadata + __<rank>_0.distcp (torch_dist), .metadata + shards
        (torch_dcp, fsdp_dtensor) or mp_rank_XX[_YYY][_ZZZ]/model_optim_rng.pt (torch)."""
        d = os.path.join(save_dir, "iter_{:07d}".format(iteration))
        os.makedirs(d, exist_ok=True)
        state = {"emulated_by": "attune emulator of Megatron-LM pretrain_gpt.py @ " + COMMIT[:10],
                 "iteration": iteration, "checkpoint_version": 3.0,
                 "args": {"consumed_train_samples": a.consumed_train_samples,
                          "skipped_train_samples": a.skipped_train_samples,
                          "consumed_valid_samples": a.consumed_valid_samples,
                          "num_layers": a.num_layers, "hidden_size": a.hidden_size,
                          "num_attention_heads": a.num_attention_heads,
                          "add_position_embedding": a.add_position_embedding,
                          "tensor_model_parallel_size": a.tensor_model_parallel_size,
                          "pipeline_model_parallel_size": a.pipeline_model_parallel_size,
                          "global_batch_size": a.global_batch_size}}
        if fmt == "torch":
            tp_r, _, dp_r, pp_r = self.coords(a, self.rank)
            if dp_r == 0:
                sub = "mp_rank_{:02d}".format(tp_r)
                if a.pipeline_model_parallel_size > 1:
                    sub += "_{:03d}".format(pp_r)
                if a.expert_model_parallel_size > 1:
                    sub += "_{:03d}".format(0)
                harness.write_file(os.path.join(d, sub, "model_optim_rng.pt"), json.dumps(state) + "\n")
                if a.use_distributed_optimizer:
                    harness.write_file(os.path.join(d, sub, "distrib_optim.pt"), "emulated\n")
            if self.rank == 0:
                harness.write_file(os.path.join(d, EMULATED_STATE), json.dumps(state) + "\n")
            return
        harness.write_file(os.path.join(d, "__{}_0.distcp".format(self.rank)), "emulated shard\n")
        if self.rank == 0:
            if fmt == "torch_dist":
                harness.write_file(os.path.join(d, "metadata.json"),
                                   json.dumps({"sharded_backend": "torch_dist", "sharded_backend_version": 1}))
                harness.write_file(os.path.join(d, "common.pt"), json.dumps(state) + "\n")
            else:
                harness.write_file(os.path.join(d, EMULATED_STATE), json.dumps(state) + "\n")
            harness.write_file(os.path.join(d, ".metadata"), "emulated\n")

    # ------------------------------------------------------------ data (training.py:5419-5552, pretrain_gpt.py:461-491)

    def build_data(self, a):
        self.out0("> building train, validation, and test datasets ...")
        if a.iteration > 0 and a.consumed_train_samples == 0:
            if a.train_samples is not None:
                self.pfail("AssertionError", "Only backward compatiblity support for iteration-based training",
                           [("megatron/training/training.py", 1958, "pretrain"),
                            ("megatron/training/training.py", 5562, "build_train_valid_test_data_iterators"),
                            ("megatron/training/training.py", 5479, "build_train_valid_test_data_loaders")])
            a.consumed_train_samples = a.iteration * a.global_batch_size
        frames = [("megatron/training/training.py", 1958, "pretrain"),
                  ("megatron/training/training.py", 5562, "build_train_valid_test_data_iterators"),
                  ("megatron/training/training.py", 5519, "build_train_valid_test_data_loaders"),
                  ("megatron/training/training.py", 5460, "build_train_valid_test_datasets")]
        if a.iteration > 0 and a.consumed_valid_samples == 0 and a.train_samples is None:
            if not a.eval_interval:
                self.pfail("TypeError" if a.eval_interval is None else "ZeroDivisionError",
                           "unsupported operand type(s) for //: 'int' and 'NoneType'" if a.eval_interval is None
                           else "integer division or modulo by zero",
                           frames[:3] + [("megatron/training/training.py", 5487,
                                          "build_train_valid_test_data_loaders")])
            start = a.start_eval_at_iter if a.start_eval_at_iter is not None else 0
            a.consumed_valid_samples = max(0, a.iteration // a.eval_interval - start // a.eval_interval) * \
                a.eval_iters * a.eval_global_batch_size
        train = a.train_samples if a.train_samples else a.train_iters * a.global_batch_size
        if a.full_validation:
            valid = None
        else:
            if a.skip_train:
                eval_iters = a.eval_iters
            else:
                if not a.eval_interval:
                    self.pfail("TypeError" if a.eval_interval is None else "ZeroDivisionError",
                               "unsupported operand type(s) for //: 'int' and 'NoneType'" if a.eval_interval is None
                               else "integer division or modulo by zero",
                               frames + [("megatron/training/training.py", 5436, "get_train_valid_test_num_samples")])
                points = a.train_iters // a.eval_interval + 1
                if a.start_eval_at_iter is not None:
                    points = max(0, points - a.start_eval_at_iter // a.eval_interval)
                eval_iters = points * a.eval_iters
            valid = eval_iters * a.eval_global_batch_size
        test = a.eval_iters * a.eval_global_batch_size
        self.out0(" > datasets target sizes (minimum size):")
        self.out0("    train:      {}".format(train))
        self.out0("    validation: {}".format(valid))
        self.out0("    test:       {}".format(test))
        per_split = any([a.train_data_path, a.valid_data_path, a.test_data_path])
        log = "megatron.core.datasets.blended_megatron_dataset_config"
        if per_split or a.per_split_data_args_path:
            matrix = [(0, 1.0) if p else None for p in (a.train_data_path or a.per_split_data_args_path,
                                                           a.valid_data_path or a.per_split_data_args_path,
                                                           a.test_data_path or a.per_split_data_args_path)]
        else:
            split = a.split
            if a.data_path is None and a.data_args_path is None:
                self.info(log, "Let mock = True, as both blend and blend_per_split are None")
                split = "1,1,1"
                self.info(log, "Let split = {}, an arbitrarily even split, as mock is True".format(split))
            matrix = _split_matrix(split)
            self.info(log, "Let split_matrix = {}".format(matrix))
        self.out0("> building train, validation, and test datasets for GPT ...")
        self.sleep(DATA_S)
        self.out0("> finished creating GPT datasets ...")
        evals = a.full_validation or a.eval_iters > 0
        a.do_train = int(matrix[0] is not None and (a.skip_train or a.train_iters > 0))
        a.do_valid = int(matrix[1] is not None and evals)
        a.do_test = int(matrix[2] is not None and evals)

    # ------------------------------------------------------------ train (training.py:4153-5084)

    def train(self, a):
        p = self.prediction()
        iteration = a.iteration
        self.check_at = iteration + 1
        self.meet()
        self.print_datetime("before the start of training step")
        dp = a.data_parallel_size * a.gtp_weight_remat_size
        mbdp = a.micro_batch_size * dp
        nmb = self.batch_for(a.consumed_train_samples) // mbdp
        fail_at = max(1, p.fails_at_step) if p.ooms else 0
        local_step = 0
        first = True
        acc = {"loss": 0.0, "advanced": 0, "skipped": 0, "nan": 0, "seconds": 0.0, "extra": {}}
        extra = self.extra_loss_keys(a)
        report_memory = True
        exit_code = None
        while iteration < a.train_iters:
            self.check_at = iteration + 1
            self.finalize_async(a, blocking=False)
            gbs = self.batch_for(a.consumed_train_samples)
            if gbs // mbdp != nmb and iteration != 0 and a.save is not None:
                self.save_checkpoint(a, iteration)
            nmb = gbs // mbdp
            if self.schedule is not None and gbs % mbdp:
                self.pfail("AssertionError", "current global batch size ({}) is not divisible by micro_batch_size "
                           "({}) * data_parallel_size ({})".format(gbs, a.micro_batch_size, dp),
                           [("megatron/training/training.py", 2027, "pretrain"),
                            ("megatron/training/training.py", 4627, "train"),
                            ("megatron/core/num_microbatches_calculator.py", 51, "update_num_microbatches"),
                            ("megatron/core/num_microbatches_calculator.py", 581, "update")])
            local_step += 1
            if local_step == fail_at:
                self.oom(a, nmb)
            seconds = self.clock.seconds(local_step)
            self.sleep(seconds)
            iteration += 1
            a.consumed_train_samples += mbdp * nmb
            acc["loss"] += harness.loss(iteration)
            for key in extra:
                acc["extra"][key] = acc["extra"].get(key, 0.0) + _extra_loss(key, iteration)
            acc["advanced"] += 1
            acc["seconds"] += seconds
            if iteration % a.log_interval == 0 or first:
                report_memory = self.training_log(a, iteration, acc, nmb, first, report_memory)
            first = False
            if a.eval_interval and iteration % a.eval_interval == 0 and a.do_valid and (
                    a.start_eval_at_iter is None or iteration >= a.start_eval_at_iter):
                self.evaluate_and_print(a, "iteration {}".format(iteration), iteration, verbose=False)
            exit_code = self.checkpoint_and_decide_exit(a, iteration)
            if exit_code is not None:
                break
        if exit_code is not None:
            self.finalize_async(a, blocking=True)
            raise Exit(exit_code)
        return iteration

    def oom(self, a, nmb):
        """The emulated GPU runs out of memory in the step's forward: torch's OutOfMemoryError, every rank."""
        p = self.prediction()
        sched = "megatron/core/pipeline_parallel/schedules.py"
        if a.pipeline_model_parallel_size > 1 and a.virtual_pipeline_model_parallel_size is not None:
            fb = [(sched, 1394, "forward_backward_pipelining_with_interleaving")]
        elif a.pipeline_model_parallel_size > 1:
            fb = [(sched, 2347, "forward_backward_pipelining_without_interleaving")]
        else:
            fb = [(sched, 816 if nmb > 1 else 841, "forward_backward_no_pipelining")]
        self.pfail("torch.OutOfMemoryError", harness.cuda_oom_message(p, self.w.local_rank),
                   [("megatron/training/training.py", 2027, "pretrain"),
                    ("megatron/training/training.py", 4722, "train"),
                    ("megatron/training/training.py", 3093, "train_step")] + fb +
                   [(sched, 515, "forward_step"), ("pretrain_gpt.py", 361, "forward_step")])

    def training_log(self, a, iteration, acc, nmb, first, report_memory):
        """training_log's stdout line (training.py:3539-3653): the last rank."""
        p = self.prediction()
        batch_size = a.micro_batch_size * a.data_parallel_size * a.gtp_weight_remat_size * nmb
        iters = acc["advanced"] + acc["skipped"]
        per_iter = acc["seconds"] / iters
        s = " [{}]".format(_ts())
        s += " iteration {:8d}/{:8d} |".format(iteration, a.train_iters)
        s += " consumed samples: {:12d} |".format(a.consumed_train_samples)
        if a.skipped_train_samples > 0:
            s += " skipped samples: {:12d} |".format(a.skipped_train_samples)
        s += " elapsed time per iteration (ms): {:.1f} |".format(per_iter * 1000.0)
        if a.log_throughput:
            s += " throughput per GPU (TFLOP/s/GPU): {:.1f} |".format(p.tflops_per_gpu * p.step_s / per_iter)
        if a.log_energy:
            harness.emulator_fault("--log-energy (GPU energy counters) is not emulated")
        s += " learning rate: {:.6E} |".format(self.learning_rate(a.consumed_train_samples))
        s += " global batch size: {:5d} |".format(batch_size)
        for key, total in [("lm loss", acc["loss"])] + list(acc["extra"].items()):
            avg = total / max(1, acc["advanced"])
            if avg >= 0.0:
                s += " {}: {:.6E} |".format(key, avg)
        if a.fp16 and not a.loss_scale:
            scale = float(a.initial_loss_scale)
        elif a.fp16:
            scale = float(a.loss_scale)
        else:
            scale = 1.0
        s += " loss scale: {:.1f} |".format(scale)
        s += " grad norm: {:.3f} |".format(harness.grad_norm(iteration))
        if a.log_num_zeros_in_grad:
            s += " num zeros: {} |".format(0)
        if a.log_params_norm:
            s += " params norm: {:.3f} |".format(PARAMS_NORM)
        s += " number of skipped iterations: {:3d} |".format(acc["skipped"])
        s += " number of nan iterations: {:3d} |".format(acc["nan"])
        if not first:
            acc.update(loss=0.0, advanced=0, skipped=0, nan=0, seconds=0.0, extra={})
        self.out_last(s)
        if report_memory:
            self.report_memory("(after {} iterations)".format(iteration))
            if iteration > max(self.loaded_iteration, 0) + 1:
                report_memory = False
        elif a.log_memory_interval is not None and iteration % a.log_memory_interval == 0:
            self.report_memory("(after {} iterations)".format(iteration))
        return report_memory

    def extra_loss_keys(self, a):
        """The loss keys training_log adds after 'lm loss' (training.py:3453-3528): the MoE router's
        auxiliary losses (moe_logging.py report -> total_loss_dict) and each MTP depth's loss."""
        keys = []
        if a.num_experts is not None:
            lb = a.moe_router_load_balancing_type
            if "aux_loss" in lb:
                keys.append("load_balancing_loss")
            if "seq_aux_loss" in lb:
                keys.append("seq_load_balancing_loss")
            if "global_aux_loss" in lb:
                keys.append("global_load_balancing_loss")
            if a.moe_z_loss_coeff is not None:
                keys.append("z_loss")
        for i in range(a.mtp_num_layers or 0):
            keys.append("mtp_{} loss".format(i + 1))
        return keys

    def checkpoint_and_decide_exit(self, a, iteration):
        """training.py:4039-4152: an exit code when the loop is to end."""
        saved = False
        if a.exit_signal_handler and self.signalled(iteration):
            if a.save:
                self.save_checkpoint(a, iteration)
            self.print_datetime("exiting program after receiving SIGTERM.")
            return 0
        if a.save and a.save_interval and iteration % a.save_interval == 0:
            self.save_checkpoint(a, iteration)
            saved = True
        elif a.save and a.non_persistent_save_interval and iteration % a.non_persistent_save_interval == 0:
            self.save_checkpoint(a, iteration, non_persistent=True)
            saved = True
        if a.exit_duration_in_mins:
            train_time = self.sim / 60.0
            if train_time > a.exit_duration_in_mins:
                if a.save and not saved:
                    self.save_checkpoint(a, iteration)
                self.print_datetime("exiting program after {} minutes".format(train_time))
                return 0
        if (a.exit_interval and iteration % a.exit_interval == 0) or (
                a.phase_transition_iterations and iteration in a.phase_transition_iterations):
            if a.save and not saved:
                self.save_checkpoint(a, iteration)
            self.print_datetime("exiting program at iteration {}".format(iteration))
            return 0
        return None

    def signal_dir(self):
        return os.path.join(tempfile.gettempdir(), "attune-emulate-megatron-signal-" + self.job_key())

    def on_exit_signal(self, signum, frame):
        """DistributedSignalHandler's handler only records the signal (dist_signal_handler.py:60-70); the
        ranks' flags are all-gathered after each step, so every rank leaves after the step that was under
        way when the signal came. The emulator's ranks, in step with each other, publish that step in a
        file per rank under a directory named after the job; each leaves once it has done the latest."""
        self.exit_flag = signum
        if self.world > 1:
            try:
                harness.write_file(os.path.join(self.signal_dir(), "rank{}".format(self.rank)), str(self.check_at))
            except OSError:
                pass

    def published_steps(self):
        steps = []
        try:
            d = self.signal_dir()
            for name in os.listdir(d):
                path = os.path.join(d, name)
                try:
                    if name.startswith("rank") and os.path.getmtime(path) >= self.real_start:
                        with open(path) as f:
                            steps.append(int(f.read().strip()))
                except (OSError, ValueError):
                    continue
        except OSError:
            pass
        return steps

    def signalled(self, iteration):
        if self.world <= 1:
            return self.exit_flag is not None
        if self.stop_at is None:
            steps = self.published_steps()
            if not steps and self.exit_flag is None:
                return False
            give_up = time.time() + 0.5  # the other ranks got the same signal: wait for their steps
            while len(steps) < self.world and time.time() < give_up:
                time.sleep(0.005)
                steps = self.published_steps()
            self.stop_at = max(steps) if steps else iteration
            try:  # the last rank to have read the steps removes them
                d = self.signal_dir()
                harness.write_file(os.path.join(d, "left{}".format(self.rank)), "left\n")
                if sum(1 for name in os.listdir(d) if name.startswith("left")) >= self.world:
                    import shutil
                    shutil.rmtree(d, ignore_errors=True)
            except OSError:
                pass
        return iteration >= self.stop_at

    # ------------------------------------------------------------ evaluation (training.py:5120-5400)

    def evaluate_and_print(self, a, prefix, iteration, verbose):
        p = self.prediction()
        if verbose:
            self.out0("Evaluating on {} samples".format(a.eval_iters * a.eval_global_batch_size))
        per_iter = p.step_s / 3.0 * a.eval_global_batch_size / float(a.global_batch_size)
        for i in range(1, a.eval_iters + 1):
            if verbose:
                self.out0("Evaluating iter {}/{}".format(i, a.eval_iters))
            self.sleep(per_iter)
        ms = per_iter * a.eval_iters * 1000.0
        self.timers_block([("evaluate", ms, ms)])
        loss = harness.loss(iteration)
        string = " validation loss at {} | ".format(prefix)
        string += "{} value: {:.6E} | ".format("lm loss", loss)
        string += "{} PPL: {:.6E} | ".format("lm loss", math.exp(min(20, loss)))
        length = len(string) + 1
        self.out_last("-" * length)
        self.out_last(string)
        self.out_last("-" * length)


PARAMS_NORM = 100.0  # --log-params-norm: the norm of the emulated parameters (the emulator's choice)


def _extra_loss(key, step):
    """The auxiliary losses' values (the emulator's choice): a load-balancing loss is E * sum(f_i * P_i),
    1.0 for balanced routing (moe_utils.py:63-110), falling towards it; z-loss small; an MTP depth's loss a
    little above the LM loss."""
    if key.endswith("load_balancing_loss"):
        return 1.0 + 0.2 * math.exp(-step / 200.0)
    if key == "z_loss":
        return 0.05 + 0.5 * math.exp(-step / 300.0)
    depth = int(key.split("_")[1].split()[0])
    return harness.loss(step) + 0.3 * depth


def _prune_old(parent, prefix, age_s=86400.0):
    """Removes the emulator's meeting files of runs that ended long ago."""
    import shutil
    now = time.time()
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        path = os.path.join(parent, name)
        try:
            if name.startswith(prefix) and now - os.path.getmtime(path) > age_s:
                shutil.rmtree(path, ignore_errors=True)
        except OSError:
            pass


def _layout_stages(layout):
    """PipelineParallelLayerLayout.get_num_stages_from_str (pipeline_parallel_layer_layout.py:277-321)."""
    import re
    text = layout.replace(",", "")
    for pattern in (r"\(([^)]+)\)\*(\d+)", r"(.)\*(\d+)"):
        text = re.sub(pattern, lambda m: m.group(1) * int(m.group(2)), text)
    return len(text.split("|"))


def _split_matrix(split):
    """parse_and_normalize_split + convert_split_vector_to_split_matrix (blended_megatron_dataset_config.py)."""
    import re
    vector = [float(x) for x in re.findall(r"[.0-9]+", split)]
    vector += [0.0] * (3 - len(vector))
    total = sum(vector)
    vector = [x / total for x in vector]
    expansion = [0]
    for x in vector:
        expansion.append(expansion[-1] + x)
    matrix = []
    for lo, hi in zip(expansion[:-1], expansion[1:]):
        matrix.append(None if hi <= lo else (lo, hi))
    return matrix


# ---------------------------------------------------------------- the entry point


def _run(proc):
    proc.sleep(IMPORT_S)  # pretrain_gpt.py's imports (torch, transformer_engine, megatron)
    proc.t_main = harness.wall_time()
    proc.out0("> PyTorch version ................ {}".format(TORCH_VERSION))
    version = MCORE_VERSION if int(os.getenv("NO_VCS_VERSION", "0") or "0") else MCORE_VERSION + "+" + GIT_SHORT
    proc.out0("> Megatron-Core version .......... {}".format(version))
    proc.out0("> Transformer Engine version ... {}".format(TE_VERSION))
    first = proc.parse(first_pass=True)
    if first.inprocess_restart:
        harness.emulator_fault("--inprocess-restart (nvidia-resiliency-ext in-process restart) is not emulated")
    a = proc.a = proc.parse(first_pass=False)
    if a.use_checkpoint_args:
        harness.emulator_fault("--use-checkpoint-args (arguments read back from a checkpoint) is not emulated")
    if a.pretrained_checkpoint is not None:
        harness.emulator_fault("--pretrained-checkpoint is not emulated")
    proc.exit_flag = None
    proc.check_at = 1
    proc.stop_at = None
    proc.pending_async = []
    proc.loaded_iteration = 0
    proc.validate(a)
    proc.set_global_variables(a)
    proc.model_config(a)
    return proc.pretrain(a)


def _print_failure(proc, f):
    prefix = "[rank{}]: ".format(proc.rank) if proc.dist_initialized else ""
    lines = ["Traceback (most recent call last):"]
    for path, line, func in f.frames:
        lines.append('  File "{}", line {}, in {}'.format(path, line, func))
    if f.lines is not None:
        lines.extend(f.lines)
    else:
        head = "{}: {}".format(f.exc_type, f.message) if f.message else f.exc_type
        lines.extend(head.split("\n"))
    for line in lines:
        harness.err(prefix + line if line else "")


def main(argv=None):
    """`python pretrain_gpt.py ARGS` (argv: ARGS)."""
    argv = sys.argv[1:] if argv is None else argv
    proc = Process(argv)
    try:
        code = _run(proc)
    except Failure as f:
        _print_failure(proc, f)
        sys.stdout.flush()
        sys.exit(f.code)
    except Exit as e:
        sys.stdout.flush()
        sys.exit(e.code)
    sys.exit(code)
