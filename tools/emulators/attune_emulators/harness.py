"""What every framework emulator shares: the worker a process is (from
torchrun's environment), the emulated GPUs' timing, pacing by the mock
cluster's time scale, printing, failing as Python does, checkpoints as files.

An emulator stands in for a framework's training process where no GPU exists.
It checks its command line and config as the framework's entry point does and
prints what the framework prints; how long each step takes, how much memory it
uses and whether it runs out of it is not the framework's to say but the
hardware's, and that comes from attune's simulator for the recipe as launched
(`attune sim predict`, under the scenario's truth when one is given). attune's
`emulate` payload sets:

  ATTUNE_EMULATE_ATTUNE      the attune binary
  ATTUNE_EMULATE_RECIPE      the attune wrapper of the recipe as launched (run directory)
  ATTUNE_EMULATE_TRUTH       a scenario's truth file ("" = the nominal model)
  ATTUNE_EMULATE_TIME_SCALE  simulated seconds per real second (the mock cluster's)
  ATTUNE_EMULATE_SEED        this launch's noise
  ATTUNE_EMULATE_GPUS        GPUs each node has (a rank past them fails as CUDA does)

Without ATTUNE_EMULATE_RECIPE an emulator still checks its input and prints
its lines, at a fixed step time of 1 s (tests of the emulators alone).

Every framework's behaviour lives in its own module and cites its source in
docs/frameworks.md; nothing here is a framework's.
"""

import hashlib
import json
import math
import os
import random
import signal
import subprocess
import sys
import time
import traceback

EMULATORS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN_DIR = os.path.join(EMULATORS_DIR, "bin")
REAL_PYTHON = "/usr/bin/python3"


# ---------------------------------------------------------------- the worker


