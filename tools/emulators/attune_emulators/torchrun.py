"""torchrun (torch.distributed.run) as PyTorch 2.6.0 behaves, for the
framework emulators: the same argument parser (option order, PET_* defaults,
argparse's errors and exit status 2), the rendezvous of the nodes (static:
node rank 0 hosts the store; c10d: the node whose host the endpoint names),
one worker per local rank with torchrun's worker environment, workers' output
passed through unprefixed (or `[<role><local_rank>]:` with --tee), the
failure report and exit 1 when a worker fails, and the death-signal handling
(the signal forwarded to every worker's process group, SIGKILL after 30 s,
exit 1). docs/frameworks.md cites the torch source of each.

Workers run the emulated python (bin/python), which hands the entry point to
its framework's emulator. A node's hostname is $SLURMD_NODENAME where Slurm
set it: the mock cluster's nodes are one machine with several names, and a
node name of the job resolves to this machine. The rendezvous store is a Unix
socket named after the host and port, so two jobs on two mock nodes never
share one.
"""

import argparse
import datetime
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

from . import harness

PROG = "torchrun"
RUN_PY = "torch/distributed/run.py"
DEATH_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)
SHUTDOWN_GRACE_S = 30.0  # PContext.close()'s default timeout
RDZV_DIR = "/tmp/attune-emulate-rdzv"


# ---------------------------------------------------------------- parser (torch/distributed/run.py get_args_parser)


class _Env(argparse.Action):
    """torch.distributed.argparse_util.env: PET_<DEST> gives the default."""

    def __init__(self, dest, default=None, required=False, **kwargs):
        default = os.environ.get("PET_" + dest.upper(), default)
        if default:
            required = False
        super().__init__(dest=dest, default=default, required=required, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)


class _CheckEnv(argparse.Action):
    """torch.distributed.argparse_util.check_env: a flag; PET_<DEST> as 0 or 1."""

    def __init__(self, dest, default=False, **kwargs):
        default = bool(int(os.environ.get("PET_" + dest.upper(), "1" if default else "0")))
        super().__init__(dest=dest, const=True, default=default, nargs=0, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, self.const)


