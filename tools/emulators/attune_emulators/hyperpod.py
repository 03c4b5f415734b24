"""The SageMaker HyperPod recipes' training path for the attune emulators: the
recipe as the HyperPod launcher resolves it (`<run.name>_hydra.yaml`), handed
to the HyperPod training adapter's example entry scripts under torchrun:

  torchrun ... examples/<model>/<model>_pretrain.py --config-path=DIR --config-name=NAME [overrides]

Emulated, each from the source at its version (training adapter 0f91fdd =
v1.4.0, Hydra 1.3.2, OmegaConf 2.2.3, PyTorch Lightning 2.3.3, NeMo 2.0.0rc1,
tqdm 4.66): Hydra's command line (its argparse flags, --config-path and
--config-name with the leading-'/' pitfall, the override grammar's common
cases, its error reports with and without HYDRA_FULL_ERROR, its outputs/
directory), OmegaConf's YAML loading and interpolation resolution with its
error texts, the adapter's validate_config (the model-type check, the
resolution that is not caught, the pydantic schema whose errors are logged and
then `exit()` with status 0), the entry scripts' model_type dispatch, the
exp_manager's log directory and files, Lightning's start-up lines, the TQDM
progress bar on global rank 0, the adapter's checkpoints (full, sharded, PEFT)
and resume_from_checkpoint, Lightning's SIGTERM handling (log, finish the
batch, exit 0) and KeyboardInterrupt handling.

Every behaviour cites its source in the framework's documentation section;
nothing here is a real tokenizer, dataset, model or GPU.
"""

import argparse
import json
import math
import os
import re
import signal
import struct
import sys
import time

import yaml

from . import harness, omegaconf_yaml

# ---------------------------------------------------------------- versions and paths

HYDRA_VERSION = "1.3.2"
PYDANTIC_URL_VERSION = "2.10"  # not pinned by the adapter: the emulator's choice (see the docs section)
# Where the container's packages live: the SMP images' layout is not public; the emulator's choice.
SITE = "/opt/conda/lib/python3.11/site-packages"
ADAPTER = SITE + "/hyperpod_nemo_adapter"
HYDRA = SITE + "/hydra"
OMEGACONF = SITE + "/omegaconf"
PL = SITE + "/pytorch_lightning"
NEMO = SITE + "/nemo"

# Simulated start-up (the emulator's own choice): imports before Hydra composes,
# then trainer/model construction, distributed init and FSDP wrapping before the
# first batch.
IMPORT_S = 20.0
SETUP_S = 45.0
EXP_MANAGER_SLEEP_S = 5.0  # NeMo ExpManagerConfig.seconds_to_sleep (non-zero ranks)

# Per entry script: examples/<dir>/<file>, its @hydra.main config_name, the
# lines of train()'s two logging.info calls, of trainer.fit, of main's train(cfg)
# and of the module-level main(); the decorator's `extra`; the dispatch rule.
ENTRIES = {
    "llama": dict(expm=33, script="examples/llama/llama_pretrain.py", config_name="smp_llama_config", fit=38, main=44,
                  module=49, train_first=29, extra="forbid", dispatch="llama"),
    "mistral": dict(expm=30, script="examples/mistral/mistral_pretrain.py", config_name="mistral_config", fit=32, main=38,
                    module=43, train_first=26, extra="forbid", dispatch=None),
    "mixtral": dict(expm=35, script="examples/mixtral/mixtral_pretrain.py", config_name="smp_mixtral_config", fit=37,
                    main=43, module=48, train_first=31, extra="forbid", dispatch=None),
    "deepseek": dict(expm=35, script="examples/deepseek/deepseek_pretrain.py", config_name="smp_deepseek_config", fit=42,
                     main=48, module=53, train_first=30, extra="forbid", dispatch="deepseek"),
    "custom": dict(expm=30, script="examples/custom_model/custom_pretrain.py", config_name="custom_config", fit=32, main=38,
                   module=43, train_first=26, extra="allow", dispatch=None),
}

# nemo/utils/nemo_logging.py @ r2.0.0rc1: Logger.info/warning/error call self._logger._log
# directly; under Python 3.11 logging's findCaller stops at that frame.
NEMO_LINE = {"I": 381, "W": 393, "E": 405}


# ---------------------------------------------------------------- small failures


class Exit(Exception):
    """The process ends with this status (after what was printed)."""

    def __init__(self, code):
        Exception.__init__(self, code)
        self.code = code


class PyError(Exception):
    """A Python exception the framework raises: qualified type, message, the
    frames (path, line, function, source, caret-expression) from the task
    function's first frame down, and where it was raised relative to Hydra."""

    def __init__(self, exc, message, frames=(), omega_frames=()):
        Exception.__init__(self, exc)
        self.exc, self.message, self.frames, self.omega_frames = exc, message, list(frames), list(omega_frames)


def _frame(path, line, func, src, expr=None, multiline=False):
    return (path, line, func, src, expr, multiline)


def _format_frames(frames):
    """Python 3.11's traceback lines for `frames`, with the caret row where the
    failing expression does not span the whole line."""
    out = []
    for path, line, func, src, expr, multiline in frames:
        out.append('  File "{}", line {}, in {}'.format(path, line, func))
        if src is None:
            continue
        stripped = src.strip()
        out.append("    " + stripped)
        if expr:
            start = src.index(expr)
            end = len(src.rstrip()) if multiline else start + len(expr)
            lead = len(src) - len(src.lstrip())
            if end - start < len(stripped):
                out.append("    " + " " * (start - lead) + "^" * (end - start))
    return out


def _exception_lines(exc, message):
    head = exc if message == "" else "{}: {}".format(exc, message)
    return head.split("\n")


# ---------------------------------------------------------------- output


class Out:
    """What this process prints: NeMo's logger (global rank 0 only), Lightning's
    loggers (plain messages on stderr), the adapter's `smp` logger (every
    rank), on a clock that moves with the simulated time."""

    def __init__(self, rank):
        self.rank = rank
        self.t0 = harness.wall_time()
        self.t = 0.0

    def now(self):
        return self.t0 + self.t

    def wait(self, seconds):
        if seconds > 0:
            harness.sleep(seconds)
            self.t += seconds

    def stamp(self, with_ms=False):
        now = self.now()
        text = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now))
        if with_ms:
            text += ",%03d" % int((now - int(now)) * 1000)
        return text

    def nemo(self, level, message):
        """nemo.utils.logging: stream handlers only on global rank 0; INFO to
        stdout, WARNING and above to stderr; BaseNeMoFormatter indents every
        continuation line by four spaces."""
        if self.rank != 0:
            return
        text = "[NeMo {} {} nemo_logging:{}] {}".format(level, self.stamp(), NEMO_LINE[level], message)
        text = text.replace("\n", "\n    ")
        if level == "I":
            harness.out(text)
        else:
            harness.err(text)

    def nemo_warning(self, path, line, category, message, source=None):
        """A Python warning captured by NeMo (warnings.showwarning -> logging.warning)."""
        if path.startswith(PL) or "lightning" in path:
            text = "{}:{}: {}\n".format(path, line, message)  # lightning_fabric's _custom_format_warning
        else:
            text = "{}:{}: {}: {}\n".format(path, line, category, message)
            if source:
                text += "  {}\n".format(source.strip())
        self.nemo("W", text)

    def pl_zero(self, message):
        """rank_zero_info through the pytorch_lightning logger's own StreamHandler."""
        if self.rank == 0:
            harness.err(message)

    def pl_all(self, message):
        harness.err(message)

    def smp(self, level, message):
        """The adapter's Logger(): the format of its fallback logger (the SMP
        logger's own format is not public)."""
        harness.err("{} - smp - {} - {}".format(self.stamp(with_ms=True), level, message))


# ---------------------------------------------------------------- YAML (OmegaConf 2.2.3's loader and dumper)


_YAML_BOOLS = {"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "false", "False",
               "FALSE", "on", "On", "ON", "off", "Off", "OFF"}


def _numeric(s, kind):
    try:
        kind(s)
        return True
    except ValueError:
        return False


class _Dumper(yaml.Dumper):
    pass


def _str_representer(dumper, data):
    quote = data in _YAML_BOOLS or _numeric(data, int) or _numeric(data, float)
    return dumper.represent_scalar(yaml.resolver.BaseResolver.DEFAULT_SCALAR_TAG, data, style=("'" if quote else None))


_Dumper.add_representer(str, _str_representer)


def to_yaml(data):
    """OmegaConf.to_yaml: yaml.dump(default_flow_style=False, allow_unicode=True, sort_keys=False)."""
    return yaml.dump(data, default_flow_style=False, allow_unicode=True, sort_keys=False, Dumper=_Dumper)


def load_yaml(path):
    with open(path, encoding="utf-8") as f:
        return yaml.load(f, Loader=omegaconf_yaml.Loader)


# ---------------------------------------------------------------- OmegaConf interpolation


class OmegaError(Exception):
    """An omegaconf.errors exception as format_and_raise words it."""

    def __init__(self, exc, msg, full_key="", object_type="dict", formatted=True):
        Exception.__init__(self, msg)
        self.exc, self.msg, self.full_key, self.object_type = exc, msg, full_key, object_type
        self.formatted = formatted

    def text(self):
        if not self.formatted:
            return self.msg
        return "{}\n    full_key: {}\n    object_type={}".format(self.msg, self.full_key, self.object_type)


class _Raw(Exception):
    """An error raised while resolving one interpolation (not yet formatted)."""

    def __init__(self, exc, msg):
        Exception.__init__(self, msg)
        self.exc, self.msg = exc, msg


def full_key(path):
    """BaseContainer._get_full_key: dict keys joined with '.', list indices in []."""
    out = ""
    for k in path:
        if isinstance(k, int):
            out += "[{}]".format(k)
        else:
            out += ("." if out else "") + str(k)
    return out


def _split_key(key):
    """omegaconf _utils.split_key: 'a.b[0].c' -> ['a', 'b', '0', 'c']."""
    parts = []
    for piece in re.findall(r"\[([^\]]*)\]|([^.\[]+)|\.(?=\.|$)", key):
        parts.append(piece[0] if piece[0] != "" else piece[1])
    return [p for p in parts if p != ""] if key else []


class Resolver:
    """OmegaConf.to_container(cfg, resolve=True) over plain dicts and lists:
    every `${...}` in document order; node interpolations keep the target's
    type, string interpolations concatenate str() of the values."""

    def __init__(self, root, hydra_runtime=None, clock=None):
        self.root = root
        self.hydra_runtime = hydra_runtime or {}
        self.clock = clock or harness.wall_time
        self.stack = []

    # -- access
    def node(self, path):
        cur = self.root
        for k in path:
            cur = cur[k]
        return cur

    def resolve_all(self):
        return self._content(self.root, [])

    def _content(self, value, path):
        if isinstance(value, dict):
            out = {}
            for k in list(value.keys()):
                out[k] = self._content(self._resolved_child(value, k, path), path + [k])
            return out
        if isinstance(value, list):
            return [self._content(self._resolved_child(value, i, path), path + [i]) for i in range(len(value))]
        return value

    def _resolved_child(self, container, key, path):
        value = container[key]
        try:
            return self.value(value, path + [key])
        except _Raw as e:
            raise OmegaError("omegaconf.errors." + e.exc, e.msg, full_key(path + [key]),
                             "list" if isinstance(container, list) else "dict")

    # -- one value
    def value(self, value, path):
        if not isinstance(value, str) or "${" not in value:
            return value
        key_id = tuple(path)
        if key_id in self.stack:
            raise _Raw("InterpolationResolutionError", "Recursive interpolation detected")
        self.stack.append(key_id)
        try:
            return self._interpolate(value, path)
        finally:
            self.stack.pop()

    def _interpolate(self, text, path):
        segments = self._segments(text)
        if segments is None:
            return text
        if len(segments) == 1 and isinstance(segments[0], tuple):
            return self._evaluate(segments[0][1], path)
        out = []
        for seg in segments:
            if isinstance(seg, tuple):
                v = self._evaluate(seg[1], path)
                out.append(str(v))
            else:
                out.append(seg)
        return "".join(out)

    @staticmethod
    def _segments(text):
        """Split a string into literal text and ('interp', body) parts; None
        when it holds no interpolation (escaped \\${ only)."""
        out, buf, i, found = [], "", 0, False
        while i < len(text):
            if text.startswith("\\${", i):
                buf += "${"
                i += 3
                continue
            if text.startswith("${", i):
                depth, j = 1, i + 2
                while j < len(text) and depth:
                    if text.startswith("${", j):
                        depth += 1
                        j += 2
                        continue
                    if text[j] == "}":
                        depth -= 1
                    j += 1
                if depth:
                    harness.emulator_fault("cannot parse the interpolation in {!r} (OmegaConf's grammar error text "
                                           "is not emulated)".format(text))
                if buf:
                    out.append(buf)
                    buf = ""
                out.append(("interp", text[i + 2:j - 1]))
                found = True
                i = j
                continue
            buf += text[i]
            i += 1
        if buf:
            out.append(buf)
        return out if found else None

    def _evaluate(self, body, path):
        body = body.strip()
        colon = self._top_level_colon(body)
        if colon is None:
            key = self._interpolate(body, path) if "${" in body else body
            return self._node(str(key), path)
        name, args = body[:colon].strip(), body[colon + 1:]
        return self._resolver(name, args, path)

    @staticmethod
    def _top_level_colon(body):
        depth = 0
        for i, c in enumerate(body):
            if body.startswith("${", i):
                depth += 1
            elif c == "}":
                depth -= 1
            elif c == ":" and depth == 0:
                return i
        return None

    def _node(self, key, path):
        """BaseContainer._resolve_node_interpolation: relative keys walk up from
        the node's parent; a missing key is InterpolationKeyError."""
        parent = list(path[:-1])
        inter = key
        if key.startswith("."):
            base = parent
            k = key
            while True:
                k = k[1:]
                if not k.startswith("."):
                    break
                if not base:
                    raise _Raw("InterpolationKeyError",
                               "ConfigKeyError while resolving interpolation: Error resolving key '{}'".format(key))
                base = base[:-1]
            inter = k
        else:
            base = []
        parts = _split_key(inter)
        cur_path = list(base)
        cur = self.node(base)
        for i, k in enumerate(parts):
            if i < len(parts) - 1:
                nxt = self._child(cur, k)
                if nxt is _MISSING:
                    raise _Raw("InterpolationKeyError", "Interpolation key '{}' not found".format(inter))
                cur_path.append(self._key(cur, k))
                nxt = self.value(nxt, cur_path)
                if nxt is None:
                    raise _Raw("InterpolationKeyError", "Interpolation key '{}' not found".format(inter))
                if not isinstance(nxt, (dict, list)):
                    raise _Raw("InterpolationResolutionError",
                               "ConfigTypeError raised while resolving interpolation: Error trying to access {}: node "
                               "`{}` is not a container and thus cannot contain `{}`".format(
                                   inter, ".".join(parts[:i + 1]), parts[i + 1]))
                cur = nxt
            else:
                target = self._child(cur, k)
                if target is _MISSING:
                    raise _Raw("InterpolationKeyError", "Interpolation key '{}' not found".format(inter))
                target_path = cur_path + [self._key(cur, k)]
                if path[:len(target_path)] == target_path and len(target_path) < len(path):
                    raise _Raw("InterpolationResolutionError", "Interpolation to parent node detected")
                if target == "???":
                    harness.emulator_fault("an interpolation to a missing value ('???') is not emulated")
                resolved = self.value(target, target_path)
                if isinstance(resolved, (dict, list)):
                    return self._content(resolved, target_path)
                return resolved
        return self.node(base)

    @staticmethod
    def _key(container, k):
        return int(k) if isinstance(container, list) else k

    @staticmethod
    def _child(container, k):
        if isinstance(container, dict):
            if k in container:
                return container[k]
            for key in container:
                if str(key) == k:
                    return container[key]
            return _MISSING
        if isinstance(container, list):
            try:
                return container[int(k)]
            except (ValueError, IndexError):
                return _MISSING
        return _MISSING

    def _resolver(self, name, args, path):
        arg_list = [a.strip() for a in self._split_args(args)]
        arg_list = [self._interpolate(a, path) if "${" in a else _strip_quotes(a) for a in arg_list]
        if name == "oc.env":
            var = arg_list[0] if arg_list else ""
            if var in os.environ:
                return os.environ[var]
            if len(arg_list) > 1:
                default = arg_list[1]
                return None if default == "null" else default
            raise _Raw("InterpolationResolutionError", "KeyError raised while resolving interpolation: "
                       "\"Environment variable '{}' not found\"".format(var))
        if name == "now":
            return time.strftime(arg_list[0] if arg_list else "", time.localtime(self.clock()))
        if name == "hydra":
            key = arg_list[0] if arg_list else ""
            if key in self.hydra_runtime:
                return self.hydra_runtime[key]
            harness.emulator_fault("${{hydra:{}}} is not emulated".format(key))
        if name in ("oc.create", "oc.decode", "oc.deprecated", "oc.select", "oc.dict.keys", "oc.dict.values",
                    "python_version"):
            harness.emulator_fault("the resolver {} is not emulated".format(name))
        raise _Raw("UnsupportedInterpolationType", "Unsupported interpolation type {}".format(name))

    @staticmethod
    def _split_args(args):
        out, buf, depth, quote = [], "", 0, None
        for i, c in enumerate(args):
            if quote:
                buf += c
                if c == quote:
                    quote = None
                continue
            if c in "'\"":
                quote = c
            elif args.startswith("${", i):
                depth += 1
            elif c == "}":
                depth -= 1
            elif c == "," and depth == 0:
                out.append(buf)
                buf = ""
                continue
            buf += c
        if buf or out:
            out.append(buf)
        return out