class Worker:
    """This process as torchrun started it (torch.distributed.run's worker
    environment); one process of one node when no torchrun started it."""

    def __init__(self, env=None):
        env = os.environ if env is None else env
        self.rank = int(env.get("RANK", "0"))
        self.local_rank = int(env.get("LOCAL_RANK", "0"))
        self.world_size = int(env.get("WORLD_SIZE", "1"))
        self.local_world_size = int(env.get("LOCAL_WORLD_SIZE", "1"))
        self.node_rank = int(env.get("GROUP_RANK", "0"))
        self.nnodes = int(env.get("GROUP_WORLD_SIZE", str(max(1, self.world_size // max(1, self.local_world_size)))))
        self.master_addr = env.get("MASTER_ADDR", "127.0.0.1")
        self.master_port = env.get("MASTER_PORT", "29500")
        self.under_torchrun = "TORCHELASTIC_RUN_ID" in env

    @property
    def is_first(self):
        return self.rank == 0

    @property
    def is_last(self):
        return self.rank == self.world_size - 1


def worker():
    return Worker()


def check_device(w):
    """A local rank past the node's GPUs: torch.cuda.set_device's error."""
    gpus = os.environ.get("ATTUNE_EMULATE_GPUS", "")
    if gpus and w.local_rank >= int(gpus):
        fail_with_traceback(
            "torch.AcceleratorError",
            "CUDA error: invalid device ordinal\nCUDA kernel errors might be asynchronously reported at some other "
            "API call, so the stacktrace below might be incorrect.",
        )


# ---------------------------------------------------------------- time


def time_scale():
    try:
        scale = float(os.environ.get("ATTUNE_EMULATE_TIME_SCALE", "1"))
    except ValueError:
        scale = 1.0
    return scale if scale > 0 else 1.0


_SIM_START = time.monotonic()


def sleep(sim_seconds):
    """Waits `sim_seconds` of simulated time (real time x the time scale)."""
    if sim_seconds > 0:
        time.sleep(sim_seconds / time_scale())


def sim_elapsed():
    """Simulated seconds since this process started."""
    return (time.monotonic() - _SIM_START) * time_scale()


def wall_time():
    """What a log's timestamps read: the wall clock moved at the simulated pace."""
    return time.time() + (time.monotonic() - _SIM_START) * (time_scale() - 1.0)


# ---------------------------------------------------------------- the emulated GPUs


class Prediction:
    """What the simulator says one step of this run costs on these GPUs."""

    def __init__(self, data):
        self.data = data
        self.step_s = float(data.get("step_time_s") or 1.0)
        self.tokens_per_s_per_gpu = float(data.get("tokens_per_s_per_gpu") or 0.0)
        self.tflops_per_gpu = float(data.get("tflops_per_gpu") or 0.0)
        self.mfu = float(data.get("mfu") or 0.0)
        memory = data.get("memory") or {}
        self.peak_allocated_gib = float(memory.get("peak_allocated_gib") or 0.0)
        self.peak_reserved_gib = float(memory.get("peak_reserved_gib") or self.peak_allocated_gib)
        self.hbm_gib = float(memory.get("hbm_gib") or 80.0)
        # `attune sim predict --json`: "failure" is the failure's kind ("oom",
        # "invalid_argument", ...) or null, "error" its message.
        failure = data.get("failure")
        # "unpredictable": the simulator has no step time for this recipe (the
        # framework's own checks still run; the first timed step stops it).
        self.unpredictable = data.get("error") or "the simulator cannot time it" if failure == "unpredictable" else ""
        if failure == "unpredictable":
            failure = None
        self.failure = {"kind": failure, "message": data.get("error") or ""} if isinstance(failure, str) else None
        self.fails_at_step = int(data.get("fails_at_step") or 0)
        self.error = data.get("error") or ""

    @property
    def ooms(self):
        return self.failure is not None and self.failure.get("kind") == "oom"


def _predict(nodes, gpus_per_node):
    recipe = os.environ.get("ATTUNE_EMULATE_RECIPE", "")
    binary = os.environ.get("ATTUNE_EMULATE_ATTUNE", "")
    if not recipe or not binary:
        return {"step_time_s": 1.0, "memory": {"hbm_gib": 80.0, "peak_allocated_gib": 40.0}}
    argv = [binary, "sim", "predict", recipe, "--json", "--nodes", str(nodes), "--gpus-per-node", str(gpus_per_node)]
    truth = os.environ.get("ATTUNE_EMULATE_TRUTH", "")
    if truth:
        argv += ["--truth-file", truth]
    r = subprocess.run(argv, capture_output=True, text=True)
    try:
        data = json.loads(r.stdout)
    except ValueError:
        emulator_fault("cannot time this run: `{}` said: {}".format(" ".join(argv), (r.stderr or r.stdout).strip()))
    return data


def prediction(w):
    """This run's prediction: computed once per node by the emulated torchrun
    (ATTUNE_EMULATE_PREDICTION names its file), else here."""
    path = os.environ.get("ATTUNE_EMULATE_PREDICTION", "")
    if path and os.path.exists(path):
        with open(path) as f:
            return Prediction(json.load(f))
    return Prediction(_predict(w.nnodes, w.local_world_size))


def write_prediction(path, nodes, gpus_per_node):
    data = _predict(nodes, gpus_per_node)
    with open(path, "w") as f:
        json.dump(data, f)


def seed():
    try:
        return int(os.environ.get("ATTUNE_EMULATE_SEED", "1"))
    except ValueError:
        return 1


def _unit(*keys):
    """A number in [0, 1) fixed by the keys: every rank of a run draws the same."""
    h = hashlib.sha256(("/".join(str(k) for k in keys)).encode()).digest()
    return int.from_bytes(h[:8], "big") / 2.0**64


def _normal(*keys):
    u1 = max(_unit(*keys, "a"), 1e-12)
    u2 = _unit(*keys, "b")
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2 * math.pi * u2)


class StepClock:
    """The simulated duration of each step of this run: the prediction, a
    per-run factor (placement, clocks: the noise between runs) and a per-step
    jitter, the first steps slower (allocator warm-up, compilation)."""

    RUN_SPREAD = 0.01
    STEP_SPREAD = 0.02

    def __init__(self, pred):
        self.pred = pred
        self.run_factor = 1.0 + self.RUN_SPREAD * _normal(seed(), "run")

    def seconds(self, step):
        if self.pred.unpredictable:
            emulator_fault("cannot time this run: " + self.pred.unpredictable)
        base = self.pred.step_s * self.run_factor
        jitter = 1.0 + self.STEP_SPREAD * _normal(seed(), "step", step)
        warm = 3.0 if step <= 1 else 1.3 if step == 2 else 1.0
        return max(1e-4, base * jitter * warm)

    def tokens_per_s_per_gpu(self, step):
        return self.pred.tokens_per_s_per_gpu * self.pred.step_s / self.seconds(step)

    def tflops_per_gpu(self, step):
        return self.pred.tflops_per_gpu * self.pred.step_s / self.seconds(step)


def loss(step):
    """The training loss at `step`: the same for every layout (the objective does not change)."""
    return 2.0 + 9.0 * math.exp(-step / 250.0) + 0.02 * _normal("loss", step)


def grad_norm(step):
    return 1.0 + 8.0 * math.exp(-step / 100.0) + 0.05 * abs(_normal("grad", step))


# ---------------------------------------------------------------- output and failure


def out(line=""):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def err(line=""):
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def emulator_fault(message):
    """Something the emulator itself cannot do (not the framework's error)."""
    err("attune emulator: " + message)
    sys.exit(3)


def fail_with_traceback(exc_type, message, frames=None, code=1, prefix=""):
    """An uncaught Python exception: the traceback Python prints, then exit 1.
    `frames` are (file, line, function) of the framework's own call stack."""
    lines = ["Traceback (most recent call last):"]
    for path, lineno, func in frames or []:
        lines.append('  File "{}", line {}, in {}'.format(path, lineno, func))
    head, _, rest = message.partition("\n")
    lines.append("{}: {}".format(exc_type, head) if head else exc_type)
    if rest:
        lines.extend(rest.split("\n"))
    for line in lines:
        err(prefix + line)
    sys.exit(code)


def cuda_oom_message(pred, device=0):
    """torch's CUDA out-of-memory message (c10/cuda/CUDACachingAllocator.cpp)."""
    total = pred.hbm_gib
    want = max(0.5, pred.peak_reserved_gib - total + 2.0)
    free = max(0.01, total * 0.004)
    allocated = max(0.0, total - free - 1.0)
    return (
        "CUDA out of memory. Tried to allocate {:.2f} GiB. GPU {} has a total capacity of {:.2f} GiB of which "
        "{:.2f} MiB is free. Including non-PyTorch memory, this process has {:.2f} GiB memory in use. Of the "
        "allocated memory {:.2f} GiB is allocated by PyTorch, and {:.2f} MiB is reserved by PyTorch but "
        "unallocated. If reserved but unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for "
        "Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)".format(
            want, device, total, free * 1024, total - free, allocated, 128.0
        )
    )


# ---------------------------------------------------------------- signals


def on_signal(signum, handler):
    signal.signal(signum, handler)


class Flag:
    """A signal turned into a flag the training loop polls (the frameworks'
    signal handlers that act at the next step boundary)."""

    def __init__(self, *signums):
        self.raised = None
        for s in signums:
            signal.signal(s, self._set)

    def _set(self, signum, frame):
        self.raised = signum


# ---------------------------------------------------------------- files


def write_file(path, text):
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    tmp = path + ".tmp{}".format(os.getpid())
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def write_json(path, data):
    write_file(path, json.dumps(data, indent=1, sort_keys=True) + "\n")


def read_json(path):
    with open(path) as f:
        return json.load(f)


def now_text(fmt="%Y-%m-%d %H:%M:%S"):
    return time.strftime(fmt, time.localtime(wall_time()))


def random_for(*keys):
    return random.Random(int(_unit(seed(), *keys) * 2**53))


def print_exception_and_exit(code=1):
    traceback.print_exc()
    sys.exit(code)