def parser():
    p = argparse.ArgumentParser(prog=PROG, description="Torch Distributed Elastic Training Launcher")
    a = p.add_argument
    a("--nnodes", action=_Env, type=str, default="1:1",
      help="Number of nodes, or the range of nodes in form <minimum_nodes>:<maximum_nodes>.")
    a("--nproc-per-node", "--nproc_per_node", action=_Env, type=str, default="1",
      help="Number of workers per node; supported values: [auto, cpu, gpu, int].")
    a("--rdzv-backend", "--rdzv_backend", action=_Env, type=str, default="static", help="Rendezvous backend.")
    a("--rdzv-endpoint", "--rdzv_endpoint", action=_Env, type=str, default="",
      help="Rendezvous backend endpoint; usually in form <host>:<port>.")
    a("--rdzv-id", "--rdzv_id", action=_Env, type=str, default="none", help="User-defined group id.")
    a("--rdzv-conf", "--rdzv_conf", action=_Env, type=str, default="",
      help="Additional rendezvous configuration (<key1>=<value1>,<key2>=<value2>,...).")
    a("--standalone", action=_CheckEnv,
      help="Start a local standalone rendezvous backend that is represented by a C10d TCP store on a free port. "
           "Useful when launching single-node, multi-worker job. If specified --rdzv-backend, --rdzv-endpoint, "
           "--rdzv-id are auto-assigned and any explicitly set values are ignored.")
    a("--max-restarts", "--max_restarts", action=_Env, type=int, default=0,
      help="Maximum number of worker group restarts before failing.")
    a("--monitor-interval", "--monitor_interval", action=_Env, type=float, default=0.1,
      help="Interval, in seconds, to monitor the state of workers.")
    a("--start-method", "--start_method", action=_Env, type=str, default="spawn",
      choices=["spawn", "fork", "forkserver"], help="Multiprocessing start method to use when creating workers.")
    a("--role", action=_Env, type=str, default="default", help="User-defined role for the workers.")
    a("-m", "--module", action=_CheckEnv,
      help="Change each process to interpret the launch script as a Python module, executing with the same "
           "behavior as 'python -m'.")
    a("--no-python", "--no_python", action=_CheckEnv,
      help="Skip prepending the training script with 'python' - just execute it directly. Useful when the "
           "script is not a Python script.")
    a("--run-path", "--run_path", action=_CheckEnv,
      help="Run the training script with runpy.run_path in the same interpreter. Script must be provided as an "
           "abs path (e.g. /abs/path/script.py). Takes precedence over --no-python.")
    a("--log-dir", "--log_dir", action=_Env, type=str, default=None,
      help="Base directory to use for log files (e.g. /var/log/torch/elastic). The same directory is re-used for "
           "multiple runs (a unique job-level sub-directory is created with rdzv_id as the prefix).")
    a("-r", "--redirects", action=_Env, type=str, default="0",
      help="Redirect std streams into a log file in the log directory (e.g. [-r 3] redirects both stdout+stderr "
           "for all workers, [-r 0:1,1:2] redirects stdout for local rank 0 and stderr for local rank 1).")
    a("-t", "--tee", action=_Env, type=str, default="0",
      help="Tee std streams into a log file and also to console (see --redirects for format).")
    a("--local-ranks-filter", "--local_ranks_filter", action=_Env, type=str, default="",
      help="Only show logs from specified ranks in console (e.g. [--local_ranks_filter=0,1,2] will only show logs "
           "from rank 0, 1 and 2). This will only apply to stdout and stderr, not to log files saved via --redirect "
           "or --tee")
    a("--node-rank", "--node_rank", action=_Env, type=int, default=0,
      help="Rank of the node for multi-node distributed training.")
    a("--master-addr", "--master_addr", default="127.0.0.1", type=str, action=_Env,
      help="Address of the master node (rank 0) that only used for static rendezvous. It should be either the IP "
           "address or the hostname of rank 0. For single node multi-proc training the --master-addr can simply be "
           "127.0.0.1; IPv6 should have the pattern `[0:0:0:0:0:0:0:1]`.")
    a("--master-port", "--master_port", default=29500, type=int, action=_Env,
      help="Port on the master node (rank 0) to be used for communication during distributed training. It is "
           "only used for static rendezvous.")
    a("--local-addr", "--local_addr", default=None, type=str, action=_Env,
      help="Address of the local node. If specified, will use the given address for connection. Else, will look "
           "up the local node address instead. Else, it will be default to local machine's FQDN.")
    a("--logs-specs", "--logs_specs", default=None, type=str,
      help="torchrun.logs_specs group entrypoint name, value must be type of LogsSpecs. Can be used to override "
           "custom logging behavior.")
    a("training_script", type=str,
      help="Full path to the (single GPU) training program/script to be launched in parallel, followed by all the "
           "arguments for the training script.")
    a("training_script_args", nargs=argparse.REMAINDER)
    return p


# ---------------------------------------------------------------- torch's log lines (glog format on stderr)


def _glog(level, lineno, message, relpath=RUN_PY):
    now = datetime.datetime.now()
    prefix = "{}{} {}.{:06d} {} {}:{}]".format(
        level, now.strftime("%m%d"), now.strftime("%H:%M:%S"), (now.microsecond // 1000) * 1000, os.getpid(),
        relpath, lineno)
    for line in message.split("\n"):
        harness.err(prefix + " " + line)


def _warn(lineno, message, relpath=RUN_PY):
    _glog("W", lineno, message, relpath)


def _python_exception(exc_type, message, code=1):
    """An uncaught exception of torchrun itself (re-raised by @record)."""
    harness.err("Traceback (most recent call last):")
    harness.err('  File "/usr/local/bin/torchrun", line 8, in <module>')
    harness.err("    sys.exit(main())")
    harness.err("{}: {}".format(exc_type, message) if message else exc_type)
    sys.exit(code)


# ---------------------------------------------------------------- hosts


def hostname():
    return os.environ.get("SLURMD_NODENAME") or socket.gethostname()


def _job_nodes():
    nodelist = os.environ.get("SLURM_JOB_NODELIST", "")
    if not nodelist:
        return set()
    try:
        r = subprocess.run(["scontrol", "show", "hostnames", nodelist], capture_output=True, text=True, timeout=10)
        return set(r.stdout.split())
    except (OSError, subprocess.SubprocessError):
        return set()


def _is_this_host(host):
    """torch.distributed.elastic.rendezvous.utils._matches_machine_hostname."""
    if host in ("localhost", hostname(), socket.gethostname()) or host.startswith("127."):
        return True
    try:
        return host in {a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None)}
    except OSError:
        return False