_MISSING = object()


def _strip_quotes(s):
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        return s[1:-1]
    return s


# ---------------------------------------------------------------- pydantic (the adapter's schema, pydantic v2 lax mode)


class VErr:
    def __init__(self, loc, typ, msg, value):
        self.loc, self.typ, self.msg, self.value = list(loc), typ, msg, value


class _Invalid(Exception):
    def __init__(self, errors):
        Exception.__init__(self, "invalid")
        self.errors = errors


class _Other(Exception):
    """A non-validation exception from a validator (re-raised by pydantic as is)."""

    def __init__(self, message):
        Exception.__init__(self, message)
        self.message = message


REQUIRED = object()


def _f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def _num_text(v):
    """pydantic-core renders constraint values as Python does."""
    return repr(v) if isinstance(v, float) else str(v)


def v_int(x, loc, ge=None):
    if isinstance(x, bool):
        val = int(x)
    elif isinstance(x, int):
        val = x
    elif isinstance(x, float):
        if math.isinf(x) or math.isnan(x):
            raise _Invalid([VErr(loc, "finite_number", "Input should be a finite number", x)])
        if not x.is_integer():
            raise _Invalid([VErr(loc, "int_from_float",
                                 "Input should be a valid integer, got a number with a fractional part", x)])
        val = int(x)
    elif isinstance(x, str):
        s = x.strip()
        if re.fullmatch(r"[+-]?\d+", s):
            val = int(s)
        else:
            raise _Invalid([VErr(loc, "int_parsing",
                                 "Input should be a valid integer, unable to parse string as an integer", x)])
    else:
        raise _Invalid([VErr(loc, "int_type", "Input should be a valid integer", x)])
    if ge is not None and val < ge:
        raise _Invalid([VErr(loc, "greater_than_equal", "Input should be greater than or equal to {}".format(
            _num_text(ge)), x)])
    return val


def v_float(x, loc, ge=None):
    if isinstance(x, bool):
        val = float(x)
    elif isinstance(x, (int, float)):
        val = float(x)
    elif isinstance(x, str):
        try:
            val = float(x.strip())
        except ValueError:
            raise _Invalid([VErr(loc, "float_parsing", "Input should be a valid number, unable to parse string as a "
                                                       "number", x)])
    else:
        raise _Invalid([VErr(loc, "float_type", "Input should be a valid number", x)])
    if ge is not None and val < ge:
        raise _Invalid([VErr(loc, "greater_than_equal", "Input should be greater than or equal to {}".format(
            _num_text(ge)), x)])
    return val


_TRUE = {"1", "on", "t", "true", "y", "yes"}
_FALSE = {"0", "off", "f", "false", "n", "no"}


def v_bool(x, loc):
    if isinstance(x, bool):
        return x
    if isinstance(x, (int, float)):
        if x == 1:
            return True
        if x == 0:
            return False
        raise _Invalid([VErr(loc, "bool_parsing", "Input should be a valid boolean, unable to interpret input", x)])
    if isinstance(x, str):
        s = x.strip().lower()
        if s in _TRUE:
            return True
        if s in _FALSE:
            return False
        raise _Invalid([VErr(loc, "bool_parsing", "Input should be a valid boolean, unable to interpret input", x)])
    raise _Invalid([VErr(loc, "bool_type", "Input should be a valid boolean", x)])


def v_str(x, loc):
    if isinstance(x, str):
        return x
    raise _Invalid([VErr(loc, "string_type", "Input should be a valid string", x)])


def _lit_repr(values):
    reprs = [repr(v) for v in values]
    if len(reprs) == 1:
        return reprs[0]
    return "{} or {}".format(", ".join(reprs[:-1]), reprs[-1])


class T:
    """A field type: kind and parameters."""

    def __init__(self, kind, *args, ge=None, tag=None):
        self.kind, self.args, self.ge, self.tag = kind, args, ge, tag

    def validate(self, x, loc):
        k = self.kind
        if k == "int":
            return v_int(x, loc, self.ge)
        if k == "float":
            return v_float(x, loc, self.ge)
        if k == "bool":
            return v_bool(x, loc)
        if k == "str":
            return v_str(x, loc)
        if k == "any":
            return x
        if k == "lit":
            for v in self.args:
                if x == v and type(x) is type(v):
                    return x
            raise _Invalid([VErr(loc, "literal_error", "Input should be {}".format(_lit_repr(self.args)), x)])
        if k == "opt":
            if x is None:
                return None
            return self.args[0].validate(x, loc)
        if k == "list":
            if not isinstance(x, (list, tuple)):
                raise _Invalid([VErr(loc, "list_type", "Input should be a valid list", x)])
            item = self.args[0] if self.args else None
            out, errs = [], []
            for i, v in enumerate(x):
                try:
                    out.append(item.validate(v, loc + [i]) if item else v)
                except _Invalid as e:
                    errs.extend(e.errors)
            if errs:
                raise _Invalid(errs)
            return out
        if k == "dict":
            if not isinstance(x, dict):
                raise _Invalid([VErr(loc, "dict_type", "Input should be a valid dictionary", x)])
            return dict(x)
        if k == "union":
            return self._union(x, loc)
        if k == "model":
            return self.args[0].validate(x, loc)
        raise AssertionError(k)

    def _strict(self, x):
        k = self.kind
        if k == "str":
            return isinstance(x, str)
        if k == "int":
            return isinstance(x, int) and not isinstance(x, bool)
        if k == "float":
            return isinstance(x, float) or (isinstance(x, int) and not isinstance(x, bool))
        if k == "list":
            return isinstance(x, list) and all(self.args[0]._strict(v) for v in x) if self.args else isinstance(x, list)
        return False

    def _exact(self, x):
        k = self.kind
        return (k == "str" and type(x) is str) or (k == "int" and type(x) is int) or (k == "float" and type(x) is float)

    def _union(self, x, loc):
        """pydantic's smart-mode union: an exact type match first, then the
        first strict match, then the first lax match; else one error per member
        (their locations tagged by the member)."""
        members = self.args
        for m in members:
            if m._exact(x):
                return m.validate(x, loc)
        for m in members:
            if m._strict(x):
                return m.validate(x, loc)
        errs = []
        for m in members:
            try:
                out = m.validate(x, loc + [m.tag])
            except _Invalid as e:
                errs.extend(e.errors)
                continue
            return out
        raise _Invalid(errs)


class Field:
    def __init__(self, name, typ, default=REQUIRED):
        self.name, self.typ, self.default = name, typ, default


class Model:
    """A pydantic BaseModel: fields in declaration order, the `extra` policy,
    mode='before' and mode='after' model validators."""

    def __init__(self, name, fields, extra="ignore", before=None, after=None):
        self.name, self.fields, self.extra, self.before, self.after = name, fields, extra, before, after

    def with_extra(self, extra, name=None):
        return Model(name or self.name, self.fields, extra, self.before, self.after)

    def defaults(self):
        out = {}
        for f in self.fields:
            d = f.default
            if callable(d):
                d = d()
            out[f.name] = d
        return out

    def validate(self, x, loc):
        if not isinstance(x, dict):
            raise _Invalid([VErr(loc, "model_type", "Input should be a valid dictionary or instance of {}".format(
                self.name), x)])
        if self.before:
            try:
                self.before(x)
            except ValueError as e:
                raise _Invalid([VErr(loc, "value_error", "Value error, {}".format(e), x)])
        out, errs = {}, []
        for f in self.fields:
            if f.name in x:
                try:
                    out[f.name] = f.typ.validate(x[f.name], loc + [f.name])
                except _Invalid as e:
                    errs.extend(e.errors)
            elif f.default is REQUIRED:
                errs.append(VErr(loc + [f.name], "missing", "Field required", x))
            else:
                d = f.default
                out[f.name] = d() if callable(d) else d
        names = {f.name for f in self.fields}
        extras = [(k, v) for k, v in x.items() if k not in names]
        if self.extra == "forbid":
            for k, v in extras:
                errs.append(VErr(loc + [k], "extra_forbidden", "Extra inputs are not permitted", v))
        elif self.extra == "allow":
            for k, v in extras:
                out[k] = v
        if errs:
            raise _Invalid(errs)
        if self.after:
            try:
                self.after(out)
            except ValueError as e:
                raise _Invalid([VErr(loc, "value_error", "Value error, {}".format(e), x)])
        out["__extra__"] = [k for k, _ in extras] if self.extra == "allow" else []
        return out


def _dump(value):
    """model_dump: nested models as dicts, extras after the fields."""
    if isinstance(value, dict):
        return {k: _dump(v) for k, v in value.items() if k != "__extra__"}
    if isinstance(value, list):
        return [_dump(v) for v in value]
    return value


def _truncate(text, limit=50):
    """pydantic-core's write_truncated_to_limited_bytes."""
    if len(text) > limit:
        mid = (limit + 1) // 2
        return text[:mid] + "..." + text[len(text) - (mid - 1):]
    return text


def _loc_text(item):
    s = str(item)
    return "`{}`".format(s) if isinstance(item, str) and "." in s else s


def validation_error_text(title, errors):
    """str(ValidationError) as pydantic-core 2.x prints it."""
    lines = ["{} validation error{} for {}".format(len(errors), "" if len(errors) == 1 else "s", title)]
    for e in errors:
        if e.loc:
            lines.append(".".join(_loc_text(i) for i in e.loc))
        lines.append("  {} [type={}, input_value={}, input_type={}]".format(
            e.msg, e.typ, _truncate(repr(e.value)), type(e.value).__qualname__))
        lines.append("    For further information visit https://errors.pydantic.dev/{}/v/{}".format(
            PYDANTIC_URL_VERSION, e.typ))
    return "\n".join(lines)


def _pow2(n):
    return n > 0 and n & (n - 1) == 0