def _resolves(host):
    if host in _job_nodes() or _is_this_host(host):
        return True
    try:
        socket.getaddrinfo(host, None)
        return True
    except OSError:
        return False


# ---------------------------------------------------------------- rendezvous


class _Store:
    """The rendezvous store: the agent that hosts it collects the nodes until
    the round is full, then tells each its group rank."""

    def __init__(self, path, min_nodes, max_nodes, static):
        self.path = path
        self.min_nodes, self.max_nodes, self.static = min_nodes, max_nodes, static
        self.joined = []  # (descriptor, node_rank, conn)
        self.lock = threading.Lock()
        self.done = False
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(64)
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._join, args=(conn,), daemon=True).start()

    def _join(self, conn):
        try:
            request = json.loads(conn.makefile().readline())
        except (OSError, ValueError):
            conn.close()
            return
        with self.lock:
            if self.done or len(self.joined) >= self.max_nodes:
                return  # c10d's redundancy list: it waits, with no timeout
            self.joined.append((request["node"], int(request.get("node_rank", 0)), conn))
            if len(self.joined) == self.max_nodes:
                self._close_round()

    def _close_round(self):
        self.done = True
        order = sorted(self.joined, key=lambda j: j[1]) if self.static else sorted(self.joined, key=lambda j: j[0])
        for rank, (desc, node_rank, conn) in enumerate(order):
            group_rank = node_rank if self.static else rank
            try:
                conn.sendall((json.dumps({"group_rank": group_rank, "group_world_size": self.max_nodes}) + "\n").encode())
            except OSError:
                pass


def _socket_path(host, port):
    os.makedirs(RDZV_DIR, exist_ok=True)
    return os.path.join(RDZV_DIR, "{}_{}.sock".format(host, port))


def _try_host(path, min_nodes, max_nodes, static):
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(path)
        probe.close()
        return None  # someone listens: the address is in use
    except OSError:
        probe.close()
    try:
        os.unlink(path)
    except OSError:
        pass
    try:
        return _Store(path, min_nodes, max_nodes, static)
    except OSError:
        return None


def _join(path, descriptor, node_rank, deadline):
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
            break
        except OSError:
            s.close()
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.05)
    s.sendall((json.dumps({"node": descriptor, "node_rank": node_rank}) + "\n").encode())
    s.settimeout(None)
    line = s.makefile().readline()
    if not line:
        return None
    return json.loads(line)


def rendezvous(args, min_nodes, max_nodes):
    """(group_rank, group_world_size, master_addr, master_port, store) for this node."""
    conf = _rdzv_conf(args.rdzv_conf)
    if args.rdzv_backend == "static":
        if args.rdzv_endpoint:
            host, _, port = args.rdzv_endpoint.partition(":")
            if not port:
                _python_exception("ValueError", "Port is absent in endpoint: {}. Try launching with --master-port"
                                  .format(args.rdzv_endpoint))
        else:
            host, port = args.master_addr, str(args.master_port)
        if not _resolves(host):
            _dns_failure(host)
        if max_nodes == 1:
            return 0, 1, host, port, None
        path = _socket_path(host, port)
        store = _try_host(path, max_nodes, max_nodes, True) if args.node_rank == 0 else None
        timeout = float(conf.get("timeout", 900))
        answer = _join(path, "{}_{}".format(hostname(), os.getpid()), args.node_rank, time.monotonic() + timeout / harness.time_scale())
        if answer is None:
            _python_exception("torch.distributed.DistStoreError",
                              "Timed out after {} seconds waiting for clients. 1/{} clients joined.".format(
                                  int(timeout), max_nodes))
        return answer["group_rank"], answer["group_world_size"], host, port, store
    if args.rdzv_backend != "c10d":
        _python_exception("ValueError", "The rendezvous backend '{}' cannot be emulated.".format(args.rdzv_backend))
    host, _, port = args.rdzv_endpoint.partition(":")
    port = port or "29400"
    if host in ("", "localhost") or max_nodes == 1 and min_nodes == 1 and _is_this_host(host):
        if max_nodes == 1:
            return 0, 1, hostname(), _free_port(), None
    if not _resolves(host):
        _dns_failure(host)
    path = _socket_path(host if host not in ("localhost",) else hostname(), port)
    store = _try_host(path, min_nodes, max_nodes, False) if _is_this_host(host) else None
    join_timeout = float(conf.get("join_timeout", 600))
    answer = _join(path, "{}_{}".format(hostname(), os.getpid()), 0, time.monotonic() + join_timeout / harness.time_scale())
    if answer is None:
        _python_exception("torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError", "")
    return answer["group_rank"], answer["group_world_size"], host, _free_port(), store


def _rdzv_conf(text):
    out = {}
    if not text:
        return out
    for item in text.split(","):
        key, eq, value = item.partition("=")
        if not eq:
            _python_exception("ValueError", "The rendezvous configuration string must be in format "
                                            "<key1>=<value1>,...,<keyN>=<valueN>.")
        if not value:
            _python_exception("ValueError", "The rendezvous configuration option '{}' must have a value specified."
                              .format(key.strip()))
        out[key.strip()] = value.strip()
    return out


def _dns_failure(host):
    _python_exception("torch.distributed.DistNetworkError",
                      "The client socket has failed to connect to any network address of ({}, 29500). The client "
                      "socket has failed to connect to ({}, 29500) (errno: -2 - Name or service not known)."
                      .format(host, host))


def _free_port():
    s = socket.socket()
    s.bind(("", 0))
    port = s.getsockname()[1]
    s.close()
    return str(port)


# ---------------------------------------------------------------- workers


def _parse_nnodes(text):
    parts = text.split(":")
    if len(parts) == 1:
        lo = hi = parts[0]
    elif len(parts) == 2:
        lo, hi = parts
    else:
        _python_exception("RuntimeError", 'nnodes={} is not in "MIN:MAX" format'.format(text))
    try:
        lo, hi = int(lo), int(hi)
    except ValueError:
        _python_exception("ValueError", "invalid literal for int() with base 10: '{}'".format(text))
    if not (0 < lo <= hi):
        _python_exception("AssertionError", "")
    return lo, hi


def _nproc(text):
    if text.isdigit():
        return int(text)
    if text in ("gpu", "auto"):
        gpus = os.environ.get("ATTUNE_EMULATE_GPUS", "")
        if gpus:
            return int(gpus)
        if text == "gpu":
            _python_exception("ValueError", "Cuda is not available.")
        return os.cpu_count() or 1
    if text == "cpu":
        return os.cpu_count() or 1
    _python_exception("ValueError", "Unsupported nproc_per_node value: {}".format(text))


def _stream_spec(text, nproc):
    if text in ("0", "1", "2", "3"):
        return {i: int(text) for i in range(nproc)}
    out = {}
    for item in text.split(","):
        rank, _, value = item.partition(":")
        if not rank.isdigit() or value not in ("0", "1", "2", "3"):
            _python_exception("ValueError", "{} does not match: <^[0123]$> or <^(\\d:[0123],)*(\\d:[0123])$>".format(text))
        out[int(rank)] = int(value)
    return out


def _entrypoint(args):
    python = os.environ.get("PYTHON_EXEC") or os.path.join(harness.BIN_DIR, "python")
    if args.no_python and args.module:
        _python_exception("ValueError", "Don't use both the '--no-python' flag and the '--module' flag at the same time.")
    if args.no_python:
        return [args.training_script] + args.training_script_args, args.training_script
    if args.module:
        return [python, "-u", "-m", args.training_script] + args.training_script_args, python
    return [python, "-u", args.training_script] + args.training_script_args, python


def _entrypoint_name(args):
    """launcher/api.py _get_entrypoint_name: the first argument not starting with '-'."""
    for a in [args.training_script] + args.training_script_args:
        if not a.startswith("-"):
            return a
    return ""


class _Tail(threading.Thread):
    def __init__(self, pipe, header, to):
        super().__init__(daemon=True)
        self.pipe, self.header, self.to = pipe, header, to

    def run(self):
        for raw in iter(self.pipe.readline, b""):
            self.to.write(self.header + raw.decode(errors="replace"))
            self.to.flush()