class Schema:
    """hyperpod_nemo_adapter/conf/config_schemas.py @ 0f91fdd, against this
    process's environment (SLURM_JOB_ID, LOCAL_WORLD_SIZE, WORLD_SIZE)."""

    def __init__(self, out, use_smp_model, extra):
        self.out = out
        self.smp = bool(use_smp_model)
        self.extra = extra
        self.title = {("forbid", True): "ConfigWithSMPForbid", ("forbid", False): "ConfigForbid",
                      ("allow", True): "ConfigWithSMPAllow", ("allow", False): "ConfigAllow"}[(extra, self.smp)]
        self.root = self._build()

    def _build(self):
        I_ = lambda ge=None, tag=None: T("int", ge=ge, tag=tag)  # noqa: E731
        F_ = lambda ge=None, tag=None: T("float", ge=ge, tag=tag)  # noqa: E731
        B_ = T("bool")
        S_ = lambda tag=None: T("str", tag=tag)  # noqa: E731
        opt = lambda t: T("opt", t)  # noqa: E731
        lit = lambda *v: T("lit", *v)  # noqa: E731

        sched = Model("BaseModelOptimizerScheduler", [
            Field("name", lit("CosineAnnealing"), "CosineAnnealing"),
            Field("warmup_steps", I_(0), 500), Field("constant_steps", I_(0), 0), Field("min_lr", F_(0), 2e-5)])
        optim = Model("BaseModelOptimizerConfig", [
            Field("name", lit("adamw"), "adamw"), Field("lr", F_(0), 2e-4), Field("weight_decay", F_(0), 0.01),
            Field("betas", T("list", F_()), lambda: [0.9, 0.98]),
            Field("sched", T("model", sched), sched.defaults)])
        rope = Model("BaseRopeScalingConfig", [
            Field("rope_type", lit("llama3", None), None), Field("factor", F_(), 8.0),
            Field("high_freq_factor", F_(), 4.0), Field("low_freq_factor", F_(), 1.0),
            Field("original_max_position_embeddings", I_(), 8192)])
        data = Model("BaseModelDataConfig", [
            Field("train_dir", opt(T("union", S_("str"), T("list", S_(), tag="list[str]"))), None),
            Field("val_dir", opt(T("union", S_("str"), T("list", S_(), tag="list[str]"))), None),
            Field("dataset_type", lit("hf", "synthetic"), "hf"), Field("use_synthetic_data", B_, False)])
        nsys = Model("BaseModelNsysProfileConfig", [
            Field("enabled", B_, False), Field("start_step", I_(), 10), Field("end_step", I_(), 10),
            Field("ranks", T("list"), lambda: [0]), Field("gen_shape", B_, False)])
        affinity = Model("BaseGPUAffinityConfig", [Field("enabled", B_, True)])
        viz = Model("BaseVizTracerConfig", [
            Field("enabled", B_, False), Field("ranks", T("list"), lambda: [0]), Field("tracer_entries", I_(), 1000000),
            Field("verbose", I_(), 1), Field("max_stack_depth", I_(), -1), Field("ignore_c_function", B_, True),
            Field("ignore_frozen", B_, True), Field("log_func_retval", B_, False), Field("log_func_args", B_, False),
            Field("log_print", B_, False), Field("log_gc", B_, False), Field("log_sparse", B_, False),
            Field("log_async", B_, False), Field("log_audit", opt(T("list", S_())), None),
            Field("pid_suffix", B_, False), Field("file_info", B_, True), Field("register_global", B_, True),
            Field("trace_self", B_, False), Field("min_duration", F_(), 200.0), Field("minimize_memory", B_, False),
            Field("dump_raw", B_, False), Field("sanitize_function_name", B_, False),
            Field("output_file", opt(S_()), None)])
        peft = Model("BaseModelPeftConfig", [
            Field("peft_type", opt(lit("lora", "qlora_4bit")), None), Field("rank", I_(1), 32),
            Field("alpha", F_(0), 16.0), Field("dropout", F_(0), 0.1), Field("target_modules", opt(T("list", S_())),
                                                                             None)])
        dpo = Model("BaseModelDPOConfig", [
            Field("enabled", B_, False), Field("beta", F_(0), 0.1), Field("label_smoothing", F_(0), 0.0)])
        oi = lambda: opt(I_(1))  # noqa: E731
        model_fields = [
            Field("model_type", S_(), "llama_v3"),
            Field("train_batch_size", I_(1), 2), Field("val_batch_size", I_(1), 1), Field("fsdp", B_, True),
            Field("moe", B_, False), Field("activation_checkpointing", B_, True),
            Field("activation_loading_horizon", I_(1), 2), Field("delayed_param", B_, True),
            Field("offload_activations", B_, False), Field("seed", I_(), 12345), Field("grad_clip", F_(0), 1.0),
            Field("sharding_strategy", lit("no_shard", "shard_grad_op", "hybrid_shard", "_hybrid_shard_zero2",
                                           "full_shard"), "hybrid_shard"),
            Field("forward_prefetch", B_, True), Field("shard_degree", oi(), None),
            Field("backward_fetch_policy", lit("backward_post", "backward_pre"), "backward_pre"),
            Field("auto_wrap_policy", lit("size_based_auto_wrap_policy", "transformer_auto_wrap_policy"),
                  "transformer_auto_wrap_policy"),
            Field("limit_all_gathers", B_, True), Field("use_orig_param", B_, True),
            Field("context_parallel_degree", I_(1), 1), Field("tensor_model_parallel_degree", I_(1), 1),
            Field("expert_model_parallel_degree", I_(1), 1),
            Field("max_context_width", I_(1), 2048), Field("max_position_embeddings", oi(), None),
            Field("num_hidden_layers", oi(), None), Field("hidden_size", oi(), None),
            Field("num_attention_heads", oi(), None), Field("intermediate_size", oi(), None),
            Field("initializer_range", opt(F_(0)), None), Field("layernorm_epsilon", opt(F_(0)), None),
            Field("vocab_size", oi(), None), Field("num_key_value_heads", oi(), None),
            Field("use_flash_attention", opt(B_), None), Field("sliding_window", oi(), None),
            Field("use_sliding_window", opt(B_), None), Field("max_window_layers", oi(), None),
            Field("rms_norm_eps", opt(F_(0)), None), Field("rope_theta", F_(), 10000.0),
            Field("multi_modal", B_, False), Field("tie_word_embeddings", B_, False),
            Field("num_experts_per_tok", oi(), None), Field("num_local_experts", oi(), None),
            Field("moe_load_balancing", lit("sinkhorn", "balanced", "aux_loss", "none"), "sinkhorn"),
            Field("global_token_shuffle", opt(B_), None), Field("moe_all_to_all_dispatcher", opt(B_), None),
            Field("fp8", B_, True), Field("fp8_amax_history_len", I_(1), 1024),
            Field("fp8_amax_compute_algo", lit("max", "most_recent"), "max"),
            Field("do_finetune", B_, True), Field("hf_model_name_or_path", opt(S_()), None),
            Field("hf_access_token", opt(S_()), None),
            Field("precision", opt(T("union", S_("str"), I_(tag="int"))), None),
            Field("lr_decay_iters", I_(1), 47683), Field("log_reduced_training_loss", B_, True),
            Field("optim", T("model", optim), optim.defaults),
            Field("data", T("model", data), lambda: dict(data.defaults(), use_synthetic_data=True)),
            Field("gpu_affinity", T("model", affinity), affinity.defaults),
            Field("nsys_profile", T("model", nsys), nsys.defaults),
            Field("viztracer", T("model", viz), viz.defaults),
            Field("peft", T("model", peft), peft.defaults),
            Field("dpo", T("model", dpo), dpo.defaults),
            Field("rope_scaling", T("model", rope), rope.defaults),
            Field("nvte_attn_backend", opt(lit("fused", "flash")), None)]
        model = Model("DynamicModelConfig", model_fields, extra=self.extra, before=self._model_before,
                      after=self._model_after)
        trainer = Model("BaseTrainerConfig", [
            Field("devices", T("union", S_("str"), I_(tag="int")), "auto"), Field("num_nodes", I_(1), 1),
            Field("accelerator", lit("gpu", "auto"), "gpu"),
            Field("precision", T("union", S_("str"), I_(tag="int")), "bf16"),
            Field("max_steps", I_(1), 50), Field("log_every_n_steps", I_(0), 10),
            Field("val_check_interval", T("union", F_(tag="float"), I_(tag="int")), -1),
            Field("limit_val_batches", T("union", F_(tag="float"), I_(tag="int"), ge=0), 0.0)],
            after=self._trainer_after)
        ckpt_params = Model("BaseCheckpointCallbackConfig", [
            Field("save_top_k", I_(0), 10), Field("every_n_train_steps", I_(0), 0), Field("monitor", S_(), "step"),
            Field("mode", S_(), "max"), Field("save_last", B_, True)])
        auto_ckpt = Model("BaseAutoCheckpointConfig", [
            Field("enabled", opt(B_), False), Field("warmup_steps", I_(3), 12),
            Field("drop_n_warmup_steps", I_(2), 3)], after=self._auto_after)
        export = Model("BaseExportFullModelConfig", [
            Field("every_n_train_steps", I_(0), 0), Field("save_last", B_, True),
            Field("final_export_dir", S_(), None)])
        exp = Model("BaseExpManager", [
            Field("exp_dir", S_(), "/fsx/exp/"), Field("name", S_(), "my_experiment"),
            Field("explicit_log_dir", opt(S_()), None), Field("create_tensorboard_logger", B_, False),
            Field("summary_writer_kwargs", T("dict"), dict), Field("create_mlflow_logger", B_, False),
            Field("mlflow_logger_kwargs", T("dict"), dict), Field("create_wandb_logger", B_, False),
            Field("wandb_logger_kwargs", T("dict"), dict), Field("create_checkpoint_callback", B_, True),
            Field("checkpoint_callback_params", T("model", ckpt_params), ckpt_params.defaults),
            Field("export_full_model", T("model", export), export.defaults),
            Field("checkpoint_dir", opt(S_()), None), Field("resume_from_checkpoint", opt(S_()), None),
            Field("auto_checkpoint", T("model", auto_ckpt), auto_ckpt.defaults)])
        run = Model("BaseRunConfig", [
            Field("name", S_(), "llama-8b"), Field("results_dir", opt(S_()), None),
            Field("time_limit", opt(S_()), None)])
        root_extra = "forbid" if "SLURM_JOB_ID" in os.environ else "allow"
        return Model(self.title, [
            Field("name", T("list", S_()), lambda: ["hf_llama_8b"]), Field("use_smp_model", B_, True),
            Field("distributed_backend", lit("nccl")), Field("log_perf_metrics", B_, False),
            Field("model", T("model", model)), Field("trainer", T("model", trainer)),
            Field("exp_manager", opt(T("model", exp)), None), Field("run", opt(T("model", run)), None)],
            extra=root_extra, before=self._root_before, after=self._root_after)

    # -- validators (config_schemas.py)
    @staticmethod
    def _root_before(data):
        model = data.get("model")
        if model is None:
            raise ValueError("Field 'model' is required")
        if not hasattr(model, "get"):
            raise _Other("'{}' object has no attribute 'get'".format(type(model).__name__))
        if model.get("precision") is None:
            trainer = data.get("trainer", {})
            if not hasattr(trainer, "get"):
                raise _Other("'{}' object has no attribute 'get'".format(type(trainer).__name__))
            model["precision"] = trainer.get("precision")

    @staticmethod
    def _model_before(data):
        if data.get("max_position_embeddings") is None:
            data["max_position_embeddings"] = data.get("max_context_width")
        dc = data.get("data", None)
        multi_modal = data.get("multi_modal")
        if multi_modal and data.get("model_type") not in ["llama_v3", "llama_v4"]:
            raise ValueError("'multi_modal' only supported with 'model_type' llama_v3 and llama_v4")
        if dc and not hasattr(dc, "get"):
            raise _Other("'{}' object has no attribute 'get'".format(type(dc).__name__))
        if dc and not dc.get("use_synthetic_data", None):
            if not dc.get("train_dir", None) and not multi_modal:
                raise ValueError("'train_dir' is required since model is not using Synthetic or multi-modal Data")
        if dc and dc.get("use_synthetic_data", None) and multi_modal:
            raise ValueError("'use_synthetic_data' not supported with 'multi_modal' training")

    def _model_after(self, m):
        msg = "'{}' is suggested to be a power of 2. Current value is {}"
        for f in ("max_context_width", "hidden_size", "num_attention_heads", "num_key_value_heads"):
            v = m.get(f)
            if v is not None and not _pow2(v):
                self.out.smp("WARNING", msg.format(f, v))
        if m["do_finetune"] and m["hf_model_name_or_path"] is None:
            raise ValueError("Must provide 'hf_model_name_or_path' or set 'do_finetune' to False")
        if not self.smp and (m["tensor_model_parallel_degree"] > 1 or m["expert_model_parallel_degree"] > 1):
            raise ValueError("Non SMP Model implementations do not support tensor_model_parallel_degree or "
                             "expert_model_parallel_degree > 1")
        if not m["activation_checkpointing"] and m["activation_loading_horizon"] > 1:
            self.out.smp("WARNING", "Note: activation_loading_horizon will not be activated since "
                                    "activation_checkpointing is disabled")

    @staticmethod
    def _trainer_after(t):
        if "LOCAL_WORLD_SIZE" in os.environ and "WORLD_SIZE" in os.environ:
            devices = int(os.environ["LOCAL_WORLD_SIZE"])
            nodes = int(os.environ["WORLD_SIZE"]) // devices
            if isinstance(t["devices"], int) and t["devices"] != devices:
                raise ValueError("'devices' ({}) does not equal actual number of devices ({})".format(
                    t["devices"], devices))
            if t["num_nodes"] != nodes:
                raise ValueError("'num_nodes' ({}) does not equal actual number of nodes ({})".format(
                    t["num_nodes"], nodes))

    @staticmethod
    def _auto_after(a):
        if a["warmup_steps"] < a["drop_n_warmup_steps"]:
            raise ValueError("warmup_steps < drop_n_warmup_steps ({} < {})".format(
                a["warmup_steps"], a["drop_n_warmup_steps"]))

    @staticmethod
    def _root_after(c):
        m, t = c["model"], c["trainer"]
        sd = m.get("shard_degree") or 1
        tp = m.get("tensor_model_parallel_degree") or 1
        ep = m.get("expert_model_parallel_degree") or 1
        cp = m.get("context_parallel_degree") or 1
        gpn = int(os.environ.get("LOCAL_WORLD_SIZE", 8))
        world = (t.get("num_nodes") or 1) * gpn
        if world % (sd * tp * ep) > 0:
            raise ValueError("Please provide valid sizes: world size ({}) is not a product of (shard_degree, "
                             "tensor_model_parallel_degree, expert_model_parallel_degree) ({}, {}, {}).".format(
                                 world, sd, tp, ep))
        if cp > 1 and cp > sd:
            raise ValueError("Please provide valid sizes: context parallel degree ({}) shouldn't be greater than "
                             "shard degree ({})".format(cp, sd))

    def validate(self, config):
        """-> (dump, top-level extras) or raises _Invalid / _Other."""
        out = self.root.validate(config, [])
        extras = out.get("__extra__", [])
        return _dump(out), extras