class Agent:
    def __init__(self, args):
        self.args = args
        self.procs = []
        self.tails = []
        self.shutting_down = False

    def start(self, env, nproc, filt, tee):
        argv, self.binary = _entrypoint(self.args)
        for local_rank in range(nproc):
            wenv = dict(env)
            wenv["LOCAL_RANK"] = str(local_rank)
            wenv["RANK"] = str(int(env["GROUP_RANK"]) * nproc + local_rank)
            wenv["ROLE_RANK"] = wenv["RANK"]
            shown = not filt or local_rank in filt
            teed = tee.get(local_rank, 0)
            out = subprocess.PIPE if teed in (1, 3) else (None if shown else subprocess.DEVNULL)
            err = subprocess.PIPE if teed in (2, 3) else (None if shown else subprocess.DEVNULL)
            try:
                p = subprocess.Popen(argv, env=wenv, stdout=out, stderr=err, start_new_session=True)
            except OSError as e:
                _python_exception("FileNotFoundError" if isinstance(e, FileNotFoundError) else "OSError", str(e))
            header = "[{}{}]:".format(self.args.role, local_rank)
            if out == subprocess.PIPE and shown:
                self.tails.append(_Tail(p.stdout, header, sys.stdout))
            if err == subprocess.PIPE and shown:
                self.tails.append(_Tail(p.stderr, header, sys.stderr))
            self.procs.append((local_rank, p, time.time()))
        for t in self.tails:
            t.start()

    def monitor(self, env):
        while True:
            failed = [(lr, p, t) for lr, p, t in self.procs if p.poll() not in (None, 0)]
            if failed:
                first = min(failed, key=lambda f: f[2])
                self.close(signal.SIGTERM)
                self.report(first, env)
                return 1
            if all(p.poll() == 0 for _, p, _ in self.procs):
                for t in self.tails:
                    t.join(1)
                return 0
            time.sleep(max(0.01, self.args.monitor_interval))

    def close(self, sig):
        for lr, p, _ in self.procs:
            if p.poll() is None:
                _warn(897, "Sending process {} closing signal {}".format(p.pid, signal.Signals(sig).name),
                      "torch/distributed/elastic/multiprocessing/api.py")
                try:
                    os.killpg(p.pid, sig)
                except OSError:
                    pass
        deadline = time.monotonic() + SHUTDOWN_GRACE_S
        while time.monotonic() < deadline and any(p.poll() is None for _, p, _ in self.procs):
            time.sleep(0.05)
        for lr, p, _ in self.procs:
            if p.poll() is None:
                _warn(916, "Unable to shutdown process {} via {}, forcefully exiting via {}".format(
                    p.pid, signal.Signals(sig), signal.Signals.SIGKILL),
                      "torch/distributed/elastic/multiprocessing/api.py")
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except OSError:
                    pass
                p.wait()

    def report(self, first, env):
        local_rank, p, started = first
        code = p.returncode
        _glog("E", 869, "failed (exitcode: {}) local_rank: {} (pid: {}) of binary: {}".format(
            code, local_rank, p.pid, self.binary), "torch/distributed/elastic/multiprocessing/api.py")
        name = _entrypoint_name(self.args)
        rank = int(env["GROUP_RANK"]) * len(self.procs) + local_rank
        when = datetime.datetime.fromtimestamp(time.time()).isoformat(sep="_", timespec="seconds")
        if code < 0:
            trace = "Signal {} ({}) received by PID {}".format(-code, signal.Signals(-code).name, p.pid)
        else:
            trace = "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"
        block = [
            "[0]:",
            "  time      : {}".format(when),
            "  host      : {}".format(socket.getfqdn() if not os.environ.get("SLURMD_NODENAME") else hostname()),
            "  rank      : {} (local_rank: {})".format(rank, local_rank),
            "  exitcode  : {} (pid: {})".format(code, p.pid),
            "  error_file: <N/A>",
            "  traceback : {}".format(trace),
        ]
        title = "{} FAILED".format(name)
        width = min(max([len(title)] + [len(l) for l in block]), 60)
        harness.err("Traceback (most recent call last):")
        harness.err('  File "/usr/local/bin/torchrun", line 8, in <module>')
        harness.err("    sys.exit(main())")
        harness.err("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ")
        harness.err("=" * width)
        harness.err(title)
        harness.err("-" * width)
        harness.err("Failures:")
        harness.err("  <NO_OTHER_FAILURES>")
        harness.err("-" * width)
        harness.err("Root Cause (first observed failure):")
        for line in block:
            harness.err(line)
        harness.err("=" * width)