# ---------------------------------------------------------------- Hydra 1.3.2: command line


def hydra_parser(prog):
    """hydra/_internal/utils.py get_args_parser."""
    p = argparse.ArgumentParser(prog=prog, add_help=False, description="Hydra")
    p.add_argument("--help", "-h", action="store_true", help="Application's help")
    p.add_argument("--hydra-help", action="store_true", help="Hydra's help")
    p.add_argument("--version", action="version", help="Show Hydra's version and exit",
                   version="Hydra {}".format(HYDRA_VERSION))
    p.add_argument("overrides", nargs="*",
                   help="Any key=value arguments to override config values (use dots for.nested=overrides)")
    p.add_argument("--cfg", "-c", choices=["job", "hydra", "all"], help="Show config instead of running [job|hydra|all]")
    p.add_argument("--resolve", action="store_true",
                   help="Used in conjunction with --cfg, resolve config interpolations before printing.")
    p.add_argument("--package", "-p", help="Config package to show")
    p.add_argument("--run", "-r", action="store_true", help="Run a job")
    p.add_argument("--multirun", "-m", action="store_true",
                   help="Run multiple jobs with the configured launcher and sweeper")
    p.add_argument("--shell-completion", "-sc", action="store_true", help="Install or Uninstall shell completion")
    p.add_argument("--config-path", "-cp", help="Overrides the config_path specified in hydra.main(). "
                   "The config_path is absolute or relative to the Python file declaring @hydra.main()")
    p.add_argument("--config-name", "-cn", help="Overrides the config_name specified in hydra.main()")
    p.add_argument("--config-dir", "-cd", help="Adds an additional config dir to the config search path")
    p.add_argument("--experimental-rerun", help="Rerun a job from a previous config pickle")
    info = ["all", "config", "defaults", "defaults-tree", "plugins", "searchpath"]
    p.add_argument("--info", "-i", const="all", nargs="?", action="store", choices=info,
                   help="Print Hydra information [{}]".format("|".join(info)))
    return p


def strip_mp_parameters(args):
    """hyperpod_nemo_adapter/utils/sm_utils.py _strip_mp_params_helper."""
    if "--mp_parameters" not in args:
        return args
    i = args.index("--mp_parameters")
    for j in range(i + 1, len(args)):
        if args[j].startswith("-"):
            return args[:i] + args[j:]
    return args[:i]


class HydraFail(Exception):
    """A CompactHydraException (message only, plus its OmegaConf cause) or any
    other exception reported by run_and_report."""

    def __init__(self, exc, message, cause=None, frames=(), cause_frames=()):
        Exception.__init__(self, message)
        self.exc, self.message, self.cause = exc, message, cause
        self.frames, self.cause_frames = list(frames), list(cause_frames)


# -- the override grammar (the cases the emulator reproduces)

_URL = "\nSee https://hydra.cc/docs/1.2/advanced/override_grammar/basic for details"
_KEY_CHARS = re.compile(r"[A-Za-z0-9_$\-./@:]")
_VALUE_CHARS = re.compile(r"[A-Za-z0-9_/\-\\+.$%*@?|: \t]")
_INT = re.compile(r"[+-]?(0|[1-9](_?[0-9])*)")
_FLOAT = re.compile(r"[+-]?((((0|[1-9](_?[0-9])*)?\.[0-9](_?[0-9])*)|((0|[1-9](_?[0-9])*)\.))"
                    r"([eE][+-]?[0-9](_?[0-9])*)?|(0|[1-9](_?[0-9])*)[eE][+-]?[0-9](_?[0-9])*|[Ii][Nn][Ff]|[Nn][Aa][Nn])")
_SWEEPS = {"choice", "range", "interval", "glob"}


class Override:
    def __init__(self, line, kind, key, value, has_value):
        self.line, self.kind, self.key, self.value, self.has_value = line, kind, key, value, has_value

    @property
    def is_hydra(self):
        return self.key == "hydra" or self.key.startswith("hydra.")


_CL = HYDRA + "/_internal/config_loader_impl.py"
_PARSE_FRAMES = [
    _frame(_CL, 244, "_load_configuration_impl",
           "        parsed_overrides, caching_repo = self._parse_overrides_and_create_caching_repo(",
           "self._parse_overrides_and_create_caching_repo(", multiline=True),
    _frame(_CL, 228, "_parse_overrides_and_create_caching_repo",
           "        parsed_overrides = parser.parse_overrides(overrides=overrides)",
           "parser.parse_overrides(overrides=overrides)"),
    _frame(HYDRA + "/core/override_parser/overrides_parser.py", 96, "parse_overrides",
           "                raise OverrideParseException("),
]


def _apply_frames(line, src):
    return [_frame(_CL, 276, "_load_configuration_impl",
                   "        ConfigLoaderImpl._apply_overrides_to_config(config_overrides, cfg)"),
            _frame(_CL, line, "_apply_overrides_to_config", src)]


def _lexer_error(line, index):
    prefix = "LexerNoViableAltException: "
    start = len(prefix) + index + 1
    return HydraFail("hydra.errors.OverrideParseException", "{}{}\n{}{}".format(prefix, line, "^".rjust(start), _URL),
                     frames=_PARSE_FRAMES)


def parse_override(line):
    i = 0
    kind = "set"
    if line.startswith("~"):
        kind, i = "delete", 1
    elif line.startswith("++"):
        kind, i = "force_add", 2
    elif line.startswith("+"):
        kind, i = "add", 1
    eq = line.find("=", i)
    key = line[i:] if eq < 0 else line[i:eq]
    for j, c in enumerate(key):
        if not _KEY_CHARS.match(c):
            raise _lexer_error(line, i + j)
    if eq < 0 and kind != "delete":
        raise HydraFail("hydra.errors.OverrideParseException",
                        "Error parsing override '{}'\nmissing EQUAL at '<EOF>'{}".format(line, _URL),
                        frames=_PARSE_FRAMES)
    if key == "" or not re.fullmatch(r"[A-Za-z_$][\w$\-]*(\.([A-Za-z_$][\w$\-]*|0|[1-9][0-9]*))*(@[\w$.\-]*)?", key):
        harness.emulator_fault("the override {!r}: this case of Hydra's override grammar is not emulated".format(line))
    if eq < 0:
        return Override(line, kind, key, None, False)
    raw = line[eq + 1:].lstrip(" \t")
    value, sweep = _parse_value(line, eq + 1 + (len(line) - eq - 1 - len(raw)), raw)
    ov = Override(line, kind, key, value, True)
    ov.sweep = sweep
    return ov


def _parse_value(line, offset, raw):
    """-> (value, sweep kind or None)."""
    if raw == "":
        return "", None
    parts = _split_top(raw, ",")
    if len(parts) > 1:
        for p in parts:
            _element(line, offset, p)
        return raw, "simple"
    m = re.fullmatch(r"([A-Za-z_][\w\-]*)\s*\((.*)\)\s*", raw, re.S)
    if m:
        name = m.group(1)
        if name in _SWEEPS:
            return raw, "function"
        if name in ("int", "float", "str", "bool"):
            inner = _element(line, offset, m.group(2).strip())
            try:
                return {"int": int, "float": float, "str": str}[name](inner) if name != "bool" else (
                    inner if isinstance(inner, bool) else str(inner).lower() == "true"), None
            except (TypeError, ValueError):
                harness.emulator_fault("the cast {!r} is not emulated".format(raw))
        harness.emulator_fault("the grammar function {}() is not emulated".format(name))
    return _element(line, offset, raw), None


def _split_top(text, sep):
    out, buf, depth, quote, i = [], "", 0, None, 0
    while i < len(text):
        c = text[i]
        if quote:
            buf += c
            if c == "\\" and i + 1 < len(text):
                buf += text[i + 1]
                i += 2
                continue
            if c == quote:
                quote = None
            i += 1
            continue
        if c == "\\" and i + 1 < len(text):
            buf += text[i:i + 2]
            i += 2
            continue
        if c in "'\"":
            quote = c
        elif c in "[{(" or text.startswith("${", i):
            depth += 1
            if text.startswith("${", i):
                buf += "$"
                i += 1
                c = "{"
        elif c in "]})":
            depth -= 1
        elif c == sep and depth == 0:
            out.append(buf)
            buf = ""
            i += 1
            continue
        buf += c
        i += 1
    out.append(buf)
    return out


def _element(line, offset, text):
    t = text.strip(" \t")
    if t.startswith("[") and t.endswith("]"):
        inner = t[1:-1].strip()
        return [] if inner == "" else [_element(line, offset, p) for p in _split_top(inner, ",")]
    if t.startswith("{") and t.endswith("}"):
        inner = t[1:-1].strip()
        out = {}
        if inner:
            for p in _split_top(inner, ","):
                k, sep, v = p.partition(":")
                if not sep:
                    harness.emulator_fault("the override value {!r} is not emulated".format(text))
                out[k.strip()] = _element(line, offset, v)
        return out
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
        return t[1:-1].replace("\\" + t[0], t[0]).replace("\\\\", "\\")
    # a primitive: check its characters as the lexer does
    i = 0
    start = line.find(text, offset) if text else offset
    while i < len(t):
        if t.startswith("${", i):
            j = t.find("}", i)
            if j < 0:
                break
            i = j + 1
            continue
        if t[i] == "\\" and i + 1 < len(t):
            i += 2
            continue
        if not _VALUE_CHARS.match(t[i]):
            lead = len(text) - len(text.lstrip(" \t"))
            raise _lexer_error(line, max(0, start) + lead + i)
        i += 1
    if re.fullmatch(r"[Nn][Uu][Ll][Ll]", t):
        return None
    if re.fullmatch(r"[Tt][Rr][Uu][Ee]", t):
        return True
    if re.fullmatch(r"[Ff][Aa][Ll][Ss][Ee]", t):
        return False
    if _INT.fullmatch(t):
        return int(t.replace("_", ""))
    if _FLOAT.fullmatch(t):
        return float(t.replace("_", ""))
    return re.sub(r"\\(.)", r"\1", t)


def _select(cfg, key):
    cur = cfg
    for k in key.split("."):
        if isinstance(cur, dict) and k in cur:
            cur = cur[k]
        elif isinstance(cur, list) and re.fullmatch(r"\d+", k) and int(k) < len(cur):
            cur = cur[int(k)]
        else:
            return None
    return cur


def _struct_error(path, intermediate=False):
    e = OmegaError("omegaconf.errors.ConfigAttributeError" if not intermediate else "omegaconf.errors.ConfigKeyError",
                   "Key '{}' is not in struct".format(path[-1]), full_key(path), "dict")
    e.site = (704, "                    root[key_] = {}") if intermediate else (
        729, "                root.__setattr__(last_key, value)")
    return e


def _update(cfg, key, value, force):
    """OmegaConf.update(cfg, key, value, merge=True[, force_add])."""
    parts = key.split(".")
    root, path = cfg, []
    for k in parts[:-1]:
        if isinstance(root, list):
            harness.emulator_fault("overriding inside a list is not emulated")
        nxt = root.get(k)
        if not isinstance(nxt, (dict, list)):
            if k not in root and not force:
                raise _struct_error(path + [k], intermediate=True)
            root[k] = {}
        root = root[k]
        path.append(k)
    last = parts[-1]
    if isinstance(root, list):
        harness.emulator_fault("overriding inside a list is not emulated")
    if isinstance(value, (dict, list)) and isinstance(root.get(last), (dict, list)):
        if isinstance(value, dict) and isinstance(root[last], dict):
            _merge(root[last], value, path + [last], force)
        else:
            root[last] = value
        return
    if last not in root and not force:
        raise _struct_error(path + [last])
    root[last] = value


def _merge(dest, src, path, force):
    for k, v in src.items():
        if k not in dest and not force:
            raise _struct_error(path + [k])
        if isinstance(v, dict) and isinstance(dest.get(k), dict):
            _merge(dest[k], v, path + [k], force)
        else:
            dest[k] = v


def apply_overrides(cfg, overrides):
    """ConfigLoaderImpl._apply_overrides_to_config (config_loader_impl.py:336-399)."""
    from textwrap import dedent

    for ov in overrides:
        if "@" in ov.key:
            group = ov.key.split("@")[0]
            raise HydraFail("hydra.errors.ConfigCompositionException",
                            "Override {} looks like a config group override, but config group '{}' does not exist."
                            .format(ov.line, group), frames=_apply_frames(339, "                raise "
                                                                           "ConfigCompositionException("))
        key, value = ov.key, ov.value
        try:
            if ov.kind == "delete":
                current = _select(cfg, key)
                if current is None:
                    raise HydraFail("hydra.errors.ConfigCompositionException",
                                    "Could not delete from config. '{}' does not exist.".format(key),
                                    frames=_apply_frames(351, "                        raise ConfigCompositionException("))
                if ov.has_value and value is not None and value != current:
                    raise HydraFail("hydra.errors.ConfigCompositionException",
                                    "Could not delete from config. The value of '{}' is {} and not {}.".format(
                                        key, current, value),
                                    frames=_apply_frames(356, "                        raise ConfigCompositionException("))
                parts = key.split(".")
                parent = cfg if len(parts) == 1 else _select(cfg, ".".join(parts[:-1]))
                del parent[parts[-1]]
            elif ov.kind == "add":
                if _select(cfg, key) is None or isinstance(value, (dict, list)):
                    _update(cfg, key, value, force=True)
                else:
                    raise HydraFail("hydra.errors.ConfigCompositionException", dedent("""\
                        Could not append to config. An item is already at '{k}'.
                        Either remove + prefix: '{a}'
                        Or add a second + to add or override '{k}': '+{b}'
                        """).format(k=key, a=ov.line[1:], b=ov.line),
                                    frames=_apply_frames(377, "                        raise ConfigCompositionException("))
            elif ov.kind == "force_add":
                _update(cfg, key, value, force=True)
            else:
                try:
                    _update(cfg, key, value, force=False)
                except OmegaError as e:
                    raise HydraFail("hydra.errors.ConfigCompositionException",
                                    "Could not override '{}'.\nTo append to your config use +{}".format(key, ov.line),
                                    cause=e, frames=_apply_frames(392, "                        raise "
                                                                        "ConfigCompositionException("),
                                    cause_frames=[
                                        _frame(_CL, 390, "_apply_overrides_to_config",
                                               "                        OmegaConf.update(cfg, key, value, merge=True)",
                                               "OmegaConf.update(cfg, key, value, merge=True)"),
                                        _frame(OMEGACONF + "/omegaconf.py", e.site[0], "update", e.site[1])])
        except OmegaError as e:
            raise HydraFail("hydra.errors.ConfigCompositionException", "Error merging override {}".format(ov.line),
                            cause=e, frames=_apply_frames(397, "                raise ConfigCompositionException("),
                            cause_frames=[_frame(OMEGACONF + "/omegaconf.py", getattr(e, "site", (729, ""))[0],
                                                 "update", getattr(e, "site", (729, None))[1])])