def main(argv=None):
    args = parser().parse_args(argv)
    min_nodes, max_nodes = _parse_nnodes(args.nnodes)
    nproc = _nproc(args.nproc_per_node)
    if args.standalone:
        args.rdzv_backend, args.rdzv_endpoint, args.rdzv_id = "c10d", "localhost:0", str(uuid.uuid4())
    elif args.rdzv_backend != "static" and not args.rdzv_endpoint:
        _warn(779, "master_addr is only used for static rdzv_backend and when rdzv_endpoint is not specified.")
    filt = set()
    if args.local_ranks_filter:
        try:
            filt = {int(r) for r in args.local_ranks_filter.split(",")}
        except ValueError:
            _python_exception("ValueError", "--local_ranks_filter must be a comma-separated list of integers e.g. "
                                            "--local_ranks_filter=0,1,2")
    tee = _stream_spec(args.tee, nproc)
    _stream_spec(args.redirects, nproc)
    env = dict(os.environ)
    if "OMP_NUM_THREADS" not in env and nproc > 1:
        _warn(792, "\n*****************************************\nSetting OMP_NUM_THREADS environment variable for "
                   "each process to be 1 in default, to avoid your system being overloaded, please further tune "
                   "the variable for optimal performance in your application as needed. \n"
                   "*****************************************")
        env["OMP_NUM_THREADS"] = "1"
    if args.log_dir is None:
        tempfile.mkdtemp(prefix="torchelastic_")

    agent = Agent(args)
    made = []  # files this torchrun made for its workers, removed when it ends

    def clean_up():
        for path in made:
            try:
                os.unlink(path)
            except OSError:
                pass

    def on_death(signum, frame):
        if agent.shutting_down:
            return
        agent.shutting_down = True
        _warn(718, "Received {} death signal, shutting down workers".format(signal.Signals(signum).value),
              "torch/distributed/elastic/agent/server/api.py")
        agent.close(signum)
        harness.err("Traceback (most recent call last):")
        harness.err('  File "/usr/local/bin/torchrun", line 8, in <module>')
        harness.err("    sys.exit(main())")
        harness.err("torch.distributed.elastic.multiprocessing.api.SignalException: Process {} got signal: {}"
                    .format(os.getpid(), signal.Signals(signum).value))
        clean_up()
        os._exit(1)

    for s in DEATH_SIGNALS:
        signal.signal(s, on_death)

    group_rank, group_world, master_addr, master_port, store = rendezvous(args, min_nodes, max_nodes)
    env.update({
        "GROUP_RANK": str(group_rank),
        "GROUP_WORLD_SIZE": str(group_world),
        "ROLE_NAME": args.role,
        "LOCAL_WORLD_SIZE": str(nproc),
        "WORLD_SIZE": str(nproc * group_world),
        "ROLE_WORLD_SIZE": str(nproc * group_world),
        "MASTER_ADDR": master_addr,
        "MASTER_PORT": str(master_port),
        "TORCHELASTIC_RESTART_COUNT": "0",
        "TORCHELASTIC_MAX_RESTARTS": str(args.max_restarts),
        "TORCHELASTIC_RUN_ID": args.rdzv_id,
        "TORCHELASTIC_USE_AGENT_STORE": "True",
        "TORCH_NCCL_ASYNC_ERROR_HANDLING": env.get("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"),
    })
    if "ATTUNE_EMULATE_PREDICTION" not in env:
        # Beside the recipe as launched when there is one (the run's own
        # directory keeps what a killed torchrun could not remove).
        recipe = env.get("ATTUNE_EMULATE_RECIPE", "")
        fd, path = tempfile.mkstemp(prefix=".emulated-prediction-", suffix=".json",
                                    dir=os.path.dirname(recipe) if recipe else None)
        os.close(fd)
        made.append(path)
        harness.write_prediction(path, group_world, nproc)
        env["ATTUNE_EMULATE_PREDICTION"] = path
    agent.start(env, nproc, filt, tee)
    code = agent.monitor(env)
    clean_up()
    if store is not None:
        try:
            os.unlink(store.path)
        except OSError:
            pass
    sys.exit(code)