# ---------------------------------------------------------------- the process


def _pathstr(p):
    """str(pathlib.Path(p)): repeated and trailing slashes and '.' parts dropped."""
    if p == "":
        return "."
    absolute = p.startswith("/")
    parts = [x for x in p.split("/") if x not in ("", ".")]
    text = "/".join(parts)
    return ("/" + text) if absolute else (text or ".")


class Run:
    def __init__(self, kind, argv):
        self.kind = kind
        self.entry = ENTRIES[kind]
        self.argv = list(argv)
        self.script = os.path.abspath(sys.argv[0] if sys.argv and sys.argv[0] else self.entry["script"])
        self.prog = os.path.basename(self.script)
        self.task = os.path.splitext(self.prog)[0]
        self.w = self._worker()
        self.o = Out(self.w.rank)
        self.full_error = os.environ.get("HYDRA_FULL_ERROR") == "1"
        self.task_overrides = []
        self.sigterm = 0
        self.interrupted = False
        self.bar = None

    # -- who this process is (Lightning 2.3.3's cluster-environment choice)
    def _worker(self):
        w = harness.worker()
        self.env_kind = "torchelastic" if w.under_torchrun else None
        if not w.under_torchrun:
            job_name = os.environ.get("SLURM_JOB_NAME", "")
            if "SLURM_NTASKS" in os.environ and job_name not in ("bash", "interactive"):
                self.env_kind = "slurm"
                w.rank = int(os.environ.get("SLURM_PROCID", "0"))
                w.local_rank = int(os.environ.get("SLURM_LOCALID", "0"))
                w.world_size = int(os.environ["SLURM_NTASKS"])
                w.node_rank = int(os.environ.get("SLURM_NODEID", "0"))
                w.local_world_size = int(os.environ.get("SLURM_NTASKS_PER_NODE", "1").split("(")[0] or 1)
                w.nnodes = int(os.environ.get("SLURM_NNODES", "1"))
            else:
                self.env_kind = "lightning"
        return w

    # -- frames shared by the reports
    def _outer_frames(self):
        """The frames above Hydra's run_job, as Python prints them when the
        exception escapes (HYDRA_FULL_ERROR=1)."""
        return [
            _frame(self.script, self.entry["module"], "<module>", "    main()"),
            _frame(HYDRA + "/main.py", 94, "decorated_main", "                    _run_hydra("),
            _frame(HYDRA + "/_internal/utils.py", 394, "_run_hydra", "            _run_app("),
            _frame(HYDRA + "/_internal/utils.py", 457, "_run_app", "        run_and_report("),
            _frame(HYDRA + "/_internal/utils.py", 223, "run_and_report", "            raise ex"),
            _frame(HYDRA + "/_internal/utils.py", 220, "run_and_report", "        return func()", "func()"),
            _frame(HYDRA + "/_internal/utils.py", 458, "<lambda>", "            lambda: hydra.run(", "hydra.run(",
                   multiline=True),
        ]

    def _job_frames(self):
        return [
            _frame(HYDRA + "/_internal/hydra.py", 132, "run", "        _ = ret.return_value", "ret.return_value"),
            _frame(HYDRA + "/core/utils.py", 260, "return_value", "            raise self._return_value"),
            _frame(HYDRA + "/core/utils.py", 186, "run_job", "                ret.return_value = task_function(task_cfg)",
                   "task_function(task_cfg)"),
        ]

    def _task_frames_to_train(self):
        e = self.entry
        return [
            _frame(ADAPTER + "/utils/config_utils.py", 104, "validations_wrapper",
                   "            return fn(merged_config, *args, **kwargs)", "fn(merged_config, *args, **kwargs)"),
            _frame(self.script, e["main"], "main", "    train(cfg)"),
        ]

    # -- reports
    def task_failure(self, err):
        """An exception out of the task function: JobReturn.return_value writes
        the overrides line, then run_and_report prints (trimmed, or Python's
        full traceback under HYDRA_FULL_ERROR=1); exit 1."""
        harness.err("Error executing job with overrides: {}".format(repr(self.task_overrides)))
        if self.full_error:
            lines = ["Traceback (most recent call last):"]
            lines += _format_frames(self._outer_frames() + self._job_frames() + err.frames + err.omega_frames)
            lines += _exception_lines(err.exc, err.message)
        else:
            lines = ["Traceback (most recent call last):"]
            lines += _format_frames(err.frames)
            lines += _exception_lines(err.exc, err.message)
            lines += ["", "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace."]
        for line in lines:
            harness.err(line)
        raise Exit(1)

    def _compose_frames(self):
        return [
            _frame(HYDRA + "/_internal/hydra.py", 105, "run", "        cfg = self.compose_config(",
                   "self.compose_config(", multiline=True),
            _frame(HYDRA + "/_internal/hydra.py", 594, "compose_config",
                   "        cfg = self.config_loader.load_configuration(", "self.config_loader.load_configuration(",
                   multiline=True),
            _frame(HYDRA + "/_internal/config_loader_impl.py", 142, "load_configuration",
                   "            return self._load_configuration_impl(", "self._load_configuration_impl(",
                   multiline=True),
        ]

    def hydra_failure(self, fail):
        """run_and_report around Hydra's own steps (hydra/_internal/utils.py:218-303):
        a CompactHydraException prints its message (and its OmegaConf cause);
        under HYDRA_FULL_ERROR=1 Python prints the traceback. Exit 1."""
        if self.full_error:
            lines = []
            if fail.cause is not None:
                lines += ["Traceback (most recent call last):"]
                lines += _format_frames(fail.cause_frames)
                lines += _exception_lines(fail.cause.exc, fail.cause.text())
                lines += ["", "The above exception was the direct cause of the following exception:", ""]
            lines += ["Traceback (most recent call last):"]
            lines += _format_frames(self._outer_frames() + self._compose_frames() + fail.frames)
            lines += _exception_lines(fail.exc, fail.message)
            for line in lines:
                harness.err(line)
            raise Exit(1)
        sys.stderr.write(fail.message + os.linesep)
        if fail.cause is not None:
            sys.stderr.write(fail.cause.text() + os.linesep)
        sys.stderr.write("\nSet the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.\n")
        sys.stderr.flush()
        raise Exit(1)

    # -- main
    def main(self):
        try:
            self._main()
        except Exit as e:
            self._close_bar()
            sys.stdout.flush()
            sys.stderr.flush()
            return e.code
        self._close_bar()
        return 0

    def _main(self):
        self.o.wait(IMPORT_S)  # the entry script's imports, before main() parses the command line
        args_list = strip_mp_parameters(self.argv)
        parser = hydra_parser(self.prog)
        try:
            args = parser.parse_args(args_list)
        except SystemExit as e:
            raise Exit(e.code if isinstance(e.code, int) else (0 if e.code is None else 1))
        if args.experimental_rerun is not None:
            harness.emulator_fault("--experimental-rerun is not emulated")
        config_name = args.config_name if args.config_name is not None else self.entry["config_name"]
        config_path = args.config_path if args.config_path is not None else "conf"
        # hydra/core/utils.py validate_config_path (outside run_and_report: Python's own traceback)
        if os.path.splitext(config_path)[1] in (".yaml", ".yml"):
            lines = ["Traceback (most recent call last):"]
            lines += _format_frames([
                _frame(self.script, self.entry["module"], "<module>", "    main()"),
                _frame(HYDRA + "/main.py", 94, "decorated_main", "                    _run_hydra("),
                _frame(HYDRA + "/_internal/utils.py", 335, "_run_hydra", "    validate_config_path(config_path)"),
                _frame(HYDRA + "/core/utils.py", 293, "validate_config_path", "            raise ValueError(msg)")])
            lines += ["ValueError: Using config_path to specify the config name is not supported, specify the config "
                      "name via config_name.", "See https://hydra.cc/docs/1.2/upgrades/0.11_to_1.0/config_path_changes",
                      ""]
            for line in lines:
                harness.err(line)
            raise Exit(1)
        if os.path.isabs(config_path):
            search_dir = config_path
        else:
            search_dir = os.path.normpath(os.path.join(os.path.realpath(os.path.dirname(self.script)), config_path))
            if args.config_path is None and not os.path.isdir(search_dir):
                harness.emulator_fault("the adapter's example configs ({}) are not part of the emulator's checkout: "
                                       "pass --config-path and --config-name".format(search_dir))
        if args.config_dir is not None:
            harness.emulator_fault("--config-dir is not emulated")
        if args.help or args.hydra_help:
            harness.emulator_fault("Hydra's --help/--hydra-help output is not emulated")
        has_cfg = args.cfg is not None
        if args.resolve and not has_cfg:
            lines = ["Traceback (most recent call last):"]
            lines += _format_frames([
                _frame(self.script, self.entry["module"], "<module>", "    main()"),
                _frame(HYDRA + "/main.py", 94, "decorated_main", "                    _run_hydra("),
                _frame(HYDRA + "/_internal/utils.py", 367, "_run_hydra", "            raise ValueError(")])
            lines += ["ValueError: The --resolve flag can only be used in conjunction with --cfg or --help"]
            for line in lines:
                harness.err(line)
            raise Exit(1)
        commands = args.run + has_cfg + args.multirun + args.shell_completion + (args.info is not None)
        if commands > 1:
            lines = ["Traceback (most recent call last):"]
            lines += _format_frames([
                _frame(self.script, self.entry["module"], "<module>", "    main()"),
                _frame(HYDRA + "/main.py", 94, "decorated_main", "                    _run_hydra("),
                _frame(HYDRA + "/_internal/utils.py", 384, "_run_hydra", "            raise ValueError(")])
            lines += ["ValueError: Only one of --run, --multirun, --cfg, --info and --shell_completion can be specified"]
            for line in lines:
                harness.err(line)
            raise Exit(1)
        if args.multirun or args.shell_completion or args.info is not None or (has_cfg and args.cfg != "job"):
            harness.emulator_fault("this Hydra command (--multirun/--shell-completion/--info/--cfg hydra|all) is "
                                   "not emulated")
        cfg, hydra_cfg = self.compose(search_dir, config_name, list(args.overrides))
        if has_cfg:
            data = cfg
            if args.resolve:
                data = self.resolve_or_fail(cfg, frames=[])
            harness.out(to_yaml(data).rstrip("\n"))
            return
        self.run_job(cfg, hydra_cfg)

    # -- Hydra composition (config_loader_impl.py _load_configuration_impl)
    def search_path_lines(self, search_dir):
        return ["\tprovider=hydra, path=pkg://hydra.conf", "\tprovider=main, path=file://{}".format(search_dir),
                "\tprovider=schema, path=structured://"]

    def compose(self, search_dir, config_name, overrides):
        dl = HYDRA + "/_internal/defaults_list.py"
        if not os.path.isdir(search_dir):
            self.hydra_failure(HydraFail(
                "hydra.errors.MissingConfigException", "Primary config directory not found.\nCheck that the config "
                "directory '{}' exists and readable".format(search_dir), frames=[
                    _frame(_CL, 243, "_load_configuration_impl", "        self.ensure_main_config_source_available()"),
                    _frame(_CL, 129, "ensure_main_config_source_available", "                    self._missing_config_"
                           "error(", "self._missing_config_error(", multiline=True),
                    _frame(_CL, 102, "_missing_config_error", "        raise MissingConfigException(")]))
        parsed = []
        for line in overrides:
            try:
                parsed.append(parse_override(line))
            except HydraFail as f:
                self.hydra_failure(f)
        # the primary config: loaded while the search path is processed (by its name as given), then
        # looked up again for the defaults list by ConfigDefault.get_config_path, which strips a leading '/'
        def file_of(n):
            return os.path.realpath(os.path.join(search_dir, n if n.endswith(".yaml") else n + ".yaml"))

        cfg = None
        if os.path.isfile(file_of(config_name)):
            try:
                cfg = load_yaml(file_of(config_name))
            except yaml.YAMLError as e:
                harness.emulator_fault("{} is not valid YAML ({}); Hydra's report of it is not emulated".format(
                    file_of(config_name), str(e).splitlines()[0]))
            if cfg is None:
                cfg = {}
            if not isinstance(cfg, dict):
                self.hydra_failure(HydraFail(
                    "hydra.errors.ConfigCompositionException",
                    "primary config '{}' must be a DictConfig, got ListConfig".format(config_name), frames=[
                        _PARSE_FRAMES[0],
                        _frame(_CL, 230, "_parse_overrides_and_create_caching_repo",
                               "        self._process_config_searchpath(config_name, parsed_overrides, caching_repo)"),
                        _frame(_CL, 169, "_process_config_searchpath", "            raise ConfigCompositionException(")]))
        for ov in parsed:
            sweep = getattr(ov, "sweep", None)
            validate = _frame(_CL, 249, "_load_configuration_impl", "            self.validate_sweep_overrides_legal(",
                              "self.validate_sweep_overrides_legal(", multiline=True)
            if sweep == "simple":
                self.hydra_failure(HydraFail(
                    "hydra.errors.ConfigCompositionException",
                    "Ambiguous value for argument '{}'\n1. To use it as a list, use key=[value1,value2]\n2. To use it "
                    "as string, quote the value: key=\\'value1,value2\\'\n3. To sweep over it, add --multirun to "
                    "your command line".format(ov.line), frames=[
                        validate, _frame(_CL, 79, "validate_sweep_overrides_legal",
                                         "                        raise ConfigCompositionException(msg)")]))
            if sweep == "function":
                self.hydra_failure(HydraFail(
                    "hydra.errors.ConfigCompositionException", "Sweep parameters '{}' requires --multirun".format(
                        ov.line), frames=[validate, _frame(_CL, 81, "validate_sweep_overrides_legal",
                                                           "                        raise ConfigCompositionException(")]))
        name = config_name[1:] if config_name.startswith("/") else config_name
        if not os.path.isfile(file_of(name)):
            message = ("Cannot find primary config '{}'. Check that it's in your config search path.\n\nConfig search "
                       "path:\n{}").format(name, "\n".join(self.search_path_lines(search_dir)))
            self.hydra_failure(HydraFail("hydra.errors.MissingConfigException", message, frames=[
                _frame(_CL, 253, "_load_configuration_impl", "        defaults_list = create_defaults_list(",
                       "create_defaults_list(", multiline=True),
                _frame(dl, 745, "create_defaults_list", "    defaults, tree = _create_defaults_list(",
                       "_create_defaults_list(", multiline=True),
                _frame(dl, 715, "_create_defaults_list", "    defaults_tree = _create_defaults_tree(",
                       "_create_defaults_tree(", multiline=True),
                _frame(dl, 356, "_create_defaults_tree", "    ret = _create_defaults_tree_impl(",
                       "_create_defaults_tree_impl(", multiline=True),
                _frame(dl, 457, "_create_defaults_tree_impl",
                       "            return _expand_virtual_root(repo, root, overrides, skip_missing)",
                       "_expand_virtual_root(repo, root, overrides, skip_missing)"),
                _frame(dl, 280, "_expand_virtual_root", "        subtree = _create_defaults_tree_impl(",
                       "_create_defaults_tree_impl(", multiline=True),
                _frame(dl, 464, "_create_defaults_tree_impl", "            config_not_found_error(repo=repo, tree=root)"),
                _frame(dl, 799, "config_not_found_error", "    raise MissingConfigException("),
            ]))
        if cfg is None:
            try:
                cfg = load_yaml(file_of(name))
            except yaml.YAMLError as e:
                harness.emulator_fault("{} is not valid YAML ({}); Hydra's report of it is not emulated".format(
                    file_of(name), str(e).splitlines()[0]))
            cfg = cfg if isinstance(cfg, dict) else {}
        if "defaults" in cfg:
            harness.emulator_fault("a defaults list in the primary config is not emulated")
        hydra_cfg = {"run": {"dir": "outputs/${now:%Y-%m-%d}/${now:%H-%M-%S}"}, "output_subdir": ".hydra",
                     "job": {"name": self.task, "chdir": None}}
        if "hydra" in cfg:
            user = cfg.pop("hydra")
            if isinstance(user, dict):
                for k, v in user.items():
                    if k in ("run", "job") and isinstance(v, dict):
                        hydra_cfg[k].update(v)
                    elif k == "output_subdir":
                        hydra_cfg[k] = v
                    else:
                        harness.emulator_fault("hydra.{} in the config is not emulated".format(k))
        app = [ov for ov in parsed if not ov.is_hydra]
        for ov in parsed:
            if ov.is_hydra:
                k = ov.key[len("hydra."):]
                if k == "run.dir":
                    hydra_cfg["run"]["dir"] = ov.value
                elif k == "output_subdir":
                    hydra_cfg["output_subdir"] = ov.value
                elif k in ("job.chdir", "job.name"):
                    hydra_cfg["job"][k.split(".")[1]] = ov.value
                else:
                    harness.emulator_fault("the Hydra override {} is not emulated".format(ov.line))
        try:
            apply_overrides(cfg, app)
        except HydraFail as f:
            self.hydra_failure(f)
        self.task_overrides = [ov.line for ov in app]
        return cfg, hydra_cfg

    def resolve_or_fail(self, cfg, frames):
        try:
            return Resolver(cfg, self.hydra_runtime(), clock=self.o.now).resolve_all()
        except OmegaError as e:
            raise PyError(e.exc, e.text(), frames, self._omega_frames(e))

    def hydra_runtime(self):
        return {"runtime.cwd": os.getcwd(), "job.name": self.task,
                "runtime.output_dir": getattr(self, "output_dir", os.getcwd())}

    @staticmethod
    def _omega_frames(e):
        """omegaconf 2.2.3's frames of to_container(resolve=True) failing on a
        nested key, down to resolve_parse_tree (the grammar visitor's frames
        below it are not reproduced)."""
        depth = max(1, e.full_key.count(".") + e.full_key.count("[") + 1)
        b = OMEGACONF + "/basecontainer.py"
        frames = [_frame(OMEGACONF + "/omegaconf.py", 561, "to_container", "        return BaseContainer._to_content(",
                         "BaseContainer._to_content(", multiline=True)]
        for level in range(depth):
            frames.append(_frame(b, 292, "_to_content", "                value = get_node_value(key)",
                                 "get_node_value(key)"))
            if level < depth - 1:
                frames.append(_frame(b, 247, "get_node_value", "                value = BaseContainer._to_content(",
                                     "BaseContainer._to_content(", multiline=True))
        frames += [
            _frame(b, 244, "get_node_value", "                    conf._format_and_raise(key=key, value=None, cause=e)"),
            _frame(OMEGACONF + "/base.py", 231, "_format_and_raise", "        format_and_raise("),
            _frame(OMEGACONF + "/_utils.py", 900, "format_and_raise", "    _raise(ex, cause)"),
            _frame(OMEGACONF + "/_utils.py", 798, "_raise",
                   "    raise ex.with_traceback(sys.exc_info()[2])  # set env var OC_CAUSE=1 for full trace",
                   "raise ex.with_traceback(sys.exc_info()[2])"),
            _frame(b, 242, "get_node_value", "                    node = node._dereference_node()",
                   "node._dereference_node()"),
            _frame(OMEGACONF + "/base.py", 246, "_dereference_node",
                   "        node = self._dereference_node_impl(throw_on_resolution_failure=True)",
                   "self._dereference_node_impl(throw_on_resolution_failure=True)"),
            _frame(OMEGACONF + "/base.py", 277, "_dereference_node_impl",
                   "        return parent._resolve_interpolation_from_parse_tree(",
                   "parent._resolve_interpolation_from_parse_tree(", multiline=True),
            _frame(OMEGACONF + "/base.py", 584, "_resolve_interpolation_from_parse_tree",
                   "            resolved = self.resolve_parse_tree(", "self.resolve_parse_tree(", multiline=True),
            _frame(OMEGACONF + "/base.py", 764, "resolve_parse_tree", "            return visitor.visit(parse_tree)",
                   "visitor.visit(parse_tree)"),
        ]
        return frames

    # -- run_job (hydra/core/utils.py:99-202)
    def run_job(self, cfg, hydra_cfg):
        run_dir = hydra_cfg["run"]["dir"]
        if isinstance(run_dir, str):
            run_dir = Resolver({"d": run_dir}, clock=self.o.now).resolve_all()["d"]
        self.output_dir = os.path.abspath(str(run_dir))
        os.makedirs(self.output_dir, exist_ok=True)
        chdir = hydra_cfg["job"].get("chdir")
        # job_logging's file handler: <output_dir>/<job name>.log
        log_file = os.path.join(self.output_dir, "{}.log".format(hydra_cfg["job"].get("name") or self.task))
        if not os.path.exists(log_file):
            open(log_file, "a").close()
        sub = hydra_cfg.get("output_subdir")
        if sub is not None:
            d = os.path.join(self.output_dir, str(sub))
            harness.write_file(os.path.join(d, "config.yaml"), to_yaml(cfg))
            harness.write_file(os.path.join(d, "hydra.yaml"), to_yaml({"hydra": {
                "run": {"dir": str(run_dir)}, "output_subdir": sub,
                "job": {"name": hydra_cfg["job"].get("name") or self.task, "chdir": chdir},
                "runtime": {"version": HYDRA_VERSION, "version_base": "1.2", "cwd": os.getcwd(),
                            "output_dir": self.output_dir}}}))
            harness.write_file(os.path.join(d, "overrides.yaml"), to_yaml(list(self.task_overrides)))
        if chdir:
            os.chdir(self.output_dir)
        try:
            self.validations_wrapper(cfg)
        except PyError as err:
            self.task_failure(err)

    # -- hyperpod_nemo_adapter/utils/config_utils.py validate_config
    def validations_wrapper(self, cfg):
        cu = ADAPTER + "/utils/config_utils.py"
        wrapper_100 = _frame(cu, 100, "validations_wrapper", '            _validate_model_type(cfg.model.get('
                             '"model_type", None), cfg.model.get("hf_model_name_or_path", None))')
        if "model" not in cfg:
            raise PyError("omegaconf.errors.ConfigAttributeError",
                          "Key 'model' is not in struct\n    full_key: model\n    object_type=dict",
                          [_frame(cu, 100, "validations_wrapper", wrapper_100[3], "cfg.model")])
        model = cfg["model"]
        if not isinstance(model, dict):
            harness.emulator_fault("a non-mapping `model` is not emulated")
        try:
            rv = Resolver(cfg, self.hydra_runtime())
            model_type = rv.value(model.get("model_type"), ["model", "model_type"])
            hf_path = rv.value(model.get("hf_model_name_or_path"), ["model", "hf_model_name_or_path"])
        except _Raw as e:
            harness.emulator_fault("an unresolvable model.model_type / hf_model_name_or_path ({}) is not emulated"
                                   .format(e.msg))
        # _validate_model_type (config_utils.py:50-61)
        if model_type is None and hf_path is None:
            msg = "model_type and hf_model_name_or_path are missing but at least one is required"
            self.o.smp("ERROR", msg)
            raise PyError("AttributeError", msg, [
                _frame(cu, 100, "validations_wrapper", wrapper_100[3],
                       '_validate_model_type(cfg.model.get("model_type", None), cfg.model.get("hf_model_name_or_path", '
                       'None))'),
                _frame(cu, 54, "_validate_model_type", "        raise AttributeError(msg)")])
        supported = ["bert", "gpt2", "llama_v2", "llama_v3", "llama_v4", "deepseek_r1_llama_v3", "mistral", "mixtral",
                     "qwen_v2"]
        if model_type is not None and model_type not in supported:
            self.o.smp("WARNING", 'Model "{}" is not supported by SageMaker Model Parallel. Please ensure '
                                  '`use_smp_model` is False'.format(model_type))
        # _validate_schema (config_utils.py:77-90)
        wrapper_101 = _frame(cu, 101, "validations_wrapper",
                             "            merged_config, validated_model = _validate_schema(cfg, extra=extra)",
                             "_validate_schema(cfg, extra=extra)")
        if "use_smp_model" not in cfg:
            raise PyError("omegaconf.errors.ConfigAttributeError",
                          "Key 'use_smp_model' is not in struct\n    full_key: use_smp_model\n    object_type=dict",
                          [wrapper_101, _frame(cu, 78, "_validate_schema", "    SchemaValidator = get_model_validator("
                                               "use_smp_model=cfg.use_smp_model, extra=extra)", "cfg.use_smp_model")])
        try:
            use_smp = Resolver(cfg, self.hydra_runtime()).value(cfg["use_smp_model"], ["use_smp_model"])
        except _Raw as e:
            harness.emulator_fault("an unresolvable use_smp_model ({}) is not emulated".format(e.msg))
        schema = Schema(self.o, use_smp, self.entry["extra"])
        container = self.resolve_or_fail(cfg, [wrapper_101, _frame(
            cu, 79, "_validate_schema", "    config_dict = OmegaConf.to_container(cfg, resolve=True)",
            "OmegaConf.to_container(cfg, resolve=True)")])
        try:
            merged, extras = schema.validate(container)
        except _Invalid as e:
            self.o.smp("ERROR", validation_error_text(schema.title, e.errors))
            raise Exit(0)  # exit(): SystemExit(None)
        except _Other as e:
            self.o.smp("ERROR", e.message)
            raise Exit(0)
        # _validate_custom_recipe_extra_params (config_utils.py:64-74)
        if extras and "SLURM_JOB_ID" in os.environ:
            msg = ("The recipe received defines the following keys that are not pre-defined for this model: {}"
                   .format({k: merged[k] for k in extras}))
            self.o.smp("ERROR", msg)
            raise PyError("AttributeError", msg, [
                _frame(cu, 102, "validations_wrapper", "            _validate_custom_recipe_extra_params("
                                                       "validated_model)"),
                _frame(cu, 74, "_validate_custom_recipe_extra_params", "        raise AttributeError(msg)")])
        self.train(merged)

    # -- examples/<model>/<model>_pretrain.py train()
    def train(self, cfg):
        e = self.entry
        self.o.nemo("I", "\n\n************** Experiment configuration ***********")
        self.o.nemo("I", "\n" + to_yaml(cfg))
        frames = self._task_frames_to_train()
        builder = ADAPTER + "/collections/parts/sagemaker_trainer_builder.py"
        create = _frame(self.script, e["train_first"] + 3, "train",
                        "    trainer, data_module = SageMakerTrainerBuilder(cfg).create_trainer()",
                        "SageMakerTrainerBuilder(cfg).create_trainer()")
        if cfg["exp_manager"] is None:
            harness.emulator_fault("a recipe without exp_manager is not emulated (the trainer builder reads "
                                   "exp_manager.auto_checkpoint)")
        exp = cfg["exp_manager"]
        ckp = exp.get("checkpoint_callback_params") or {}
        full = exp.get("export_full_model") or {}
        auto = (exp.get("auto_checkpoint") or {}).get("enabled") or False
        sharded_any = ckp.get("save_top_k", 0) != 0
        sharded_last = ckp.get("save_last", True)
        if auto and (sharded_any or sharded_last):
            raise PyError("AssertionError", "Turning on auto_checkpoint and checkpoint in checkpoint_callback_params "
                                            "are mutually exclusive", frames + [
                create,
                _frame(builder, 232, "create_trainer", "        callbacks = self._create_callbacks(callbacks)",
                       "self._create_callbacks(callbacks)"),
                _frame(builder, 212, "_create_callbacks", "        callbacks += self._create_checkpoint_callbacks()",
                       "self._create_checkpoint_callbacks()"),
                (_frame(builder, 158, "_create_checkpoint_callbacks", "            if self.use_generic_checkpoint:",
                        "self.use_generic_checkpoint") if (cfg["model"].get("peft") or {}).get("peft_type") is not None
                 else _frame(builder, 178, "_create_checkpoint_callbacks", "        if self.use_generic_checkpoint:",
                             "self.use_generic_checkpoint")),
                _frame(builder, 135, "use_generic_checkpoint", "        assert not (")])
        if auto:
            harness.emulator_fault("exp_manager.auto_checkpoint.enabled: the adaptive local-checkpoint interval "
                                   "(measured I/O times) is not emulated")
        self.generic_ckpt = (sharded_any or sharded_last) or (full.get("every_n_train_steps", 0) != 0 or
                                                             full.get("save_last", True))
        # Trainer(...): Lightning's cluster environment, then its rank-zero start-up lines
        if self.env_kind == "slurm":
            ntasks = int(os.environ.get("SLURM_NTASKS", "1"))
            if ntasks > 1 and "SLURM_NTASKS_PER_NODE" not in os.environ:
                ac = PL + "/trainer/connectors/accelerator_connector.py"
                raise PyError("RuntimeError", "You set `--ntasks={0}` in your SLURM bash script, but this variable is "
                                              "not supported. HINT: Use `--ntasks-per-node={0}` instead.".format(ntasks),
                              frames + [
                    create,
                    _frame(builder, 234, "create_trainer", "        trainer = Trainer(", "Trainer(", multiline=True),
                    _frame(PL + "/utilities/argparse.py", 70, "insert_env_defaults", "        return fn(self, **kwargs)",
                           "fn(self, **kwargs)"),
                    _frame(PL + "/trainer/trainer.py", 400, "__init__",
                           "        self._accelerator_connector = _AcceleratorConnector(", "_AcceleratorConnector(",
                           multiline=True),
                    _frame(ac, 149, "__init__", "        self.cluster_environment: ClusterEnvironment = "
                                                "self._choose_and_init_cluster_environment()",
                           "self._choose_and_init_cluster_environment()"),
                    _frame(ac, 409, "_choose_and_init_cluster_environment", "                return env_type()",
                           "env_type()"),
                    _frame(SITE + "/lightning_fabric/plugins/environments/slurm.py", 54, "__init__",
                           "        self._validate_srun_variables()"),
                    _frame(SITE + "/lightning_fabric/plugins/environments/slurm.py", 221, "_validate_srun_variables",
                           "            raise RuntimeError(")])
        elif self.env_kind == "lightning":
            devices = cfg["trainer"]["devices"]
            if cfg["trainer"]["num_nodes"] != 1 or devices not in (1, "1"):
                harness.emulator_fault("run without torchrun or srun: Lightning's own subprocess launcher (devices={}) "
                                       "is not emulated".format(devices))
        self.o.pl_zero("GPU available: True (cuda), used: True")
        self.o.pl_zero("TPU available: False, using: 0 TPU cores")
        self.o.pl_zero("HPU available: False, using: 0 HPUs")
        for name, value in (("limit_val_batches", cfg["trainer"]["limit_val_batches"]),
                            ("val_check_interval", cfg["trainer"]["val_check_interval"])):
            if isinstance(value, int) and not isinstance(value, bool) and value == 1:
                message = "validation will run after every batch." if name == "val_check_interval" else \
                    "1 batch will be used."
                self.o.pl_zero("`Trainer({}=1)` was configured so {}".format(name, message))
            elif isinstance(value, float) and value == 1.0:
                message = "validation will run at the end of the training epoch." if name == "val_check_interval" \
                    else "100% of the batches will be used."
                self.o.pl_zero("`Trainer({}=1.0)` was configured so {}.".format(name, message))
        try:
            self.exp_manager(cfg, exp)
        except OSError as err:
            raise PyError(type(err).__name__, str(err), frames + [
                _frame(self.script, e["expm"], "train", "    exp_manager(trainer, cfg.exp_manager)"),
                _frame(ADAPTER + "/utils/exp_manager.py", 197, "exp_manager",
                       "    os.makedirs(log_dir, exist_ok=True)  # Cannot limit creation to global zero as all ranks "
                       "write to own log file", "os.makedirs(log_dir, exist_ok=True)")])
        # the model_type dispatch
        mt = cfg["model"]["model_type"]
        fit = _frame(self.script, e["fit"], "train", "    trainer.fit(model_module, datamodule=data_module)")
        if e["dispatch"] == "llama" and mt not in ("llama_v3", "llama_v4"):
            raise PyError("UnboundLocalError", "cannot access local variable 'model_module' where it is not "
                                               "associated with a value",
                          frames + [_frame(self.script, e["fit"], "train",
                                           "    trainer.fit(model_module, datamodule=data_module)", "model_module")])
        if e["dispatch"] == "deepseek" and not any(s in mt for s in ("llama", "qwen", "deepseek_r1")):
            raise PyError("TypeError", "`model` must be a `LightningModule` or `torch._dynamo.OptimizedModule`, got "
                                       "`NoneType`", frames + [
                fit,
                _frame(PL + "/trainer/trainer.py", 537, "fit", "        model = _maybe_unwrap_optimized(model)",
                       "_maybe_unwrap_optimized(model)"),
                _frame(PL + "/utilities/compile.py", 116, "_maybe_unwrap_optimized", "    raise TypeError(")])
        self.fit(cfg, exp, frames + [fit])

    # -- hyperpod_nemo_adapter/utils/exp_manager.py
    def exp_manager(self, cfg, exp):
        w = self.w
        exp_dir = exp.get("exp_dir")
        name = exp.get("name") or "default"
        if exp.get("explicit_log_dir"):
            log_dir = exp["explicit_log_dir"]
            self.version = None
        else:
            base = exp_dir if exp_dir is not None else os.path.join(os.getcwd(), "nemo_experiments")
            if w.rank == 0:
                self.version = time.strftime("%Y-%m-%d_%H-%M-%S", time.localtime(self.o.now()))
            else:
                self.version = os.environ.get("NEMO_VERSION") or None
            log_dir = _pathstr(os.path.join(base, str(name), self.version or ""))
        self.exp_dir = exp_dir if exp_dir is not None else os.path.join(os.getcwd(), "nemo_experiments")
        self.log_dir = log_dir
        os.makedirs(log_dir or ".", exist_ok=True)
        self.o.nemo("I", "Experiments will be logged at {}".format(log_dir))
        local = w.local_rank
        global_rank = w.node_rank * w.local_world_size + local
        log_file = os.path.join(log_dir, "sagemaker_log_globalrank-{}_localrank-{}.txt".format(global_rank, local))
        self.rank_log = log_file
        with open(log_file, "a"):
            pass
        if w.rank == 0:
            harness.write_file(os.path.join(log_dir, "cmd-args.log"), " ".join(sys.argv))
            for f in ("nemo_error_log.txt", "lightning_logs.txt"):
                p = os.path.join(log_dir, f)
                if not os.path.exists(p):
                    open(p, "a").close()
        elif w.local_world_size > 1:  # trainer.num_nodes (1: not passed to Trainer) * trainer.num_devices
            self.o.wait(EXP_MANAGER_SLEEP_S)

    # -- trainer.fit
    def fit(self, cfg, exp, frames):
        w = self.w
        o = self.o
        t = cfg["trainer"]
        m = cfg["model"]
        # strategy.setup_environment: torch.distributed init
        o.pl_all("Initializing distributed: GLOBAL_RANK: {}, MEMBER: {}/{}".format(w.rank, w.rank + 1, w.world_size))
        o.pl_zero("{}\ndistributed_backend=nccl\nAll distributed processes registered. Starting with {} processes\n{}\n"
                  .format("-" * 100, w.world_size, "-" * 100))
        harness.check_device(w)
        gpus = os.environ.get("ATTUNE_EMULATE_GPUS") or str(max(w.local_world_size, 1))
        devices = os.environ.get("CUDA_VISIBLE_DEVICES", ",".join(str(i) for i in range(int(gpus))))
        o.pl_all("LOCAL_RANK: {} - CUDA_VISIBLE_DEVICES: [{}]".format(w.local_rank, devices))
        o.wait(SETUP_S)
        self.pred = harness.prediction(w)
        self.clock = harness.StepClock(self.pred)
        # the data: batches per epoch
        tp = m["tensor_model_parallel_degree"] if cfg["use_smp_model"] else 1
        cp = m.get("context_parallel_degree") or 1
        dp = max(1, w.world_size // max(1, tp * cp))
        samples = 100000  # DummyDataset's length; the emulator's assumption for a real dataset too
        per_rank = samples // dp if samples % dp == 0 else math.ceil((samples - dp) / dp)
        self.total = max(0, per_rank // m["train_batch_size"])
        self.max_steps = t["max_steps"]
        self.peft = (m.get("peft") or {}).get("peft_type") is not None
        self.ckpt_dir = exp.get("checkpoint_dir") or os.path.join(self.exp_dir, "checkpoints")
        self.tp = tp
        self.tp_rank = w.rank % max(1, tp)
        ep = m.get("expert_model_parallel_degree") or 1
        self.ep = ep
        self.ep_rank = (w.rank // max(1, tp)) % max(1, ep)
        self.best = []
        self.loggers = any(exp.get(k) for k in ("create_tensorboard_logger", "create_mlflow_logger",
                                                "create_wandb_logger"))
        self.cfg = cfg
        self.exp = exp
        self.lr_warned = False
        self.epoch_frames = frames
        # TQDMProgressBar.on_train_start (global rank 0 only)
        if w.rank == 0:
            self.bar = Bar(self.o)
        # SageMakerCheckpoint.on_train_start: resume_from_checkpoint
        self.global_step = 0
        resume = exp.get("resume_from_checkpoint")
        if resume and self.generic_ckpt:
            o.nemo("I", "loading {} checkpoint: {}".format("peft_sharded" if self.peft else "sharded", resume))
            meta = os.path.join(resume, "tp{}_ep{}".format(self.tp_rank, self.ep_rank), ".metadata")
            try:
                with open(meta) as f:
                    state = json.load(f)
            except (OSError, ValueError):
                raise PyError("FileNotFoundError", "[Errno 2] No such file or directory: '{}'".format(meta), frames)
            self.global_step = int(state.get("global_step", 0))
            o.nemo("I", "Loaded Sharded checkpoint for PEFT" if self.peft else "Loaded Sharded checkpoint")
        # _SignalConnector.register_signal_handlers
        signal.signal(signal.SIGTERM, self._on_sigterm)
        signal.signal(signal.SIGINT, self._on_sigint)
        try:
            self.loop(frames)
        finally:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.default_int_handler)

    def _on_sigterm(self, signum, frame):
        # lightning/pytorch/trainer/connectors/signal_connector.py:106-114
        harness.err("[rank: {}] Received SIGTERM: {}".format(self.w.local_rank, signum))
        self.sigterm += 1

    def _on_sigint(self, signum, frame):
        self.interrupted = True

    def lr(self, step):
        """NeMo CosineAnnealing (WarmupAnnealHoldPolicy) at scheduler step `step`."""
        optim = self.cfg["model"]["optim"]
        sched = optim["sched"]
        base, min_lr = optim["lr"], sched["min_lr"]
        warm, const = sched["warmup_steps"], sched["constant_steps"]
        max_steps = self.cfg["model"]["lr_decay_iters"]
        decay = max_steps - (const + warm)
        if warm > 0 and step <= warm:
            if const == 0:
                return base * (step + 1) / (warm + 1)
        if const > 0 and (warm + decay) < step <= max_steps:
            return min_lr
        if step > max_steps:
            return min_lr
        if const == 0:
            mult = 0.5 * (1 + math.cos(math.pi * (step - warm) / (max_steps - warm)))
            return (base - min_lr) * mult + min_lr
        # linear warmup with cosine annealing (constant_steps > 0)
        if step <= warm:
            return base * step / warm if warm else base
        if step > warm + decay:
            return min_lr
        ratio = (step - warm) / max(1, decay)
        return min_lr + (base - min_lr) * 0.5 * (1 + math.cos(math.pi * ratio))

    def metrics(self, step):
        """What the model's on_train_batch_end logged at `step` (prog_bar=True),
        as float32 scalars."""
        out = {}
        if self.cfg.get("log_perf_metrics"):
            seconds = self.clock.seconds(step)
            out["Step Time"] = _f32(seconds)
            out["TFLOPS/GPU"] = _f32(self.clock.tflops_per_gpu(step))
            out["Samples/Second"] = _f32(self.cfg["model"]["train_batch_size"] * max(1, self.w.world_size) / seconds)
        out["Loss/train"] = _f32(harness.loss(step))
        out["Norms/grad_norm"] = _f32(harness.grad_norm(step))
        out["LR/learning_rate"] = _f32(self.lr(step))
        return out

    def postfix(self, metrics):
        items = {}
        if self.loggers and self.version:
            items["v_num"] = self.version[-4:]
        items.update(metrics)
        return items

    def loop(self, frames):
        o = self.o
        w = self.w
        pred = self.pred
        fail_step = max(1, pred.fails_at_step) if pred.ooms else None
        last_metrics = {}
        if self.total == 0:
            o.pl_zero("`Trainer.fit` stopped: No training batches.")
            return
        epoch = self.global_step // self.total
        batch_idx = self.global_step % self.total
        started_epoch = None
        ran_epoch = False
        while self.global_step < self.max_steps:
            ran_epoch = True
            if started_epoch != epoch:
                started_epoch = epoch
                if self.bar:
                    self.bar.reset(self.total)
                    self.bar.set_description("Epoch {}".format(epoch))
            step = self.global_step + 1
            seconds = self.clock.seconds(step)
            if fail_step is not None and step >= fail_step:
                o.wait(seconds * 0.5)
                message = harness.cuda_oom_message(pred, w.local_rank)
                raise PyError("torch.OutOfMemoryError", message, frames + self._fit_frames())
            self._sleep_batch(seconds)
            if self.interrupted:
                self._keyboard_interrupt()
                return
            self.global_step = step
            n = batch_idx + 1
            # callbacks' on_train_batch_end: the progress bar, then the checkpoint callback
            if self.bar:
                self.bar.update_n(n)
                self.bar.set_postfix(self.postfix(last_metrics))
            self.save_checkpoints()
            # the module's on_train_batch_end: self.log(..., prog_bar=True)
            last_metrics = self.metrics(step)
            if not self.lr_warned:
                self.lr_warned = True
                o.nemo_warning(NEMO + "/core/optim/lr_scheduler.py", 284, "UserWarning",
                               "To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                               "warnings.warn(")
            batch_idx += 1
            done = self.global_step >= self.max_steps
            if self.sigterm and not done:
                # training_epoch_loop.py:310-311 raises SIGTERMException (SystemExit, no code)
                raise Exit(0)
            if batch_idx >= self.total and not done:
                if self.bar:
                    self.bar.set_postfix(self.postfix(last_metrics))
                epoch += 1
                batch_idx = 0
        # the epoch ends (max_steps): on_train_epoch_end, the fit loop's `done`, on_train_end
        if self.bar and ran_epoch:
            self.bar.set_postfix(self.postfix(last_metrics))
        o.pl_zero("`Trainer.fit` stopped: `max_steps={}` reached.".format(self.max_steps))
        self._close_bar()

    def _fit_frames(self):
        lp = PL + "/loops"
        return [
            _frame(PL + "/trainer/trainer.py", 543, "fit", "        call._call_and_handle_interrupt(",
                   "call._call_and_handle_interrupt(", multiline=True),
            _frame(PL + "/trainer/call.py", 44, "_call_and_handle_interrupt",
                   "        return trainer_fn(*args, **kwargs)", "trainer_fn(*args, **kwargs)"),
            _frame(PL + "/trainer/trainer.py", 579, "_fit_impl", "        self._run(model, ckpt_path=ckpt_path)"),
            _frame(PL + "/trainer/trainer.py", 986, "_run", "        results = self._run_stage()", "self._run_stage()"),
            _frame(PL + "/trainer/trainer.py", 1030, "_run_stage", "                self.fit_loop.run()"),
            _frame(lp + "/fit_loop.py", 205, "run", "                self.advance()"),
            _frame(lp + "/fit_loop.py", 363, "advance", "            self.epoch_loop.run(self._data_fetcher)"),
            _frame(lp + "/training_epoch_loop.py", 140, "run", "                self.advance(data_fetcher)"),
            _frame(lp + "/training_epoch_loop.py", 250, "advance", "                    batch_output = "
                   "self.automatic_optimization.run(trainer.optimizers[0], batch_idx, kwargs)",
                   "self.automatic_optimization.run(trainer.optimizers[0], batch_idx, kwargs)"),
            _frame(lp + "/optimization/automatic.py", 190, "run", "            self._optimizer_step(batch_idx, closure)"),
        ]

    def _sleep_batch(self, seconds):
        """One batch: SIGTERM does not cut it short (the handler only sets a
        flag); SIGINT raises KeyboardInterrupt inside it."""
        remaining = seconds
        chunk = max(seconds / 20.0, 1e-3)
        while remaining > 0 and not self.interrupted:
            d = min(chunk, remaining)
            self.o.wait(d)
            remaining -= d

    def _keyboard_interrupt(self):
        # trainer/call.py:53-57: rank_zero_warn, captured by NeMo's showwarning
        self.o.nemo_warning(PL + "/trainer/call.py", 54, "UserWarning",
                            "Detected KeyboardInterrupt, attempting graceful shutdown...")

    def _close_bar(self):
        if self.bar:
            self.bar.close()
            self.bar = None

    # -- hyperpod_nemo_adapter/utils/callbacks/checkpoint.py SageMakerCheckpoint(Peft)._save_checkpoints
    def save_checkpoints(self):
        if not self.generic_ckpt:
            return
        exp = self.exp
        ckp = exp.get("checkpoint_callback_params") or {}
        full = exp.get("export_full_model") or {}
        gs = self.global_step
        last = self.max_steps == gs
        every_sharded = ckp.get("every_n_train_steps") or 0
        top_k = ckp.get("save_top_k") or 0
        save_last_sharded = ckp.get("save_last", True)
        monitor = ckp.get("monitor", "step")
        mode_max = ckp.get("mode", "max") == "max"
        # _should_save_sharded (monitor "step"/"epoch" always present)
        do_sharded = False
        if (last and save_last_sharded) or (every_sharded >= 1 and top_k >= 1 and gs % every_sharded == 0):
            if monitor in ("step", "epoch"):
                score = gs if monitor == "step" else gs // max(1, self.total)
                if len(self.best) < top_k:
                    do_sharded = True
                else:
                    worst = self.best[-1][0] if self.best else (-math.inf if mode_max else math.inf)
                    do_sharded = worst < score if mode_max else worst > score
            else:
                self.o.nemo("W", "`SageMakerModelCheckpoint(monitor={!r})` could not find the monitored key in the "
                                 "returned metrics: {}. HINT: Did you call `log({!r}, value)` in the `LightningModule`?"
                            .format(monitor, ["Loss/train", "Norms/grad_norm", "LR/learning_rate", "epoch", "step"],
                                    monitor))
        every_full = full.get("every_n_train_steps") or 0
        do_full = (full.get("save_last", True) and last) or (every_full and gs % every_full == 0)
        if do_sharded:
            name = "{}_{:d}".format(monitor, score)
            kind = "peft_sharded" if self.peft else "sharded"
            step_dir = os.path.join(self.ckpt_dir, kind, name)
            shard = os.path.join(step_dir, "tp{}_ep{}".format(self.tp_rank, self.ep_rank))
            self._write_shard(shard, gs)
            if self.peft:
                self.o.nemo("I", "Saving PEFT checkpoint to {}".format(step_dir))
                if self.w.rank == 0:
                    self._adapter_files(step_dir)
            if self.peft or not last:
                self.best.append((score, gs, step_dir))
                self.best.sort(key=lambda b: (b[0], (1 if mode_max else -1) * b[1]), reverse=mode_max)
                if len(self.best) > top_k:
                    _, _, path = self.best.pop()
                    self._prune(path)
        if do_full:
            if self.peft:
                path = os.path.join(self.ckpt_dir, "peft_full", "steps_{}".format(gs))
                self.o.nemo("I", "Saving PEFT checkpoint to {}".format(path))
                if self.w.rank == 0:
                    self._adapter_files(path)
                    hf = self.cfg["model"].get("hf_model_name_or_path")
                    if hf is None:
                        self.o.nemo("W", "No pretrained model name or path found, could not upload final model.")
                    else:
                        final = os.path.join(path, "final-model")
                        self.o.nemo("I", "Loading Base model from : {}".format(hf))
                        self.o.nemo("I", "Merging the adapter, this might take a while......")
                        self.o.nemo("I", "Checkpointing to {}......".format(final))
                        harness.write_json(os.path.join(final, "config.json"), {"model_type": self.cfg["model"][
                            "model_type"]})
                        harness.write_file(os.path.join(final, "model.safetensors"), "attune emulator marker\n")
                        self.o.nemo("I", "Successfully save the merged model checkpoint.")
            else:
                final_dir = full.get("final_export_dir")
                path = final_dir if (full.get("save_last", True) and last and final_dir) else os.path.join(
                    self.ckpt_dir, "full", "steps_{}".format(gs))
                if self.w.rank == 0:
                    harness.write_file(os.path.join(path, "pytorch_model.bin"), "attune emulator marker\n")
                    harness.write_json(os.path.join(path, "config.json"), {"model_type": self.cfg["model"][
                        "model_type"]})

    def _is_coordinator(self, tp):
        """The lowest rank of this tensor/expert-parallel shard group writes the
        shard directory's metadata (the emulator's choice)."""
        return self.w.rank < max(1, tp) * max(1, self.ep)

    def _write_shard(self, shard, gs):
        for _ in range(5):
            try:
                os.makedirs(shard, exist_ok=True)
                harness.write_file(os.path.join(shard, "__{}_0.distcp".format(self.w.rank)), "attune emulator marker\n")
                if self._is_coordinator(self.tp):
                    harness.write_json(os.path.join(shard, ".metadata"), {
                        "global_step": gs, "epoch": (gs - 1) // max(1, self.total)})
                return
            except FileNotFoundError:
                continue

    def _prune(self, step_dir):
        """Every rank removes its own shard files; the directories go when empty
        (rank 0 removes the checkpoint in the real callback; the emulated ranks
        do not run in lock step)."""
        shard = os.path.join(step_dir, "tp{}_ep{}".format(self.tp_rank, self.ep_rank))
        names = ["__{}_0.distcp".format(self.w.rank)] + ([".metadata"] if self._is_coordinator(self.tp) else [])
        for name in names:
            try:
                os.remove(os.path.join(shard, name))
            except OSError:
                pass
        for d in (shard, step_dir):
            try:
                os.rmdir(d)
            except OSError:
                pass
        if self.w.rank == 0:
            self.o.nemo("I", "Removed checkpoint: {}".format(step_dir))

    @staticmethod
    def _adapter_files(path):
        harness.write_json(os.path.join(path, "adapter_config.json"), {"peft_type": "LORA"})
        harness.write_file(os.path.join(path, "adapter_model.safetensors"), "attune emulator marker\n")


# ---------------------------------------------------------------- tqdm 4.66 with Lightning 2.3.3's settings


def _format_interval(t):
    mins, s = divmod(int(t), 60)
    h, m = divmod(mins, 60)
    return "{:d}:{:02d}:{:02d}".format(h, m, s) if h else "{:02d}:{:02d}".format(m, s)


def _tqdm_format_num(n):
    f = "{:.3g}".format(n).replace("e+0", "e+").replace("e-0", "e-")
    s = str(n)
    return f if len(f) < len(s) else s


def _lightning_format_num(n):
    """lightning/pytorch/callbacks/progress/tqdm_progress.py Tqdm.format_num."""
    padded = isinstance(n, (float, str))
    if not isinstance(n, str):
        n = _tqdm_format_num(n)
    if padded and "e" not in n:
        if "." not in n and len(n) < 5:
            try:
                float(n)
            except ValueError:
                return n
            n += "."
        n += "0" * (5 - len(n))
    return n


class Bar:
    """Lightning's training Tqdm: desc, bar_format BAR_FORMAT, leave=True,
    dynamic_ncols, smoothing=0, file=sys.stdout; every refresh is '\\r' + the
    line (padded to the previous length); close() writes the line and '\\n'."""

    UTF = " " + "".join(chr(c) for c in range(0x258F, 0x2587, -1))
    ASCII = " 123456789#"

    def __init__(self, out):
        self.o = out
        self.desc = "Training"
        self.total = None
        self.n = 0
        self.postfix = ""
        self.start = out.t
        self.last_len = 0
        enc = (getattr(sys.stdout, "encoding", "") or "").lower().replace("-", "").replace("_", "")
        self.charset = self.UTF if enc in ("utf8", "utf", "utf8sig") else self.ASCII
        sys.stderr.flush()
        sys.stdout.flush()
        self.refresh()

    def _ncols(self):
        try:
            return os.get_terminal_size(sys.stdout.fileno()).columns
        except (OSError, ValueError, AttributeError):
            try:
                return int(os.environ["COLUMNS"]) - 1 if "LINES" in os.environ and int(os.environ["LINES"]) else None
            except (KeyError, ValueError):
                return None

    def text(self, average=True):
        elapsed = self.o.t - self.start
        n, total = self.n, self.total
        if total and n >= total + 0.5:
            total = None
        rate = n / elapsed if elapsed else None
        rate_fmt = ("{:5.2f}".format(rate) if rate else "?") + "it/s"
        n_fmt, total_fmt = str(n), (str(total) if total is not None else "?")
        postfix = ", " + self.postfix if self.postfix else ""
        remaining = (total - n) / rate if rate and total else 0
        remaining_str = _format_interval(remaining) if rate else "?"
        l_bar = self.desc + ": " if self.desc else ""
        ncols = self._ncols()
        tail = "| {}/{} [{}<{}, {}{}]".format(n_fmt, total_fmt, _format_interval(elapsed), remaining_str, rate_fmt,
                                             postfix)
        if total:
            frac = n / total
            l_bar += "{:3.0f}%|".format(frac * 100)
            charset = self.charset
        else:
            l_bar += "|"
            frac = 0
            charset = "  "
        width = max(1, ncols - len(l_bar) - len(tail)) if ncols else 10
        nsyms = len(charset) - 1
        full, part = divmod(int(frac * width * nsyms), nsyms)
        bar = charset[-1] * full
        if full < width:
            bar += charset[part] + charset[0] * (width - full - 1)
        line = l_bar + bar + tail
        return line[:ncols] if ncols else line

    def refresh(self):
        line = self.text()
        sys.stdout.write("\r" + line + " " * max(self.last_len - len(line), 0))
        sys.stdout.flush()
        self.last_len = len(line)

    def reset(self, total):
        self.n = 0
        self.total = total
        self.start = self.o.t
        self.refresh()

    def set_description(self, desc):
        self.desc = desc
        self.refresh()

    def update_n(self, n):
        self.n = n
        self.refresh()

    def set_postfix(self, items):
        self.postfix = ", ".join("{}={}".format(k, _lightning_format_num(v).strip()) for k, v in items.items())
        self.refresh()

    def close(self):
        self.refresh()
        sys.stdout.write("\n")
        sys.stdout.flush()


# ---------------------------------------------------------------- entry points


def _run(kind, argv):
    code = Run(kind, argv).main()
    sys.stdout.flush()
    sys.stderr.flush()
    return code


def llama_main(argv):
    return _run("llama", argv)


def mistral_main(argv):
    return _run("mistral", argv)


def mixtral_main(argv):
    return _run("mixtral", argv)


def deepseek_main(argv):
    return _run("deepseek", argv)


def custom_main(argv):
    return _run("custom", argv)
