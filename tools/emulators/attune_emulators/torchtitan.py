"""torchtitan's training process (`python -m torchtitan.train ARGS`, usually
under torchrun), for the attune emulators. Two generations:

  A  v0.2.2 (= commit 238fa99): a TOML file (`--job.config_file F`) merged
     into the JobConfig dataclasses, CLI overrides `--section.key value`;
  B  main (commit b5bcd76): `--module M --config C` names a Python function
     that returns a Trainer.Config, CLI overrides on top.

ATTUNE_EMULATE_TORCHTITAN_VERSION picks one ("0.2.2" = A; "main" = B): the
version installed on the mock cluster. Unset, the version the recipe's
wrapper declares (ATTUNE_EMULATE_FRAMEWORK_VERSION, from its
framework_version) is the one installed, and main when it declares none.

What is emulated: the config loading and its errors (TOML field checks, the
tyro 1.0.7 command-line parser with its error boxes and exit status 2), the
parallelism and batch assertions against torchrun's WORLD_SIZE, every rank's
log lines (root logger, "[titan] ..." on stdout), the training loop with the
step line at step 1 and every metrics.log_freq steps, checkpoints in the DCP
layout with auto-resume, profiler traces, memory snapshots, the TensorBoard
directory, the end lines and the exit status. torchtitan installs no signal
handler, so neither does this: SIGTERM kills the process silently.

Every behaviour cites its source in the framework's documentation section;
nothing here is a real tokenizer, dataset, model or GPU.
"""

import json
import os
import sys
import time

from . import harness

# ---------------------------------------------------------------- versions

GEN_A = "A"
GEN_B = "B"
VERSION = "0.2.2"  # assets/version.txt at both commits (the installed package's version)


def _generation():
    v = os.environ.get("ATTUNE_EMULATE_TORCHTITAN_VERSION", "") or os.environ.get("ATTUNE_EMULATE_FRAMEWORK_VERSION", "")
    if v in ("", "main"):
        return GEN_B
    if v in ("0.2.2", "v0.2.2"):
        return GEN_A
    harness.emulator_fault("torchtitan {!r} (ATTUNE_EMULATE_TORCHTITAN_VERSION, or the wrapper's framework_version): only '0.2.2' and 'main' are emulated".format(v))


# ---------------------------------------------------------------- paths (for prog and tracebacks)


def _package_dir():
    """Where `python -m torchtitan.train` finds the package: the checkout in the
    working directory (run_train.sh runs from the repository root), else the
    installed package."""
    local = os.path.join(os.getcwd(), "torchtitan")
    if os.path.isfile(os.path.join(local, "train.py")):
        return local
    return os.path.join(sys.prefix, "lib", "python{}.{}".format(*sys.version_info[:2]), "site-packages", "torchtitan")


# ---------------------------------------------------------------- the log (torchtitan/tools/logging.py)


class _Log:
    """The root logger as init_logger() sets it up: "[titan] %(asctime)s -
    %(name)s - %(levelname)s - %(message)s" on stdout. Time is the emulated
    run's simulated clock."""

    def __init__(self):
        self.t = 0.0
        self.t0 = time.time()

    def now(self):
        return self.t0 + self.t

    def emit(self, level, msg, name="root"):
        now = self.now()
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now)) + ",%03d" % int((now - int(now)) * 1000)
        harness.out("[titan] {} - {} - {} - {}".format(stamp, name, level, msg))

    def info(self, msg, name="root"):
        self.emit("INFO", msg, name)

    def warning(self, msg, name="root"):
        self.emit("WARNING", msg, name)

    def error(self, msg, name="root"):
        self.emit("ERROR", msg, name)

    def wait(self, seconds):
        if seconds > 0:
            harness.sleep(seconds)
            self.t += seconds


class _Fail(Exception):
    """An uncaught exception of the framework: frames (file, line, function,
    source line) and the exception's text."""

    def __init__(self, exc, message, frames=()):
        Exception.__init__(self, exc)
        self.exc, self.message, self.frames = exc, message, list(frames)


def _print_traceback(frames, exc, message, stream=None):
    """Python's report of an uncaught exception (stderr), or logging's
    exc_info (stream=harness.out: only the frames below the handler)."""
    write = harness.err if stream is None else stream
    write("Traceback (most recent call last):")
    if stream is None:
        write('  File "<frozen runpy>", line 198, in _run_module_as_main')
        write('  File "<frozen runpy>", line 88, in _run_code')
    for path, line, func, src in frames:
        write('  File "{}", line {}, in {}'.format(path, line, func))
        if src:
            write("    " + src)
    head = exc if message == "" else "{}: {}".format(exc, message)
    for line in head.split("\n"):
        write(line)


# ---------------------------------------------------------------- tyro 1.0.7's text rendering (_fmtlib.py)


def _utf8():
    return (getattr(sys.stdout, "encoding", "") or "").lower().replace("_", "-") == "utf-8"


class _T:
    """fmt.text: segments wrapped at spaces (and commas), each line padded."""

    def __init__(self, *segments):
        self.segments = [s for s in segments]

    def max_width(self):
        return sum(len(s) for s in self.segments)

    def render(self, width=None):
        from collections import deque

        lines = [[]]
        counter = 0
        for text in self.segments:
            for li, line in enumerate(text.split("\n")):
                if li > 0:
                    lines.append([])
                    counter = 0
                parts = deque(p if i == 0 else " " + p for i, p in enumerate(line.split(" ")))
                while parts:
                    part = parts.popleft()
                    if len(lines[-1]) == 0:
                        part = part.lstrip()
                    if width is None or len(part) <= width - counter:
                        lines[-1].append(part)
                        counter += len(part)
                    elif part.find(",") not in (-1, len(part) - 1):
                        c = part.index(",")
                        parts.appendleft(part[c + 1:])
                        parts.appendleft(part[:c + 1])
                    elif len(part) > width and counter != width:
                        remaining = width - counter
                        parts.extendleft([part[remaining:], part[:remaining]])
                    else:
                        lines.append([])
                        counter = 0
                        parts.appendleft(part)
        out = []
        for parts in lines:
            s = "".join(parts)
            out.append(s + (" " * (width - len(s)) if width is not None else ""))
        return out


class _Hr:
    def max_width(self):
        return 1

    def render(self, width):
        return _T(("─" if _utf8() else "-") * width).render(width)


class _Rows:
    def __init__(self, *items):
        self.items = [_T(i) if isinstance(i, str) else i for i in items]

    def max_width(self):
        return max([0] + [i.max_width() for i in self.items])

    def render(self, width):
        out = []
        for i in self.items:
            out.extend(i.render(width))
        return out


class _Cols:
    """fmt.cols(("", indent), element)."""

    def __init__(self, indent, item):
        self.indent = indent
        self.item = _T(item) if isinstance(item, str) else item

    def max_width(self):
        return self.indent + self.item.max_width()

    def render(self, width):
        inner = max(width - self.indent, 1)
        return [" " * self.indent + line for line in self.item.render(inner)]


def _box(title, rows):
    import shutil

    contents = _Rows(*rows)
    width = min(contents.max_width() + 4, max(40, shutil.get_terminal_size().columns))
    if _utf8():
        out = ["╭─ " + title + " " + "─" * max(0, width - 5 - len(title)) + "╮"]
        out.extend("│ " + line + " │" for line in contents.render(width - 4))
        out.append("╰" + "─" * (width - 2) + "╯")
    else:
        out = [" " + title + " " * (width - len(title) - 1), " " + "-" * (width - 2) + " "]
        out.extend("  " + line for line in contents.render(width - 2))
        out.append(" " * width)
    return "\n".join(out)


def _error_and_exit(title, rows, prog, verb="run"):
    rows = list(rows) + [_Hr(), _T("For full helptext, {} ".format(verb), prog + " --help")]
    sys.stderr.write(_box(title, rows) + "\n")
    sys.stderr.flush()
    sys.exit(2)


# ---------------------------------------------------------------- the config schema (dataclass fields as tyro lowers them)

# Kinds of fields, as tyro 1.0.7 parses their annotation:
#   bool       a flag pair --x / --no-x (default set, so boolean_optional_action)
#   int float str                      one value, int()/float()/str()
#   lit        Literal[...]            one value among choices
#   opt_lit    Literal[...] | None
#   opt_str opt_int opt_float          X | None ("None" gives None)
#   float_int  float | int
#   list_str   list[str]               torchtitan's rule: one token, comma separated
#   list_str_or_str  list[str] | str
#   opt_list_list_str  list[list[str]] | None  (nargs "*")
#   imports    list[OverrideImport]    torchtitan's rule (nargs "*")
#   fixed      not parsable from the command line (default kept)

_METAVARS = {
    "int": "INT", "float": "FLOAT", "str": "STR", "opt_str": "{None}|STR", "opt_int": "{None}|INT",
    "opt_float": "{None}|FLOAT", "float_int": "FLOAT|INT", "list_str": "A,B,C,...",
    "list_str_or_str": "A,B,C,...|STR", "opt_list_list_str": "{None}|{[A,B,C,... [A,B,C,... ...]]}",
    "imports": "TARGET[='{\"k\": v}'] ...", "fixed": "{fixed}", "bool": None,
}


def _swap(part):
    """tyro's swap_delimiters for the hyphen delimiter: inner '_' -> '-'."""
    left = part.lstrip("_")
    right = left.rstrip("_")
    return part[:len(part) - len(left)] + right.replace("_", "-") + left[len(right):]


class F:
    """A field: name, kind, default, choices (Literal)."""

    def __init__(self, name, kind, default=None, choices=None):
        self.name, self.kind, self.default, self.choices = name, kind, default, choices


class N:
    """A nested dataclass: name, class (its repr in errors), fields, validation."""

    def __init__(self, name, cls, fields, check=None):
        self.name, self.cls, self.fields, self.check = name, cls, fields, check


class S:
    """A union of dataclasses: tyro subcommands `<field>:<name>` (generation B)."""

    def __init__(self, name, options, default):
        self.name, self.options, self.default = name, options, default  # options: [(subname, fields)]


class _Arg:
    def __init__(self, path, field, sub=None):
        self.path = path
        self.field = field
        self.kind = field.kind
        self.flag = "--" + ".".join(_swap(p) for p in path)
        self.sub = sub  # subcommand name when the argument belongs to one

    @property
    def metavar(self):
        if self.kind == "lit":
            return "{" + ",".join(self.field.choices) + "}"
        if self.kind == "opt_lit":
            return "{None," + ",".join(self.field.choices) + "}"
        return _METAVARS[self.kind]

    @property
    def nargs(self):
        if self.kind == "bool":
            return 0
        if self.kind in ("opt_list_list_str", "imports"):
            return "*"
        return 1

    @property
    def choices(self):
        if self.kind == "lit":
            return tuple(self.field.choices)
        if self.kind == "opt_lit":
            return ("None",) + tuple(self.field.choices)
        return None

    def inverse(self):
        left, _, right = self.flag.rpartition(".")
        return (left + ".no-" + right) if left else "--no-" + self.flag[2:]


def _str_from(kind, value):
    """tyro's str_from_instance for a default (the "(default: X)" label)."""
    import shlex

    if kind == "bool":
        return str(value)
    if value is None:
        return "None"
    if kind in ("list_str", "list_str_or_str") and isinstance(value, list):
        parts = [",".join(str(v) for v in value)]
    elif kind == "opt_list_list_str" and isinstance(value, list):
        parts = [",".join(v) for v in value]
    elif kind == "imports":
        parts = [str(v) for v in value]
    else:
        parts = [str(value)]
    return " ".join(shlex.quote(p) for p in parts)


def _hint(arg, defaults):
    value = arg.field.default if arg.sub else _get(defaults, arg.path)
    if arg.kind == "fixed":
        return "(fixed to: {})".format(value)
    return "(default: {})".format(_str_from(arg.kind, value))


def _get(tree, path):
    for p in path:
        if not isinstance(tree, dict) or p not in tree:
            return None
        tree = tree[p]
    return tree


def _defaults_of(fields):
    out = {}
    for f in fields:
        if isinstance(f, N):
            out[f.name] = _defaults_of(f.fields)
        elif isinstance(f, S):
            out[f.name] = f.default
        else:
            out[f.name] = _copy(f.default)
    return out


def _copy(v):
    return json.loads(json.dumps(v)) if isinstance(v, (list, dict)) else v


def _merge(base, over):
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            _merge(base[k], v)
        else:
            base[k] = _copy(v)
    return base


def _args_of(fields, prefix=(), sub=None):
    out = []
    for f in fields:
        if isinstance(f, N):
            out.extend(_args_of(f.fields, prefix + (f.name,), sub))
        elif isinstance(f, F):
            out.append(_Arg(prefix + (f.name,), f, sub))
    return out


# ---------------------------------------------------------------- the parser (tyro/_backends/_tyro_backend.py)


class _Parsed:
    def __init__(self):
        self.values = {}  # flag -> list of strings or a bool
        self.sub = None   # selected subcommand name (B)


def _parse(schema, args, prog, defaults):
    """tyro.cli(...)'s parse over `args`: values by flag, or the error box and exit 2."""
    from collections import deque

    root = _args_of(schema)
    subs = [f for f in schema if isinstance(f, S)]
    kw = {}
    for a in root:
        kw[a.flag] = a
        if a.kind == "bool":
            kw[a.inverse()] = a
    frontier = list(subs)
    parsed = _Parsed()
    unknown = []  # (token, local prog)
    local_prog = prog
    queue = deque(args)
    seen_dd = False
    while queue:
        token = queue.popleft()
        if token == "--" and not seen_dd:
            seen_dd = True
            continue
        if seen_dd:
            unknown.append((token, local_prog))
            continue
        equals = None
        if len(token) > 2 and token.startswith("--"):
            if "=" in token:
                flag_part, _, equals = token[2:].partition("=")
                swapped = "--" + _swap(flag_part)
            else:
                swapped = "--" + _swap(token[2:])
        else:
            swapped = token
            if token.startswith("-") and "=" in token:
                swapped, _, equals = token.partition("=")
        if token in ("-h", "--help"):
            _print_help(schema, defaults, local_prog, parsed.sub)
            sys.exit(0)
        if equals is not None and swapped in kw:
            queue.appendleft(equals)
            queue.appendleft(swapped)
            continue
        chosen = None
        for group in frontier:
            names = ["{}:{}".format(_swap(group.name), n) for n, _ in group.options]
            for shim in (token, _swap(token)) if not token.endswith("None") else (token, token[:-4] + "none"):
                if _swap(shim) in names:
                    shim = _swap(shim)
                if shim in names:
                    chosen = (group, shim)
                    break
            if chosen:
                break
        if chosen:
            group, name = chosen
            frontier.remove(group)
            parsed.sub = name
            # The parser moves into the subcommand: the root's arguments not yet
            # given are dropped (they apply to the preceding subcommand only).
            for a in root:
                kw.pop(a.flag, None)
                if a.kind == "bool":
                    kw.pop(a.inverse(), None)
            local_prog = prog + " " + name
            opt = dict(group.options)[name.split(":", 1)[1]]
            for a in _args_of(opt, (group.name,), name):
                kw[a.flag] = a
                if a.kind == "bool":
                    kw[a.inverse()] = a
            continue
        arg = kw.get(swapped)
        if arg is not None and arg.kind == "bool":
            parsed.values[arg.flag] = swapped == arg.flag
            continue
        if arg is not None:
            values = []
            if arg.nargs == 1:
                if not queue:
                    _error_and_exit("Missing argument", [_T(
                        "Missing value for argument '{}'. Expected 1 values.".format(repr((arg.flag,))))], local_prog)
                values.append(queue.popleft())
            else:
                while queue:
                    nxt = queue[0]
                    if nxt in kw or nxt.startswith("--"):
                        break
                    if any(nxt in ["{}:{}".format(_swap(g.name), n) for n, _ in g.options] for g in frontier):
                        break
                    values.append(queue.popleft())
            if arg.choices is not None:
                for v in values:
                    if v not in arg.choices:
                        _error_and_exit("Invalid choice", [_T(
                            "invalid choice ", "'{}'".format(v), " for argument ", "'{}'".format(arg.flag),
                            ". Expected one of ", str(arg.choices), ".")], local_prog)
            parsed.values[arg.flag] = values
            continue
        unknown.append((token, local_prog))
    if unknown:
        _unrecognized(schema, unknown, list(args), prog, frontier, defaults)
    return parsed


def _all_arg_infos(schema, args, prog):
    """recursive_arg_search: every argument that could have been passed, with
    its usage hint and how well its subcommand matches the command line."""
    infos = []
    for a in _args_of(schema):
        if a.kind == "fixed":
            continue
        infos.append((a, prog + " --help", 0.0))
    for group in [f for f in schema if isinstance(f, S)]:
        for n, opt in group.options:
            name = "{}:{}".format(_swap(group.name), n)
            score = 1.0 if name in args else -0.001
            for a in _args_of(opt, (group.name,), name):
                if a.kind != "fixed":
                    infos.append((a, prog + " " + name + " --help", score))
    return infos


def _unrecognized(schema, unknown, args, prog, frontier, defaults):
    import difflib

    has_subcommands = any(isinstance(f, S) for f in schema)
    infos = _all_arg_infos(schema, args, prog)
    unrec = []
    for token, _ in unknown:
        if token.startswith("--") and token not in unrec:
            unrec.append(token)
    same_exists = any(a.flag in unrec for a, _, _ in infos)
    if has_subcommands and same_exists:
        segments = ["Unrecognized or misplaced options:\n"]
        for i, (token, tprog) in enumerate(unknown):
            segments += ["" if i == 0 else "\n", "  {} (applied to ".format(token), tprog, ")"]
        segments.append("\n\nArguments are applied to the directly preceding subcommand, so ordering can matter.")
        rows = [_T(*segments)]
    else:
        segments = ["Unrecognized options: "]
        for i, (token, _) in enumerate(unknown):
            if i:
                segments.append(", ")
            segments.append(token)
        rows = [_T(*segments)]
    if frontier:
        names = ", ".join("{}:{}".format(_swap(g.name), n) for g in frontier for n, _ in g.options)
        rows += [_Hr(), _T("Available subcommands: ", names)]
    for u in unrec:
        def score(opt):
            if opt.endswith(u[2:]) or opt.startswith(u[2:]):
                return 0.9
            if len(u) >= 4 and all(part in opt for part in u[2:].split(".")):
                return 0.9
            return difflib.SequenceMatcher(a=u, b=opt).ratio()

        scored = []
        for a, hint, match in infos:
            opts = (a.flag, a.inverse()) if a.kind == "bool" else (a.flag,)
            scored.append((a, opts, hint, match, max(score(o) for o in opts)))
        scored.sort(key=lambda s: (-s[4], -s[3], s[1][0], s[0].metavar or "", s[2]))
        show = []
        prev = None
        unique = 0
        for item in scored:
            if item[4] < 0.8:
                break
            if item[4] < 0.9 and unique >= 3 and prev != item[1]:
                break
            unique += prev != item[1]
            show.append(item)
            prev = item[1]
        if show:
            rows.append(_Hr())
            rows.append("Perhaps you meant:" if len(unrec) == 1 else "Arguments similar to {}:".format(u))
        prev_item = None
        same = 0
        unique = 0
        dots = False
        for item in show:
            a, opts, hint, _, _ = item
            same += 1
            if prev_item is None or opts != prev_item[1]:
                same = 0
                if unique >= 10:
                    break
                unique += 1
            if len(show) >= 8 and same >= 4 and prev_item is not None and opts == prev_item[1]:
                if not dots:
                    rows.append(_Cols(4, "[...]"))
                dots = True
                continue
            if not (has_subcommands and prev_item is not None and opts == prev_item[1]
                    and a.metavar == prev_item[0].metavar):
                text = ", ".join(opts) + ("" if a.metavar is None else " " + a.metavar)
                rows.append(_Cols(4, text))
            if prev_item is None or opts != prev_item[1] or a.metavar != prev_item[0].metavar:
                rows.append(_Cols(8, _T(_hint(a, defaults))))
            if has_subcommands:
                rows.append(_Cols(8, _T("in ", hint)))
            prev_item = item
    _error_and_exit("Unrecognized options", rows, prog)


def _print_help(schema, defaults, prog, sub):
    """-h/--help: tyro prints the help text and exits 0 (here without the
    fields' docstrings)."""
    lines = ["usage: {} [-h] [OPTIONS]".format(prog), ""]
    for a in _args_of(schema):
        if a.kind == "fixed":
            continue
        name = a.flag + (", " + a.inverse() if a.kind == "bool" else "") + ("" if a.metavar is None else " " + a.metavar)
        lines.append("  {}  {}".format(name, _hint(a, defaults)))
    for group in [f for f in schema if isinstance(f, S)]:
        lines.append("")
        lines.append("subcommands: " + ", ".join("{}:{}".format(_swap(group.name), n) for n, _ in group.options))
    for line in lines:
        harness.out(line)


# ---------------------------------------------------------------- converting the parsed strings (tyro/_calling.py)


class _ValueError(Exception):
    """tyro's InstantiationError: the "Value error" box."""

    def __init__(self, message, arg=None, prefix=None):
        Exception.__init__(self, message)
        self.message, self.arg, self.prefix = message, arg, prefix


def _union_error(metavar, strings, errors):
    return "no type matching {} could be instantiated from {}.\n\nGot errors:  \n- ".format(
        metavar, repr(strings)) + "\n- ".join(errors)


def _convert(arg, strings):
    kind = arg.kind
    s = strings[0] if strings else ""
    try:
        if kind == "int":
            return int(s)
        if kind == "float":
            return float(s)
        if kind in ("str",):
            return s
        if kind == "lit":
            return s
        if kind == "opt_lit":
            return None if s == "None" else s
        if kind in ("opt_str", "opt_int", "opt_float"):
            if s == "None":
                return None
            if kind == "opt_str":
                return s
            conv = int if kind == "opt_int" else float
            try:
                return conv(s)
            except ValueError as e:
                raise _ValueError(_union_error(arg.metavar, strings, [
                    "<class 'NoneType'>: {} does not match choices ('None',)".format(repr(strings)),
                    "<class '{}'>: {}".format(conv.__name__, e.args[0])]), arg)
        if kind == "float_int":
            errors = []
            for conv in (float, int):
                try:
                    return conv(s)
                except ValueError as e:
                    errors.append("<class '{}'>: {}".format(conv.__name__, e.args[0]))
            raise _ValueError(_union_error(arg.metavar, strings, errors), arg)
        if kind in ("list_str", "list_str_or_str"):
            return s.split(",")
        if kind == "opt_list_list_str":
            if strings == ["None"]:
                return None
            return [t.split(",") for t in strings]
        if kind == "imports":
            return list(strings)
        if kind == "fixed":
            raise _ValueError("{} was passed in, but is a fixed argument that cannot be parsed".format(arg.flag), arg)
    except _ValueError:
        raise
    except ValueError as e:
        raise _ValueError(e.args[0], arg)
    return s


def _instantiate(fields, parsed, values, log, prefix=(), sub=None):
    """Fill `values` (the defaults) with the command line's values, field by
    field in the dataclasses' order, running each nested dataclass's checks
    as tyro constructs it."""
    for f in fields:
        if isinstance(f, N):
            child = values.setdefault(f.name, {})
            _instantiate(f.fields, parsed, child, log, prefix + (f.name,), sub)
            if f.check:
                try:
                    f.check(child, log)
                except _CheckError as e:
                    raise _ValueError(e.message, None, ".".join(_swap(p) for p in prefix + (f.name,)))
        elif isinstance(f, S):
            if parsed.sub is not None and parsed.sub.startswith(_swap(f.name) + ":"):
                name = parsed.sub.split(":", 1)[1]
                fields = dict(f.options)[name]
                values["_" + f.name] = name
                values[f.name] = _defaults_of(fields)
                _instantiate(fields, parsed, values[f.name], log, prefix + (f.name,), parsed.sub)
            else:
                values["_" + f.name] = f.default
                values[f.name] = _defaults_of(dict(f.options)[f.default])
        else:
            a = _Arg(prefix + (f.name,), f, sub)
            if a.flag in parsed.values:
                raw = parsed.values[a.flag]
                values[f.name] = raw if a.kind == "bool" else _convert(a, raw)


class _CheckError(Exception):
    """A ValueError raised in a config dataclass's __post_init__."""

    def __init__(self, message):
        Exception.__init__(self, message)
        self.message = message


def _value_error_box(e, prog, defaults):
    if e.arg is not None:
        a = e.arg
        inv = a.flag + ("" if a.metavar is None else " " + a.metavar)
        rows = [_T("Error parsing {}:".format(a.flag), " ", e.message), _Hr(), "Argument helptext:",
                _Cols(4, _Rows(_T(inv), _T(_hint(a, defaults))))]
    else:
        rows = [_T("Error parsing {}:".format(e.prefix), " ", e.message)]
    _error_and_exit("Value error", rows, prog, verb="see")


# ---------------------------------------------------------------- generation A: the JobConfig (torchtitan/config/job_config.py @ 238fa99)


def _check_parallelism_a(v, log):
    if v.get("context_parallel_load_balancer") == "":
        raise _CheckError("context_parallel_load_balancer cannot be an empty string. Use None to disable load "
                          "balancing.")


class _AssertFail(Exception):
    def __init__(self, message, frames):
        Exception.__init__(self, message)
        self.message, self.frames = message, frames


def _check_validation_a(v, log):
    steps = v.get("steps", -1)
    if not (steps > 0 or steps == -1):
        raise _AssertFail("validation steps must be positive or -1", [("job_config.py", 979, "__post_init__",
                                                                        "assert (")])


_DATALOADER_A = [F("num_workers", "int", 0), F("persistent_workers", "bool", False), F("pin_memory", "bool", False),
                 F("prefetch_factor", "opt_int", None)]

SCHEMA_A = [
    N("job", "Job", [
        F("config_file", "opt_str", None), F("dump_folder", "str", "./outputs"), F("description", "str", "default job"),
        F("print_config", "bool", False), F("save_config_file", "opt_str", None), F("custom_config_module", "str", ""),
    ]),
    N("profiling", "Profiling", [
        F("enable_profiling", "bool", False), F("save_traces_folder", "str", "profile_traces"),
        F("profile_freq", "int", 10), F("profiler_active", "int", 1), F("profiler_warmup", "int", 3),
        F("enable_memory_snapshot", "bool", False), F("save_memory_snapshot_folder", "str", "memory_snapshot"),
    ]),
    N("metrics", "Metrics", [
        F("log_freq", "int", 10), F("enable_tensorboard", "bool", False), F("disable_color_printing", "bool", False),
        F("save_tb_folder", "str", "tb"), F("save_for_all_ranks", "bool", False), F("enable_wandb", "bool", False),
    ]),
    N("model", "Model", [
        F("name", "str", "llama3"), F("flavor", "str", "debugmodel"),
        F("hf_assets_path", "str", "./tests/assets/tokenizer"), F("tokenizer_path", "opt_str", None),
        F("converters", "list_str", []), F("print_after_conversion", "bool", False),
    ]),
    N("optimizer", "Optimizer", [
        F("name", "str", "AdamW"), F("lr", "float", 8e-4), F("beta1", "float", 0.9), F("beta2", "float", 0.95),
        F("eps", "float", 1e-8), F("weight_decay", "float", 0.1),
        F("implementation", "lit", "fused", ("for-loop", "foreach", "fused")),
        F("early_step_in_backward", "bool", False),
    ]),
    N("lr_scheduler", "LRScheduler", [
        F("warmup_steps", "int", 200), F("total_steps", "opt_int", None), F("decay_ratio", "opt_float", None),
        F("decay_type", "lit", "linear", ("linear", "sqrt", "cosine")), F("min_lr_factor", "float", 0.0),
    ]),
    N("training", "Training", [
        F("dataset", "str", "c4_test"), F("dataset_path", "opt_str", None), F("local_batch_size", "int", 8),
        F("global_batch_size", "int", -1), F("seq_len", "int", 2048), F("max_norm", "float_int", 1.0),
        F("steps", "int", 10000), F("enable_cpu_offload", "bool", False),
        F("dtype", "lit", "float32", ("bfloat16", "float32")),
        F("mixed_precision_param", "lit", "bfloat16", ("bfloat16", "float32")),
        F("mixed_precision_reduce", "lit", "float32", ("float32",)), F("gc_freq", "int", 50),
        F("gc_debug", "bool", False), N("dataloader", "DataLoader", _DATALOADER_A),
    ]),
    N("parallelism", "Parallelism", [
        F("data_parallel_replicate_degree", "int", 1), F("data_parallel_shard_degree", "int", -1),
        F("fsdp_reshard_after_forward", "lit", "default", ("default", "always", "never")),
        F("tensor_parallel_degree", "int", 1), F("disable_loss_parallel", "bool", False),
        F("enable_async_tensor_parallel", "bool", False), F("pipeline_parallel_degree", "int", 1),
        F("module_fqns_per_model_part", "opt_list_list_str", None),
        F("pipeline_parallel_first_stage_less_layers", "int", 1),
        F("pipeline_parallel_last_stage_less_layers", "int", 1),
        F("pipeline_parallel_layers_per_stage", "opt_int", None), F("pipeline_parallel_schedule", "str", "1F1B"),
        F("pipeline_parallel_schedule_csv", "opt_str", ""), F("pipeline_parallel_microbatch_size", "int", 1),
        F("pipeline_parallel_expert_parallel_overlap", "bool", True), F("context_parallel_degree", "int", 1),
        F("context_parallel_load_balancer", "opt_str", "headtail"),
        F("context_parallel_rotate_method", "lit", "allgather", ("allgather", "alltoall")),
        F("expert_parallel_degree", "int", 1), F("expert_tensor_parallel_degree", "int", 1),
        F("expert_parallel_comm_backend", "lit", "standard", ("standard", "deepep")),
    ], _check_parallelism_a),
    N("checkpoint", "Checkpoint", [
        F("enable", "bool", False), F("enable_ft_dataloader_checkpoints", "bool", True),
        F("folder", "str", "checkpoint"), F("interval", "int", 500), F("initial_load_path", "opt_str", None),
        F("initial_load_model_only", "bool", True), F("initial_load_in_hf", "bool", False),
        F("initial_load_in_hf_quantized", "bool", False), F("last_save_model_only", "bool", True),
        F("last_save_in_hf", "bool", False),
        F("export_dtype", "lit", "float32", ("float16", "bfloat16", "float32")),
        F("async_mode", "lit", "disabled", ("disabled", "async", "async_with_pinned_mem")),
        F("keep_latest_k", "int", 10), F("load_step", "int", -1), F("exclude_from_loading", "list_str", []),
        F("enable_first_step_checkpoint", "bool", False), F("create_seed_checkpoint", "bool", False),
        F("load_only", "bool", False),
    ]),
    N("activation_checkpoint", "ActivationCheckpoint", [
        F("mode", "lit", "selective", ("selective", "full", "memory_budget", "none")),
        F("selective_ac_option", "str", "2"),
        F("per_op_sac_force_recompute_mm_shapes_by_fqns", "list_str", ["moe.router.gate"]),
        F("early_stop", "bool", False), F("memory_budget", "float", 0.5),
        F("visualize_memory_budget_pareto", "bool", False), F("preserve_rng_state", "bool", True),
        F("determinism_check", "str", "default"), F("debug", "bool", False),
    ]),
    N("compile", "Compile", [
        F("enable", "bool", False), F("components", "list_str", ["model", "loss"]), F("backend", "str", "inductor"),
    ]),
    N("quantize", "Quantize", [
        N("linear", "QuantizedLinear", [
            N("float8", "Float8Linear", [
                F("enable_fsdp_float8_all_gather", "bool", False),
                F("precompute_float8_dynamic_scale_for_fsdp", "bool", False),
                F("recipe_name", "opt_lit", None, ("tensorwise", "rowwise", "rowwise_with_gw_hp")),
                F("filter_fqns", "list_str", []), F("emulate", "bool", False),
            ]),
            N("mx", "MXLinear", [
                F("mxfp8_dim1_cast_kernel_choice", "lit", "triton", ("triton", "cuda", "torch")),
                F("recipe_name", "str", "mxfp8_cublas"), F("filter_fqns", "list_str", ["output"]),
            ]),
        ]),
        N("grouped_mm", "QuantizedGroupedMM", [
            N("float8", "Float8GroupedMM", [F("fqns", "list_str_or_str", [])]),
            N("mx", "MXGroupedMM", [F("recipe_name", "lit", "mxfp8", ("mxfp8",)), F("fqns", "list_str_or_str", [])]),
        ]),
    ]),
    N("comm", "Comm", [
        F("init_timeout_seconds", "int", 300), F("train_timeout_seconds", "int", 100),
        F("trace_buf_size", "int", 20000), F("save_traces_folder", "str", "comm_traces"),
        F("save_traces_file_prefix", "str", "rank_"),
        F("mode", "lit", "default", ("default", "fake_backend", "local_tensor")),
    ]),
    N("memory_estimation", "MemoryEstimation", [F("enable", "bool", False), F("disable_fake_mode", "bool", False)]),
    N("fault_tolerance", "FaultTolerance", [
        F("enable", "bool", False), F("process_group", "str", "gloo"), F("process_group_timeout_ms", "int", 10000),
        F("replica_id", "int", 0), F("group_size", "int", 0), F("min_replica_size", "int", 1),
        F("semi_sync_method", "opt_str", None),
    ]),
    N("experimental", "Experimental", [F("custom_import", "str", ""), F("custom_args_module", "str", "")]),
    N("validation", "Validation", [
        F("enable", "bool", False), F("dataset", "str", "c4_validation"), F("dataset_path", "opt_str", None),
        F("local_batch_size", "int", 8), F("seq_len", "int", 2048), F("freq", "int", 10), F("steps", "int", -1),
        N("dataloader", "DataLoader", _DATALOADER_A),
    ], _check_validation_a),
    N("debug", "Debug", [
        F("seed", "opt_int", None), F("deterministic", "bool", False), F("deterministic_warn_only", "bool", False),
        F("moe_force_load_balance", "bool", False),
    ]),
]

# flavors of the models the emulator knows (torchtitan/models/<name>/__init__.py @ 238fa99)
_FLAVORS_A = {
    "llama3": ["debugmodel", "debugmodel_flex_attn", "debugmodel_varlen_attn", "8B", "8B_flex", "8B_varlen", "70B",
               "405B"],
    "deepseek_v3": ["debugmodel", "debugmodel_flex_attn", "16B", "236B", "671B"],
    "llama4": ["debugmodel", "17bx16e", "17bx128e", "debugmodel_irope", "17bx16e_irope", "17bx128e_irope"],
}
_MODELS_A = ["deepseek_v3", "flux", "gpt_oss", "llama3", "llama3_ft", "llama4", "qwen3"]
_EXPERIMENTS_A = ["simple_fsdp.llama3", "simple_fsdp.deepseek_v3", "vlm", "compiler_toolkit.deepseek_v3",
                  "compiler_toolkit.llama3", "transformers_modeling_backend", "autoparallel.llama3",
                  "autoparallel.deepseek_v3", "autoparallel.local_map_deepseek_v3"]
_DATASETS_A = {"c4": "allenai/c4", "c4_test": "tests/assets/c4_test", "c4_validation": "allenai/c4"}


class _Paths:
    def __init__(self, gen):
        root = _package_dir()
        self.train = os.path.join(root, "train.py")
        self.prog = self.train
        self.manager = os.path.join(root, "config", "manager.py")
        self.job_config = os.path.join(root, "config", "job_config.py")
        self.trainer = os.path.join(root, "trainer.py")
        self.parallel_dims = os.path.join(root, "distributed", "parallel_dims.py")
        self.checkpoint = os.path.join(root, "components", "checkpoint.py")
        self.dcp = os.path.join(root, "components", "checkpointer", "dcp.py")
        self.configurable = os.path.join(root, "config", "configurable.py")
        self.root = root

    def at(self, rel):
        return os.path.join(self.root, rel)


def _load_a(argv, log, paths):
    """ConfigManager.parse_args @ 238fa99: the TOML file, then tyro."""
    import tomllib

    entry = [(paths.train, 781, "<module>", "main(Trainer)"),
             (paths.train, 745, "main", "config = config_manager.parse_args()")]
    toml_path = None
    for i, arg in enumerate(argv):
        if "=" in arg:
            key, value = arg.split("=", 1)
            if key in ("--job.config-file", "--job.config_file"):
                toml_path = value
                break
        elif i < len(argv) - 1 and arg in ("--job.config-file", "--job.config_file"):
            toml_path = argv[i + 1]
            break
    data = None
    if toml_path is not None:
        frames = entry + [(paths.manager, 47, "parse_args", "toml_values = self._maybe_load_toml(args)"),
                          (paths.manager, 84, "_maybe_load_toml", "raise e")]
        try:
            with open(toml_path, "rb") as f:
                data = tomllib.load(f)
        except FileNotFoundError:
            inner = (paths.manager, 80, "_maybe_load_toml", 'with open(file_path, "rb") as f:')
            exc = ("FileNotFoundError", "[Errno 2] No such file or directory: {!r}".format(toml_path))
            log.error("Error while loading config file: {}".format(toml_path))
            _print_traceback([inner], exc[0], exc[1], stream=harness.out)
            raise _Fail(exc[0], exc[1], frames + [inner])
        except tomllib.TOMLDecodeError as e:
            inner = (paths.manager, 81, "_maybe_load_toml", "return tomllib.load(f)")
            log.error("Error while loading config file: {}".format(toml_path))
            _print_traceback([inner], "tomllib.TOMLDecodeError", str(e), stream=harness.out)
            raise _Fail("tomllib.TOMLDecodeError", str(e), frames + [inner])
        except OSError as e:
            raise _Fail(type(e).__name__, "[Errno {}] {}: {!r}".format(e.errno, e.strerror, toml_path),
                        entry + [(paths.manager, 47, "parse_args", "toml_values = self._maybe_load_toml(args)"),
                                 (paths.manager, 80, "_maybe_load_toml", 'with open(file_path, "rb") as f:')])
    custom = None
    for i, arg in enumerate(argv):
        if arg.split("=")[0] in ("--job.custom_config_module", "--job.custom-config-module"):
            custom = arg.split("=", 1)[1] if "=" in arg else (argv[i + 1] if i + 1 < len(argv) else None)
            break
    if not custom and data and isinstance(data.get("job"), dict):
        custom = data["job"].get("custom_config_module")
    if custom:
        harness.emulator_fault("job.custom_config_module={!r}: user extensions of JobConfig are not emulated".format(
            custom))
    defaults = _defaults_of(SCHEMA_A)
    if data:
        base_frames = entry + [(paths.manager, 51, "parse_args", "self._dict_to_dataclass(config_cls, toml_values)")]
        _dict_to_dataclass_a(SCHEMA_A, "JobConfig", data, defaults, base_frames, paths, log)
    parsed = _parse(SCHEMA_A, argv, paths.prog, defaults)
    values = json.loads(json.dumps(defaults))
    try:
        _instantiate(SCHEMA_A, parsed, values, log)
    except _ValueError as e:
        _value_error_box(e, paths.prog, defaults)
    except _AssertFail as e:
        raise _Fail("AssertionError", e.message, entry + [
            (paths.manager, 56, "parse_args", "self.config = tyro.cli(")] + [
            (paths.job_config, ln, fn, src) for _, ln, fn, src in e.frames])
    # _validate_config
    if values["experimental"]["custom_args_module"]:
        log.warning("This field is being moved to --job.custom_config_module and will be deprecated soon. Setting "
                    "job.custom_config_module to experimental.custom_args_module temporarily.")
        harness.emulator_fault("experimental.custom_args_module: user extensions of JobConfig are not emulated")
    if values["model"]["tokenizer_path"]:
        log.warning("tokenizer_path is deprecated, use model.hf_assets_path instead. Setting hf_assets_path to "
                    "tokenizer_path temporarily.")
        values["model"]["hf_assets_path"] = values["model"]["tokenizer_path"]
    if values["model"]["hf_assets_path"].endswith("tokenizer.model"):
        raise _Fail("Exception", repr((
            "You are using the old tokenizer.model, please redownload the tokenizer ",
            "(python scripts/download_hf_assets.py --repo_id meta-llama/Llama-3.1-8B --assets tokenizer) ",
            " and update your config to the directory of the downloaded tokenizer.")), entry + [
            (paths.manager, 60, "parse_args", "self._validate_config()"),
            (paths.manager, 217, "_validate_config", "raise Exception(")])
    return values


def _dict_to_dataclass_a(fields, cls, data, into, frames, paths, log):
    """ConfigManager._dict_to_dataclass: unknown names are errors; nested
    dataclasses are built (and checked) where the TOML gives their table."""
    valid = [f.name for f in fields]
    invalid = [k for k in data if k not in valid]
    here = frames + [(paths.manager, 167, "_dict_to_dataclass", "raise ValueError(")]
    if invalid:
        raise _Fail("ValueError", "Invalid field names in <class 'torchtitan.config.job_config.{}'> data: {{{}}}.\n"
                    "Please modify your .toml config file or override these fields from the command line.\n"
                    "Run `NGPU=1 ./run_train.sh --help` to read all valid fields.".format(
                        cls, ", ".join(repr(k) for k in invalid)), here)
    for f in fields:
        if f.name not in data:
            continue
        value = data[f.name]
        if isinstance(f, N) and isinstance(value, dict):
            child = into.setdefault(f.name, {})
            nested = frames + [(paths.manager, 178, "_dict_to_dataclass",
                                "result[f.name] = self._dict_to_dataclass(f.type, value)")]
            _dict_to_dataclass_a(f.fields, f.cls, value, child, nested, paths, log)
            if f.check:
                at = nested + [(paths.manager, 181, "_dict_to_dataclass", "return cls(**result)"),
                               ("<string>", len(f.fields) + 2, "__init__", None)]
                try:
                    f.check(child, log)
                except _CheckError as e:
                    raise _Fail("ValueError", e.message, at + [(paths.job_config, 441, "__post_init__",
                                                                "raise ValueError(")])
                except _AssertFail as e:
                    raise _Fail("AssertionError", e.message, at + [(paths.job_config, ln, fn, src)
                                                                   for _, ln, fn, src in e.frames])
        else:
            into[f.name] = value


# ---------------------------------------------------------------- generation B: Trainer.Config (torchtitan/trainer.py @ b5bcd76)


def _check_profiler_b(v, log):
    if v["enable_profiling"] and v["profile_freq"] < v["profiler_warmup"] + v["profiler_active"]:
        raise _CheckError("profiler.profile_freq must be greater than or equal to profiler_warmup + profiler_active.")


def _check_metrics_b(v, log):
    if v["log_freq"] <= 0:
        raise _CheckError("metrics.log_freq must be greater than 0.")


def _check_training_b(v, log):
    if v["num_tokens_per_microbatch_per_dp_rank"] <= 0:
        raise _CheckError("num_tokens_per_microbatch_per_dp_rank must be greater than 0.")
    if v["num_tokens_per_train_step"] != -1 and v["num_tokens_per_train_step"] <= 0:
        raise _CheckError("num_tokens_per_train_step must be -1 or greater than 0.")
    if v["max_context_length"] <= 0:
        raise _CheckError("max_context_length must be greater than 0.")


def _check_parallelism_b(v, log):
    if v["context_parallel_load_balancer"] == "":
        raise _CheckError("context_parallel_load_balancer cannot be an empty string. Use None to disable load "
                          "balancing.")


def _check_checkpoint_b(v, log):
    """BaseCheckpointManager.Config.__post_init__ and CheckpointManager.Config's."""
    if not v["folder"].strip():
        raise _CheckError("The 'folder' field cannot be empty.")
    if v["interval"] < 1:
        raise _CheckError("Checkpoint interval needs to be at least 1 step.")
    if v["keep_latest_k"] < 0:
        raise _CheckError("keep_latest_k cannot be negative.")
    if v["keep_latest_k"] == 1:
        raise _CheckError("We need to maintain at least 2 checkpoint replicas, as the last one may be in the process "
                          "of being saved.")
    excl = v["exclude_from_loading"]
    if "model" in excl:
        raise _CheckError("model key shouldn't be in exclude_from_loading.")
    if "optimizer" in excl and "lr_scheduler" not in excl:
        raise _CheckError("lr_scheduler must be excluded when optimizer is excluded.")
    if v["initial_load_path"]:
        v["initial_load_path"] = v["initial_load_path"].strip()
        p = v["initial_load_path"]
        if not (p.startswith("/") or "://" in p):
            raise _CheckError("initial_load_path must be an absolute path or a remote URI (e.g. gs://...): " + p)
    if v["initial_load_in_hf"] and not v["initial_load_model_only"]:
        raise _CheckError("initial_load_in_hf requires initial_load_model_only.")
    if v["initial_load_in_hf_quantized"] and not (v["initial_load_in_hf"] and v["initial_load_path"]):
        raise _CheckError("initial_load_in_hf_quantized requires initial_load_in_hf and initial_load_path.")
    if v["last_save_in_hf"] and not v["last_save_model_only"]:
        raise _CheckError("last_save_in_hf requires last_save_model_only=True.")
    if v["last_save_in_hf"] and "://" in v["folder"]:
        raise _CheckError("last_save_in_hf is not supported with a remote checkpoint.folder: " + v["folder"])
    if v["load_only"] and v["enable_first_step_checkpoint"]:
        log.warning("checkpoint.load_only is True; enable_first_step_checkpoint will be ignored.")
    if v["initial_load_model_only"] and not v["initial_load_path"]:
        log.warning("initial_load_model_only=True has no effect without an initial_load_path.")
    v["async_mode"] = v["async_mode"].lower()


def _check_compile_b(v, log):
    if v["enable_async_tensor_parallel"] and not (v["enable"] and "model" in v["components"]):
        raise _CheckError("Async TP requires 'model' in --compile.components and --compile.enable")


def _check_validator_b(v, log):
    if v["freq"] <= 0:
        raise _CheckError("validation frequency must be positive, got {}".format(v["freq"]))
    if not (v["steps"] > 0 or v["steps"] == -1):
        raise _AssertFail("validation steps must be positive or -1", [("validate.py", 102, "__post_init__",
                                                                        "assert (")])


_AC_COMMON_B = [F("preserve_rng_state", "bool", True), F("determinism_check", "str", "default"),
                F("debug", "bool", False)]


def _schema_b(cfg):
    """Trainer.Config as tyro lowers it, narrowed to the config function's
    instances (optimizer param group 0, the loss wrapper, the data loader)."""
    return [
        F("hf_assets_path", "str", "./tests/assets/tokenizer"),
        F("dump_folder", "str", "./outputs"),
        N("profiler", "Profiler.Config", [
            F("enable_profiling", "bool", False), F("save_traces_folder", "str", "profiling/traces"),
            F("profile_freq", "int", 10), F("profiler_repeat", "opt_int", None),
            F("profiler_skip_first", "opt_int", None), F("profiler_skip_first_wait", "opt_int", None),
            F("profiler_active", "int", 1), F("profiler_warmup", "int", 3), F("enable_memory_snapshot", "bool", False),
            F("memory_snapshot_freq", "opt_int", None),
            F("save_memory_snapshot_folder", "str", "profiling/memory_snapshot"),
            F("memory_snapshot_max_entries", "int", 1000000),
        ], _check_profiler_b),
        N("metrics", "MetricsProcessor.Config", [
            F("log_freq", "int", 10), F("enable_tensorboard", "bool", False), F("disable_color_printing", "bool", False),
            F("save_tb_folder", "str", "tb"), F("save_for_all_ranks", "bool", False), F("enable_wandb", "bool", False),
        ], _check_metrics_b),
        N("tokenizer", "HuggingFaceTokenizer.Config", []),
        N("dataloader", "GrainDataLoader.Config", [F("seed", "int", 42)]),
        N("optimizer", "OptimizersContainer.Config", [
            N("param_groups", "list", [N("0", "ParamGroupConfig", [
                F("pattern", "str", ".*"), F("optimizer_name", "str", "AdamW"),
                N("optimizer_kwargs", "dict", [F("lr", "float", 8e-4), F("betas", "fixed", "(0.9, 0.95)"),
                                               F("eps", "float", 1e-8), F("weight_decay", "float", 0.1)]),
            ])]),
            F("implementation", "lit", "fused", ("for-loop", "foreach", "fused", "fused_opt_states_bf16")),
        ]),
        N("lr_scheduler", "LRSchedulersContainer.Config", [
            F("warmup_steps", "int", 200), F("total_steps", "opt_int", None), F("decay_ratio", "opt_float", None),
            F("decay_type", "lit", "linear", ("linear", "sqrt", "cosine")), F("min_lr_factor", "float", 0.0),
        ]),
        N("training", "TrainingConfig", [
            F("num_tokens_per_microbatch_per_dp_rank", "int", 16384), F("num_tokens_per_train_step", "int", -1),
            F("max_context_length", "int", 2048), F("max_norm", "float_int", 1.0), F("steps", "int", 10000),
            F("enable_cpu_offload", "bool", False), F("disable_cuda_graphs", "bool", False),
            F("dtype", "lit", "float32", ("bfloat16", "float32")),
            F("mixed_precision_param", "lit", "bfloat16", ("bfloat16", "float32")),
            F("mixed_precision_reduce", "lit", "float32", ("float32",)), F("gc_freq", "int", 50),
            F("gc_debug", "bool", False),
        ], _check_training_b),
        N("parallelism", "ParallelismConfig", [
            F("data_parallel_replicate_degree", "int", 1), F("data_parallel_shard_degree", "int", -1),
            F("fsdp_reshard_after_forward", "lit", "default", ("default", "always", "never")),
            F("enable_fsdp_symm_mem", "bool", False), F("tensor_parallel_degree", "int", 1),
            F("enable_sequence_parallel", "bool", True),
            F("spmd_backend", "lit", "spmd_types", ("partial_dtensor", "spmd_types")),
            F("pipeline_parallel_degree", "int", 1), F("module_fqns_per_model_part", "opt_list_list_str", None),
            F("pipeline_parallel_first_stage_less_layers", "int", 1),
            F("pipeline_parallel_last_stage_less_layers", "int", 1),
            F("pipeline_parallel_layers_per_stage", "opt_int", None), F("pipeline_parallel_schedule", "str", "1F1B"),
            F("pipeline_parallel_schedule_csv", "opt_str", ""), F("num_pp_microbatches", "int", 1),
            F("context_parallel_degree", "int", 1), F("context_parallel_load_balancer", "opt_str", "headtail"),
            F("context_parallel_ptrr_mask_key", "opt_str", None), F("expert_parallel_degree", "int", 1),
        ], _check_parallelism_b),
        N("checkpoint", "CheckpointManager.Config", [
            F("enable", "bool", False), F("folder", "str", "checkpoint"), F("interval", "int", 500),
            F("initial_load_path", "opt_str", None), F("initial_load_model_only", "bool", True),
            F("initial_load_in_hf", "bool", False), F("initial_load_in_hf_quantized", "bool", False),
            F("last_save_model_only", "bool", True), F("last_save_in_hf", "bool", False),
            F("export_dtype", "lit", "float32", ("float16", "bfloat16", "float32")), F("keep_latest_k", "int", 10),
            F("load_step", "int", -1), F("exclude_from_loading", "list_str", []),
            F("enable_first_step_checkpoint", "bool", False), F("create_seed_checkpoint", "bool", False),
            F("load_only", "bool", False),
            F("async_mode", "lit", "disabled", ("disabled", "async", "async_with_pinned_mem")),
        ], _check_checkpoint_b),
        S("activation_checkpoint", [
            ("selective", _AC_COMMON_B + [F("force_recompute_mm_shapes_by_fqns", "list_str", ["moe.router.gate"])]),
            ("full", list(_AC_COMMON_B)),
            ("memory-budget", _AC_COMMON_B + [F("memory_budget", "float", 0.5),
                                              F("visualize_memory_budget_pareto", "bool", False)]),
            ("none", []),
        ], cfg["ac"]),
        N("compile", "CompileConfig", [
            F("enable", "bool", False), F("enable_async_tensor_parallel", "bool", False),
            F("components", "list_str", ["model", "loss"]), F("backend", "str", "inductor"),
        ], _check_compile_b),
        N("comm", "CommConfig", [
            F("init_timeout_seconds", "int", 300), F("train_timeout_seconds", "int", 100),
            F("trace_buf_size", "int", 20000), F("save_traces_folder", "str", "comm_traces"),
            F("save_traces_file_prefix", "str", "rank_"),
            F("mode", "lit", "default", ("default", "fake_backend", "local_tensor", "torchcomms")),
        ]),
        N("validator", "Validator.Config", [
            F("freq", "int", 10), F("enable", "bool", False), F("steps", "int", -1),
            N("dataloader", "GrainDataLoader.Config", [F("seed", "int", 42)]),
        ], _check_validator_b),
        N("debug", "DebugConfig", [
            F("seed", "opt_int", None), F("spmd_typechecking", "bool", False), F("deterministic", "bool", False),
            F("deterministic_warn_only", "bool", False), F("moe_force_load_balance", "bool", False),
            F("detect_anomaly", "bool", False), F("batch_invariant", "bool", False), F("print_config", "bool", False),
            F("save_config_file", "opt_str", None), F("enable_structured_logging", "bool", True),
        ]),
        N("override", "OverrideConfig", [F("imports", "imports", [])]),
        N("loss", "ChunkedLossWrapper.Config", [
            F("num_chunks", "int", 8),
            N("loss_fn", "CrossEntropyLoss.Config", [F("global_vocab_size", "opt_int", cfg["vocab"])]),
        ]),
    ]


def _adamw(lr):
    return {"param_groups": {"0": {"optimizer_kwargs": {"lr": lr}}}}


# The config functions of the emulated registries (config_registry.py @ b5bcd76):
# the values each sets on top of the dataclass defaults.
_B_LLAMA3 = {
    "llama3_debugmodel": dict(name="llama3", flavor="debugmodel", vocab=2048, ac="selective", attn="sdpa", quant=False,
                              values={
        "hf_assets_path": "./tests/assets/tokenizer", "optimizer": _adamw(8e-4),
        "lr_scheduler": {"warmup_steps": 2, "decay_ratio": 0.8, "decay_type": "linear", "min_lr_factor": 0.0},
        "training": {"num_tokens_per_microbatch_per_dp_rank": 8 * 2048, "max_context_length": 2048, "steps": 10},
        "metrics": {"log_freq": 1}, "parallelism": {"pipeline_parallel_schedule": "Interleaved1F1B"},
        "checkpoint": {"interval": 10, "last_save_model_only": False},
        "validator": {"freq": 5, "steps": 10}}, dataset="c4_test"),
    "llama3_8b": dict(name="llama3", flavor="8B", vocab=128256, ac="selective", attn="sdpa", quant=False, values={
        "hf_assets_path": "./assets/hf/Llama-3.1-8B", "profiler": {"enable_profiling": True, "profile_freq": 100},
        "metrics": {"enable_tensorboard": True}, "optimizer": _adamw(3e-4),
        "training": {"num_tokens_per_microbatch_per_dp_rank": 1 * 8192, "max_context_length": 8192, "steps": 1000},
        "checkpoint": {"interval": 500}, "validator": {"freq": 500, "steps": 1200}}, dataset="c4"),
    "llama3_70b": dict(name="llama3", flavor="70B", vocab=128256, ac="full", attn="sdpa", quant=False, values={
        "hf_assets_path": "./assets/hf/Llama-3.1-70B", "profiler": {"enable_profiling": True, "profile_freq": 100},
        "metrics": {"enable_tensorboard": True}, "optimizer": _adamw(1.5e-4),
        "training": {"num_tokens_per_microbatch_per_dp_rank": 8 * 8192, "max_context_length": 8192, "steps": 1000},
        "parallelism": {"tensor_parallel_degree": 8}, "checkpoint": {"interval": 500},
        "validator": {"freq": 500, "steps": 1200}}, dataset="c4"),
    "llama3_405b": dict(name="llama3", flavor="405B", vocab=128256, ac="full", attn="sdpa", quant=True, values={
        "hf_assets_path": "./assets/hf/Llama-3.1-405B", "profiler": {"enable_profiling": True, "profile_freq": 100},
        "metrics": {"enable_tensorboard": True}, "optimizer": _adamw(8e-5), "lr_scheduler": {"warmup_steps": 600},
        "training": {"num_tokens_per_microbatch_per_dp_rank": 2 * 8192, "max_context_length": 8192, "steps": 3000},
        "parallelism": {"tensor_parallel_degree": 8}, "checkpoint": {"interval": 500},
        "compile": {"enable": True, "enable_async_tensor_parallel": True},
        "validator": {"freq": 500, "steps": 1200}}, dataset="c4"),
}
_B_DEEPSEEK = {
    "deepseek_v3_16b": dict(name="deepseek_v3", flavor="16B", vocab=102400, ac="selective", attn="flex", quant=False,
                            values={
        "hf_assets_path": "./assets/hf/deepseek-moe-16b-base", "optimizer": _adamw(2.2e-4),
        "lr_scheduler": {"decay_ratio": 0.8, "decay_type": "cosine", "min_lr_factor": 0.1},
        "training": {"num_tokens_per_microbatch_per_dp_rank": 4 * 4096, "max_context_length": 4096, "steps": 1000,
                     "disable_cuda_graphs": True},
        "parallelism": {"pipeline_parallel_schedule": "Interleaved1F1B", "expert_parallel_degree": 8},
        "checkpoint": {"interval": 10}, "compile": {"enable": True, "components": ["loss"]}}, dataset="c4"),
    "deepseek_v3_671b": dict(name="deepseek_v3", flavor="671B", vocab=129280, ac="selective", attn="flex", quant=False,
                             values={
        "hf_assets_path": "./assets/hf/DeepSeek-V3.1-Base", "optimizer": _adamw(2.2e-4),
        "lr_scheduler": {"warmup_steps": 2000, "decay_ratio": 0.8, "decay_type": "cosine", "min_lr_factor": 0.1},
        "training": {"num_tokens_per_microbatch_per_dp_rank": 4 * 4096, "max_context_length": 4096, "steps": 10000,
                     "disable_cuda_graphs": True},
        "parallelism": {"pipeline_parallel_schedule": "Interleaved1F1B", "expert_parallel_degree": 2},
        "checkpoint": {"interval": 500}, "compile": {"enable": True, "components": ["loss"]}}, dataset="c4"),
}
_B_MODULES = {
    "llama3": ("torchtitan.models.llama3.config_registry", _B_LLAMA3, [
        "cast", "decoder_vocab_size", "default_adamw", "llama3_405b", "llama3_70b", "llama3_8b",
        "llama3_8b_first_85_pct_layers_nvfp4", "llama3_8b_mxfp8", "llama3_debugmodel", "llama3_debugmodel_ce_loss",
        "llama3_debugmodel_dist_gemm", "llama3_debugmodel_first_85_pct_layers_nvfp4", "llama3_debugmodel_float8",
        "llama3_debugmodel_float8_emulate_lora", "llama3_debugmodel_nvfp4", "llama3_debugmodel_varlen_attn",
        "model_registry", "nvfp4_bf16_tail_fqns", "sft_debugmodel"]),
    "deepseek_v3": ("torchtitan.models.deepseek_v3.config_registry", _B_DEEPSEEK, [
        "decoder_vocab_size", "deepseek_v3_16b", "deepseek_v3_16b_hybridep", "deepseek_v3_16b_minimal_async_ep",
        "deepseek_v3_671b", "deepseek_v3_671b_float8", "deepseek_v3_debugmodel", "deepseek_v3_debugmodel_hybridep",
        "deepseek_v3_debugmodel_minimal_async_ep", "deepseek_v3_debugmodel_mtp", "deepseek_v3_debugmodel_mxfp8",
        "default_adamw", "enable_fused_swiglu", "model_registry"]),
}
_B_SUPPORTED = ["deepseek_v3", "flux", "gpt_oss", "kimi_k2_7", "llama3", "muse_glimmer", "qwen3", "qwen3_5",
                "graph_trainer.llama3", "graph_trainer.deepseek_v3", "graph_trainer.qwen3",
                "graph_trainer.muse_glimmer", "transformers_modeling_backend", "autoparallel.llama3",
                "autoparallel.local_map_deepseek_v3", "torchft.llama3", "rl", "alphabet_sort", "dapo_math",
                "search_r1"]


def _load_b(argv, log, paths):
    """ConfigManager.parse_args @ b5bcd76: --module/--config, the config
    function, then tyro over the rest."""
    entry = [(paths.train, 79, "<module>", "main()"),
             (paths.train, 29, "main", "config = config_manager.parse_args()"),
             (paths.manager, 37, "parse_args", "loaded_config, args = self._load_config(args)")]
    module_name = config_name = None
    rest = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg.startswith("--module="):
            module_name = arg.split("=", 1)[1]
        elif arg == "--module":
            if i + 1 < len(argv):
                module_name = argv[i + 1]
                i += 1
            else:
                raise _Fail("ValueError", "--module requires a value", entry + [
                    (paths.manager, 70, "_load_config", 'raise ValueError("--module requires a value")')])
        elif arg.startswith("--config="):
            config_name = arg.split("=", 1)[1]
        elif arg == "--config":
            if i + 1 < len(argv):
                config_name = argv[i + 1]
                i += 1
            else:
                raise _Fail("ValueError", "--config requires a value", entry + [
                    (paths.manager, 79, "_load_config", 'raise ValueError("--config requires a value")')])
        else:
            rest.append(arg)
        i += 1
    if module_name is None:
        raise _Fail("ValueError", "--module is required. Example: --module llama3 --config llama3_debugmodel",
                    entry + [(paths.manager, 86, "_load_config", "raise ValueError(")])
    if config_name is None:
        raise _Fail("ValueError", "--config is required. Example: --module llama3 --config llama3_debugmodel",
                    entry + [(paths.manager, 90, "_load_config", "raise ValueError(")])
    key = module_path = None
    if module_name in _B_SUPPORTED:
        if module_name not in _B_MODULES:
            harness.emulator_fault("--module {}: only llama3 and deepseek_v3 are emulated".format(module_name))
        key = module_name
        module_path = "torchtitan.models.{}.config_registry".format(module_name)
    else:
        for name in _B_MODULES:
            if module_name in ("torchtitan.models." + name, "torchtitan.models.{}.config_registry".format(name)):
                key = name
                module_path = "torchtitan.models.{}.config_registry".format(name)
        if key is None:
            parts = module_name.split(".")
            if parts[0] == "torchtitan_recipes" or (
                    len(parts) >= 3 and parts[0] == "torchtitan" and parts[1] in ("models", "experiments")
                    and parts[2] in [m.split(".")[0] for m in _B_SUPPORTED]):
                harness.emulator_fault("--module {}: this module exists in torchtitan but is not emulated".format(
                    module_name))
            raise _Fail("ImportError", "Cannot import module '{0}' or '{0}.config_registry'. For shorthands, "
                        "supported modules are: {1}".format(module_name, sorted(_B_SUPPORTED)),
                        entry + [(paths.manager, 137, "_load_config", "raise ImportError(")])
    _, registry, available = _B_MODULES[key]
    if config_name not in available or config_name.startswith("_") or not config_name[:1].islower():
        raise _Fail("ValueError", "Config function '{}' not found in {}. Available config functions: {}".format(
            config_name, module_path, available), entry + [(paths.manager, 153, "_load_config", "raise ValueError(")])
    if config_name not in registry:
        harness.emulator_fault("--config {}: this config function exists but is not emulated (emulated: {})".format(
            config_name, ", ".join(sorted(registry))))
    cfg = registry[config_name]
    schema = _schema_b(cfg)
    defaults = _merge(_defaults_of(schema), cfg["values"])
    # constructing the config function's CheckpointManager.Config (its __post_init__)
    _check_checkpoint_b(json.loads(json.dumps(defaults["checkpoint"])), log)
    parsed = _parse(schema, rest, paths.prog, defaults)
    values = json.loads(json.dumps(defaults))
    tyro_frame = (paths.manager, 40, "parse_args", "self.config = tyro.cli(")
    try:
        _instantiate(schema, parsed, values, log)
        values["ac"] = values.pop("_activation_checkpoint")
    except _ValueError as e:
        _value_error_box(e, paths.prog, defaults)
    except _AssertFail as e:
        raise _Fail("AssertionError", e.message, entry[:2] + [tyro_frame] + [
            (paths.at("components/" + f), ln, fn, src) for f, ln, fn, src in e.frames])
    values["_cfg"] = cfg
    _trainer_config_post_init_b(values, cfg, entry[:2] + [tyro_frame], paths)
    if values["override"]["imports"]:
        harness.emulator_fault("--override.imports: override modules are not emulated")
    if values["hf_assets_path"].endswith("tokenizer.model"):
        raise _Fail("Exception", repr((
            "You are using the old tokenizer.model, please redownload the tokenizer ",
            "(python scripts/download_hf_assets.py --repo_id meta-llama/Llama-3.1-8B --assets tokenizer) ",
            " and update your config to the directory of the downloaded tokenizer.")), entry[:2] + [
            (paths.manager, 44, "parse_args", "self._validate_config()"),
            (paths.manager, 225, "_validate_config", "raise Exception(")])
    return values


def _trainer_config_post_init_b(v, cfg, frames, paths):
    """Trainer.Config.__post_init__: not caught by tyro (the root), so a traceback."""
    def fail(line, msg):
        raise _Fail("ValueError", msg, frames + [(paths.trainer, line, "__post_init__", "raise ValueError(")])

    if v["debug"]["batch_invariant"]:
        fail(120, "Batch-invariant mode is not supported in pre-training.")
    if v["parallelism"]["num_pp_microbatches"] <= 0:
        fail(126, "parallelism.num_pp_microbatches must be greater than 0.")
    if not v["training"]["disable_cuda_graphs"] and v["parallelism"]["pipeline_parallel_degree"] > 1:
        raise _Fail("ValueError", "CUDA graphs do not support pipeline parallelism yet. Set "
                    "--training.disable_cuda_graphs.", frames + [
                        (paths.trainer, 130, "__post_init__", "self._validate_cuda_graphs()"),
                        (paths.trainer, 173, "_validate_cuda_graphs", "raise ValueError(")])
    typecheck = v["parallelism"]["spmd_backend"] == "spmd_types" and v["debug"]["spmd_typechecking"]
    if typecheck and v["parallelism"]["pipeline_parallel_degree"] > 1:
        fail(138, "SPMD typechecking is not supported with pipeline parallelism. Validate the same config without PP "
                  "(--parallelism.pipeline_parallel_degree 1).")
    if typecheck and v["ac"] == "selective" and cfg["attn"] == "flex":
        fail(152, "Selective activation checkpointing (SAC) is not supported with FlexAttention while SPMD "
                  "typechecking is enabled. Use full activation checkpointing, disable activation checkpointing, or "
                  "switch to a non-Flex attention backend.")
    if v["ac"] == "memory-budget" and not (v["compile"]["enable"] and "model" in v["compile"]["components"]):
        fail(162, "Memory budget activation checkpointing requires the model to be compiled: set --compile.enable "
                  "and include 'model' in --compile.components.")


# ---------------------------------------------------------------- the run's settings, either generation


class _Run:
    """What the training process needs from the parsed config."""

    def __init__(self, gen, v):
        self.gen = gen
        self.v = v
        if gen == GEN_A:
            j, m, t, p, c = v["job"], v["model"], v["training"], v["parallelism"], v["checkpoint"]
            self.dump = j["dump_folder"]
            self.name, self.flavor = m["name"], m["flavor"]
            self.metrics = v["metrics"]
            self.prof = v["profiling"]
            self.prof_folder = self.prof["save_traces_folder"]
            self.snap_folder = self.prof["save_memory_snapshot_folder"]
            self.steps, self.gc_freq, self.gc_debug = t["steps"], t["gc_freq"], t["gc_debug"]
            self.warmup = v["lr_scheduler"]["warmup_steps"]
            self.lr = v["lr_scheduler"]
            self.dp_rep, self.dp_shard = p["data_parallel_replicate_degree"], p["data_parallel_shard_degree"]
            self.cp, self.tp, self.pp = p["context_parallel_degree"], p["tensor_parallel_degree"], p[
                "pipeline_parallel_degree"]
            self.ep, self.etp = p["expert_parallel_degree"], p["expert_tensor_parallel_degree"]
            self.ckpt = c
            self.comm = v["comm"]
            self.quantized = False
            self.compile = v["compile"]
            self.ac = v["activation_checkpoint"]["mode"]
            self.validation = v["validation"]
            self.cpu_offload = t["enable_cpu_offload"]
        else:
            t, p = v["training"], v["parallelism"]
            self.dump = v["dump_folder"]
            cfg = v["_cfg"]
            self.name, self.flavor = cfg["name"], cfg["flavor"]
            self.metrics = v["metrics"]
            self.prof = v["profiler"]
            self.prof_folder = self.prof["save_traces_folder"]
            self.snap_folder = self.prof["save_memory_snapshot_folder"]
            self.steps, self.gc_freq, self.gc_debug = t["steps"], t["gc_freq"], t["gc_debug"]
            self.warmup = v["lr_scheduler"]["warmup_steps"]
            self.lr = v["lr_scheduler"]
            self.dp_rep, self.dp_shard = p["data_parallel_replicate_degree"], p["data_parallel_shard_degree"]
            self.cp, self.tp, self.pp = p["context_parallel_degree"], p["tensor_parallel_degree"], p[
                "pipeline_parallel_degree"]
            self.ep, self.etp = p["expert_parallel_degree"], 1
            self.ckpt = v["checkpoint"]
            self.comm = v["comm"]
            self.quantized = cfg["quant"]
            self.compile = v["compile"]
            self.ac = v["ac"]
            self.validation = v["validator"]
            self.cpu_offload = t["enable_cpu_offload"]


# ---------------------------------------------------------------- the training process


class _Proc:
    def __init__(self, gen, run, log, paths):
        self.gen, self.run, self.log, self.paths = gen, run, log, paths
        self.w = harness.worker()
        self.world = self.w.world_size
        self.rank = self.w.rank
        self.step = 0
        self.purge_thread = False
        self.tb_dir = None
        self.metrics_t = 0.0  # the simulated clock at the last log
        self.tokens_window = 0
        self.fake = False

    # -- failing as the framework does

    def fail(self, exc, message, frames):
        raise _Fail(exc, message, frames)

    # -- start-up

    def init(self):
        g, r, log, P = self.gen, self.run, self.log, self.paths
        if g == GEN_A:
            log.info("Starting job: {}".format(r.v["job"]["description"]))
            if r.v["experimental"]["custom_import"]:
                harness.emulator_fault("experimental.custom_import={!r}: user modules are not emulated".format(
                    r.v["experimental"]["custom_import"]))
            init_frames = [(P.train, 781, "<module>", "main(Trainer)"),
                           (P.train, 749, "main", "trainer = trainer_class(config)")]
            if "LOCAL_RANK" not in os.environ:
                self.fail("KeyError", "'LOCAL_RANK'", init_frames + [(P.train, 88, "__init__", "self.device = "
                          "torch.device(f\"{device_type}:{int(os.environ['LOCAL_RANK'])}\")")])
            harness.check_device(self.w)
        else:
            init_frames = [(P.train, 79, "<module>", "main()"),
                           (P.train, 51, "main", "trainer = config.build()  # pyrefly: ignore [missing-attribute]"),
                           (P.configurable, 151, "build", "return self._owner(config=replace(self))")]
            dev = [(P.trainer, 288, "__init__", "self.device = utils.get_local_device()")]
            lr = os.environ.get("LOCAL_RANK")
            if lr is None:
                self.fail("ValueError", "LOCAL_RANK must be set before selecting a local device.", init_frames + dev + [
                    (P.at("tools/utils.py"), 75, "get_local_device",
                     'raise ValueError("LOCAL_RANK must be set before selecting a local device.")')])
            gpus = os.environ.get("ATTUNE_EMULATE_GPUS", "")
            if gpus and int(gpus) > 1 and int(lr) >= int(gpus):
                self.fail("ValueError", "LOCAL_RANK={} is outside the visible cuda device count ({}). If each process "
                          "is launched with a single visible cuda device, set the visible-device mask per process so "
                          "device_count() returns 1.".format(lr, gpus), init_frames + dev + [
                              (P.at("tools/utils.py"), 91, "get_local_device", "raise ValueError(")])
        self.init_frames = init_frames
        self.init_distributed()
        self.parallel_dims()

    def init_distributed(self):
        """dist_utils.init_distributed: fake modes, the flight-recorder
        environment, the process group."""
        r, log = self.run, self.log
        mode = r.comm["mode"]
        if mode == "torchcomms":
            harness.emulator_fault("comm.mode=torchcomms is not emulated")
        if mode in ("fake_backend", "local_tensor"):
            ngpu = os.environ.get("NGPU")
            if ngpu is None:
                self.fail("ValueError", "NGPU environment variable must be set when using comm_mode=" + mode,
                          self.init_frames)
            try:
                self.world = int(ngpu)
            except ValueError:
                self.fail("ValueError", "NGPU environment variable must be a valid integer, got: " + ngpu,
                          self.init_frames)
            self.rank = 0
            self.fake = True  # one process stands for NGPU ranks
            return

        def overwrite(name, val):
            if name in os.environ:
                log.warning("ENV[{}] = {} will be overridden to {} based on job config".format(
                    name, os.environ[name], val))
            os.environ[name] = val

        overwrite("TORCH_NCCL_ASYNC_ERROR_HANDLING", "3")
        overwrite("TORCH_FR_BUFFER_SIZE", str(r.comm["trace_buf_size"]))
        if r.comm["trace_buf_size"] > 0:
            overwrite("TORCH_NCCL_DUMP_ON_TIMEOUT", "1")
            dump_dir = os.path.join(r.dump, r.comm["save_traces_folder"])
            os.makedirs(dump_dir, exist_ok=True)
            overwrite("TORCH_FR_DUMP_TEMP_FILE", "{}/{}".format(dump_dir, r.comm["save_traces_file_prefix"]))
        for var in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
            if var not in os.environ:
                self.fail("ValueError", "Error initializing torch.distributed using env:// rendezvous: environment "
                          "variable {} expected, but not set".format(var), self.init_frames)
        # ranks leave init_process_group together: one clock for all their lines
        t0s = _barrier("init_process_group", self.world, self.rank, payload=log.t0)
        if t0s:
            log.t0 = min(t0s)
        log.wait(5.0)

    def parallel_dims(self):
        """ParallelDims._validate."""
        r, P = self.run, self.paths
        if self.gen == GEN_A:
            frames = self.init_frames + [
                (P.train, 93, "__init__", "self.parallel_dims = parallel_dims = self.init_distributed()"),
                (P.train, 373, "init_distributed", "return ParallelDims("), ("<string>", 12, "__init__", None),
                (P.parallel_dims, 33, "__post_init__", "self._validate()")]
            lines = (46, 48, 51, 53, 59)
        else:
            frames = self.init_frames + [
                (P.trainer, 293, "__init__", "self.parallel_dims = parallel_dims = self.init_distributed()"),
                (P.trainer, 640, "init_distributed",
                 "return ParallelDims.from_config(config.parallelism, world_size)"),
                (P.parallel_dims, 152, "from_config", "return cls("), ("<string>", 13, "__init__", None),
                (P.parallel_dims, 164, "__post_init__", "self._validate()")]
            lines = (176, 177, 180, 182, None)
        self.pd_frames = frames

        def assert_(ok, line, src, msg=""):
            if not ok:
                self.fail("AssertionError", msg, frames + [(P.parallel_dims, line, "_validate", src)])

        degrees = [r.dp_rep, r.cp, r.tp, r.pp, r.ep] + ([r.etp] if self.gen == GEN_A else [])
        for d in degrees:
            assert_(d >= 1, lines[0], 'assert d >= 1, "Parallelism degree should be >= 1, except for dp_shard"',
                    "Parallelism degree should be >= 1, except for dp_shard")
        dp_shard = r.dp_shard
        assert_(dp_shard == -1 or dp_shard >= 1, lines[1], 'assert dp_shard == -1 or dp_shard >= 1, "dp_shard must '
                '-1 or >=1."', "dp_shard must -1 or >=1.")
        if dp_shard < 0:
            dp_shard = self.world // (r.dp_rep * r.cp * r.tp * r.pp)
        assert_(dp_shard >= 1, lines[2], "assert dp_shard >= 1")
        assert_(r.dp_rep * dp_shard * r.cp * r.tp * r.pp == self.world, lines[3], "assert dp_replicate * dp_shard * "
                "cp * tp * pp == self.world_size, (",
                "Invalid parallel dims: dp_replicate({}) * dp_shard({}) * cp({}) * tp({}) * pp({}) != WORLD_SIZE({})"
                .format(r.dp_rep, dp_shard, r.cp, r.tp, r.pp, self.world))
        if self.gen == GEN_A:
            if r.ep > 1:
                assert_(r.etp == r.tp or r.etp == 1, lines[4], 'assert etp == tp or etp == 1, "Currently we only '
                        'support ETP=TP or ETP=1"', "Currently we only support ETP=TP or ETP=1")
        else:
            sparse = dp_shard * r.cp * r.tp
            if sparse % r.ep != 0:
                self.fail("ValueError", "expert_parallel_degree ({}) must divide dp_shard * cp * tp ({})".format(
                    r.ep, sparse), frames + [(P.parallel_dims, 189, "_validate", "raise ValueError(")])
        self.dp_shard = dp_shard
        self.dp_enabled = r.dp_rep > 1 or dp_shard > 1
        self.dp_degree = r.dp_rep * dp_shard if self.dp_enabled else 1
        self.non_dp = r.cp * r.tp * r.pp

    def build_mesh(self):
        """ParallelDims.build_mesh's log lines (mesh sizes from the degrees)."""
        r, log = self.run, self.log
        if getattr(self, "mesh_built", False):
            return
        self.mesh_built = True
        if self.gen == GEN_A:
            log.info("Building device mesh with parallelism: pp={}, dp_replicate={}, dp_shard={}, cp={}, tp={}, ep={}, "
                     "etp={}".format(r.pp, r.dp_rep, self.dp_shard, r.cp, r.tp, r.ep, r.etp))
            efsdp = self.dp_shard * r.cp * r.tp // (r.etp * r.ep)
            if efsdp < 1:
                # torch's DeviceMesh cannot unflatten a zero-sized dimension
                self.fail("RuntimeError", "The product of mesh dims {} does not match the world size {}".format(
                    [r.pp, r.dp_rep, efsdp, r.ep, r.etp], self.world), self.pd_frames[:-2])
            sizes = [("pp", r.pp), ("batch", r.dp_rep * self.dp_shard), ("loss", r.dp_rep * self.dp_shard * r.cp),
                     ("dp_replicate", r.dp_rep), ("fsdp", self.dp_shard * r.cp), ("cp", r.cp), ("tp", r.tp),
                     ("ep", r.ep), ("efsdp", efsdp), ("etp", r.etp)]
            active = [n for n, s in sizes if s > 1]
        else:
            log.info("Building device mesh with parallelism: pp={}, dp_replicate={}, dp_shard={}, cp={}, tp={}, ep={}"
                     .format(r.pp, r.dp_rep, self.dp_shard, r.cp, r.tp, r.ep))
            efsdp = self.dp_shard * r.cp * r.tp // r.ep
            sizes = [("pp", r.pp), ("batch", r.dp_rep * self.dp_shard), ("loss", r.dp_rep * self.dp_shard * r.cp),
                     ("dp_replicate", r.dp_rep), ("cp", r.cp), ("tp", r.tp), ("ep", r.ep)]
            if r.ep > 1:
                sizes.append(("efsdp", efsdp))
            if r.v["parallelism"]["spmd_backend"] == "spmd_types":
                sizes += [("dp", r.dp_rep * self.dp_shard), ("dp_shard", self.dp_shard)]
            else:
                sizes.append(("fsdp", self.dp_shard * r.cp))
            active = [n for n, s in sizes if s > 1]
        log.info("Successfully created meshes with active dimensions: {}".format(active))

    def trainer_init(self):
        g, r, log, P = self.gen, self.run, self.log, self.paths
        pred = self.pred = harness.prediction(self.w)
        self.clock = harness.StepClock(pred)
        if g == GEN_B:
            tokens_mb = r.v["training"]["num_tokens_per_microbatch_per_dp_rank"]
            divisor = (r.tp if r.v["parallelism"]["enable_sequence_parallel"] else 1) * (2 * r.cp if r.cp > 1 else 1)
            if tokens_mb % divisor != 0:
                self.fail("ValueError", "The number of tokens per pipeline microbatch ({}) must be divisible by {} "
                          "for the configured sequence/context parallelism.".format(tokens_mb, divisor),
                          self.init_frames + [(P.trainer, 303, "__init__", "raise ValueError(")])
        self.maybe_log_config()
        if self.dp_enabled:
            self.build_mesh()
        if r.gc_freq <= 0:
            self.fail("AssertionError", "gc_freq must be a positive integer", self.init_frames + [
                (P.train if g == GEN_A else P.trainer, 105 if g == GEN_A else 324, "__init__",
                 "self.gc_handler = utils.GarbageCollection("),
                (P.at("tools/utils.py"), 48 if g == GEN_A else 103, "__init__",
                 'assert gc_freq > 0, "gc_freq must be a positive integer"')])
        log.info("[GC] Initial GC collection took 0.00 seconds")
        if r.v["debug"]["deterministic"]:
            log.info("Deterministic algorithm enabled (expect perf degradation).")
        if self.world > 1:
            self.build_mesh()
        if g == GEN_A:
            self.train_spec_a()
            self.tokenizer_and_data_a()
        else:
            log.info("Building {} {}".format(r.name, r.flavor))
        log.wait(10.0)
        self.metrics_processor()
        if r.compile["enable"] and "loss" in r.compile["components"]:
            log.info("Compiling the loss function with torch.compile")
        self.batch_sizes()
        self.parallelize()
        self.build_mesh()
        log.wait(10.0)
        peak = self.peak_flops()
        log.info("Peak FLOPS used for computing MFU: {:.3e}".format(peak))
        model_gib = float((pred.data.get("memory") or {}).get("weights_gib") or 0.0)
        log.info("CUDA memory usage for model: {:.2f}GiB({:.2f}%)".format(model_gib, 100 * model_gib / self.capacity))
        self.lr_scheduler()
        if g == GEN_B:
            log.info("Loading tokenizer from tokenizer.json")
        self.checkpointer_init()
        if g == GEN_A:
            self.mixed_precision_a()
            if r.validation["enable"] and r.validation["steps"] == -1:
                log.warning("Setting validation steps to -1 might cause hangs because of unequal sample counts across "
                            "ranks when dataset is exhausted.")
        log.wait(5.0)
        if g == GEN_A:
            log.info("Trainer is initialized with local batch size {}, global batch size {}, gradient accumulation "
                     "steps {}, sequence length {}, total steps {} (warmup {})".format(
                         r.v["training"]["local_batch_size"], self.global_batch, self.grad_accum,
                         r.v["training"]["seq_len"], r.steps, r.warmup))
        else:
            log.info("Trainer is initialized with {} tokens per DP rank, {} tokens per train step, gradient "
                     "accumulation steps {}, maximum context length {}, total steps {} (warmup {})".format(
                         self.tokens_per_dp_rank, self.tokens_per_step, self.grad_accum,
                         r.v["training"]["max_context_length"], r.steps, r.warmup))

    def maybe_log_config(self):
        r, log = self.run, self.log
        if self.gen == GEN_A:
            if r.v["job"]["print_config"]:
                log.info("Running with configs: {}".format(json.dumps(
                    {k: v for k, v in r.v.items() if not k.startswith("_")}, indent=2, ensure_ascii=False)))
            save = r.v["job"]["save_config_file"]
        else:
            save = r.v["debug"]["save_config_file"]
        if save is not None:
            path = os.path.join(r.dump, save)
            if self.rank == 0:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    json.dump({k: v for k, v in r.v.items() if not k.startswith("_")}, f, indent=2)
            log.info("Saved job configs to {}".format(path))

    def train_spec_a(self):
        r, P = self.run, self.paths
        frames = self.init_frames
        if r.name not in _MODELS_A and r.name not in _EXPERIMENTS_A:
            self.fail("ValueError", "TrainSpec {} is not registered.".format(r.name), frames + [
                (P.train, 117, "__init__",
                 "self.train_spec = train_spec_module.get_train_spec(job_config.model.name)"),
                (P.at("protocols/train_spec.py"), 87, "get_train_spec",
                 'raise ValueError(f"TrainSpec {name} is not registered.")')])
        if r.name not in _FLAVORS_A:
            harness.emulator_fault("model.name={}: only llama3, deepseek_v3 and llama4 are emulated".format(r.name))

    def tokenizer_and_data_a(self):
        r, log, P = self.run, self.log, self.paths
        log.info("Loading tokenizer from tokenizer.json")
        ds = r.v["training"]["dataset"]
        if ds not in _DATASETS_A:
            self.fail("ValueError", "Dataset {} is not supported. Supported datasets are: {}".format(
                ds, list(_DATASETS_A)), self.init_frames + [
                    (P.at("hf_datasets/text_datasets.py"), 60, "_validate_dataset", "raise ValueError(")])
        log.info("Preparing {} dataset from {}".format(ds, r.v["training"]["dataset_path"] or _DATASETS_A[ds]))
        if r.flavor not in _FLAVORS_A[r.name]:
            self.fail("KeyError", repr(r.flavor), self.init_frames + [
                (P.train, 138, "__init__", "model_args = self.train_spec.model_args[job_config.model.flavor]")])

    def metrics_processor(self):
        """MetricsProcessor: the TensorBoard/W&B logger on the metrics rank, the
        device memory monitor, the colours."""
        r, log = self.run, self.log
        m = r.metrics
        self.color = not m["disable_color_printing"]
        metrics_rank = 0
        if r.pp > 1 and r.v["parallelism"]["pipeline_parallel_schedule"] != "ZBVZeroBubble":
            metrics_rank = (self.world // r.pp) * (r.pp - 1)
        if (m["enable_tensorboard"] or m["enable_wandb"]) and (m["save_for_all_ranks"] or self.rank == metrics_rank):
            base = os.path.join(r.dump, m["save_tb_folder"], time.strftime("%Y%m%d-%H%M", time.localtime(log.now())))
            if m["save_for_all_ranks"]:
                base = os.path.join(base, "rank_{}".format(self.rank))
            if m["enable_wandb"]:
                log.error("Failed to create WandB logger: No module named 'wandb'. Please install it using 'pip "
                          "install wandb'.")
            if m["enable_tensorboard"]:
                os.makedirs(base, exist_ok=True)
                harness.write_file(os.path.join(base, "events.out.tfevents.{}.{}.{}.0".format(
                    int(log.now()), os.environ.get("SLURMD_NODENAME") or os.uname().nodename, os.getpid())),
                    "attune emulator: stands in for a TensorBoard event file\n")
                self.tb_dir = base
                log.info("TensorBoard logging enabled. Logs will be saved at {}".format(base))
        pred = self.pred
        self.capacity = pred.hbm_gib or 80.0
        self.device_name = "NVIDIA H100 80GB HBM3" if self.capacity <= 100 else "NVIDIA H200"
        log.info("CUDA capacity: {} with {:.2f}GiB memory".format(self.device_name, self.capacity))
        self.metrics_t = log.t

    def peak_flops(self):
        pred = self.pred
        if pred.mfu > 0 and pred.tflops_per_gpu > 0:
            return pred.tflops_per_gpu * 1e12 / pred.mfu
        return 989e12

    def batch_sizes(self):
        r, P = self.run, self.paths
        t = r.v["training"]
        if self.gen == GEN_A:
            lbs = t["local_batch_size"]
            gbs = t["global_batch_size"]
            if gbs < 0:
                gbs = lbs * self.dp_degree
            frames = self.init_frames
            if not gbs > 0:
                self.fail("AssertionError", "", frames + [(P.train, 201, "__init__", "assert global_batch_size > 0")])
            if gbs % (lbs * self.dp_degree) != 0:
                self.fail("AssertionError", "global batch size must be multiple of local batch size times data-parallel"
                          " degree ({} % ({} * {}) != 0)".format(gbs, lbs, self.dp_degree),
                          frames + [(P.train, 202, "__init__", "assert (")])
            self.grad_accum = gbs // (lbs * self.dp_degree)
            if not self.grad_accum > 0:
                self.fail("AssertionError", "", frames + [
                    (P.train, 215, "__init__", "assert self.gradient_accumulation_steps > 0")])
            self.global_batch = gbs
            self.tokens_per_rank_step = lbs * t["seq_len"] * self.grad_accum
        else:
            n_mb = r.v["parallelism"]["num_pp_microbatches"] if r.pp > 1 else 1
            per_rank = t["num_tokens_per_microbatch_per_dp_rank"] * n_mb
            total = t["num_tokens_per_train_step"]
            if total < 0:
                total = per_rank * self.dp_degree
            if total % (per_rank * self.dp_degree) != 0:
                self.fail("ValueError", "training.num_tokens_per_train_step ({}) must be divisible by the number of "
                          "tokens processed globally in one gradient accumulation iteration ({}).".format(
                              total, per_rank * self.dp_degree), self.init_frames + [
                              (P.trainer, 420, "__init__", "raise ValueError(")])
            self.grad_accum = total // (per_rank * self.dp_degree)
            self.tokens_per_dp_rank = per_rank
            self.tokens_per_step = total
            self.tokens_per_rank_step = per_rank * self.grad_accum

    def parallelize(self):
        """The model's parallelize_fn (or pipelining_fn): the checks and lines
        that do not depend on the real model."""
        r, log, P = self.run, self.log, self.paths
        par = r.v["parallelism"]
        if r.pp > 1:
            if self.gen == GEN_A:
                lbs = r.v["training"]["local_batch_size"]
                mbs = par["pipeline_parallel_microbatch_size"]
                if lbs % mbs != 0:
                    self.fail("ValueError", "Batch size {} must be divisible by microbatch_size {}. Update the config "
                              "arguments for either batch_size or pipeline_parallel_microbatch_size.".format(lbs, mbs),
                              self.init_frames + [(P.at("distributed/pipeline_parallel.py"), 190, "build_pipeline_"
                                                   "schedule", "raise ValueError(")])
                n_mb = lbs // mbs
            else:
                n_mb = par["num_pp_microbatches"]
            single = par["pipeline_parallel_schedule"] in ("1F1B", "GPipe")
            stages = r.pp * (1 if single else 2)
            if n_mb < stages:
                log.warning("Number of microbatches ({}) is less than the total number of stages ({}) which may result "
                            "in a bubble in the pipeline.".format(n_mb, stages))
            log.info("Using pipeline schedule {} with {} microbatches and {} stages.".format(
                par["pipeline_parallel_schedule"], n_mb, stages))
        if self.gen == GEN_A:
            seq = r.v["training"]["seq_len"]
            divisor = r.tp * (r.cp * 2)
            if seq % divisor != 0:
                rel = {"llama3": ("models/llama3/infra/parallelize.py", 69),
                       "deepseek_v3": ("models/deepseek_v3/infra/parallelize.py", 60),
                       "llama4": ("models/llama4/infra/parallelize.py", 84)}[r.name]
                self.fail("AssertionError", "\n        Sequence length {} must be divisible by the product of TP degree\n"
                          "        ({}) and 2 * CP degree ({}).\n        ".format(seq, r.tp, r.cp),
                          self.init_frames + [(P.at(rel[0]), rel[1], "parallelize_" + r.name, "assert (")])
            if r.tp > 1:
                float8 = "float8" in r.v["model"]["converters"]
                rowwise = r.v["quantize"]["linear"]["float8"]["recipe_name"] in ("rowwise", "rowwise_with_gw_hp")
                if r.name == "deepseek_v3" and float8 and not rowwise:
                    self.fail("NotImplementedError", "Currently, float8 tensorwise TP is not tested for deepseekv3",
                              self.init_frames + [(P.at("models/deepseek_v3/infra/parallelize.py"), 85,
                                                   "parallelize_deepseekv3", "raise NotImplementedError(")])
                log.info("Applied {}Tensor Parallelism to the model".format(
                    "Float8 tensorwise " if float8 and not rowwise else ""))
                if par["enable_async_tensor_parallel"]:
                    if not (r.compile["enable"] and "model" in r.compile["components"]):
                        self.fail("RuntimeError", "Async TP requires 'model' in --compile.components and "
                                  "--compile.enable", self.init_frames + [
                                      (P.at("distributed/tensor_parallel.py"), 21, "maybe_enable_async_tp",
                                       "raise RuntimeError(")])
                    log.info("Async TP is enabled")
            ac = r.ac
            if ac != "none":
                if ac == "memory_budget":
                    if not (r.compile["enable"] and "model" in r.compile["components"]):
                        self.fail("AssertionError", "Memory budget mode requires model to be compiled",
                                  self.init_frames + [(P.at("distributed/activation_checkpoint.py"), 227, "apply_ac",
                                                       "assert model_compile_enabled, \"Memory budget mode requires "
                                                       "model to be compiled\"")])
                    log.info("Selected {} budget option".format(r.v["activation_checkpoint"]["memory_budget"]))
                log.info("Applied {} activation checkpointing to the model".format(ac))
            if r.compile["enable"] and "model" in r.compile["components"]:
                log.info("Compiling each TransformerBlock with torch.compile")
        else:
            if r.ac == "memory-budget":
                log.info("Selected {} budget option".format(r.v["activation_checkpoint"]["memory_budget"]))
            elif r.ac != "none":
                log.info("Applied {} activation checkpointing to the model".format(
                    {"selective": "SelectiveAC", "full": "FullAC"}[r.ac]))
        if self.dp_shard * r.cp > 1 or (self.gen == GEN_A and r.ep > 1):
            log.info("Applied HSDP to the model" if r.dp_rep > 1 else "Applied FSDP to the model")
            if self.run.cpu_offload:
                log.info("Applied CPU Offloading to the model")
        elif r.dp_rep > 1 and self.gen == GEN_A:
            if self.world != r.dp_rep:
                self.fail("RuntimeError", "DDP has not supported > 1D parallelism", self.init_frames)
            log.info("Applied DDP to the model")

    def lr_scheduler(self):
        r, log = self.run, self.log
        total = r.lr["total_steps"] if r.lr["total_steps"] is not None else r.steps
        warmup = int(r.lr["warmup_steps"])
        if warmup > total:
            log.warning("Warmup steps ({}) exceed total steps ({}). Adjusting warmup steps to {}.".format(
                warmup, total, total))
            warmup = total
        if r.lr["decay_ratio"] is not None:
            decay = round(total * r.lr["decay_ratio"])
            if warmup + decay > total:
                log.warning("Warmup ({}) + decay ({}) steps exceed total steps ({}). Adjusting decay steps to {}."
                            .format(warmup, decay, total, total - warmup))

    def mixed_precision_a(self):
        r, log = self.run, self.log
        if self.dp_shard > 1 or r.cp > 1:
            log.info("Mixed precision training is handled by fully_shard")
        elif r.tp > 1 or r.pp > 1:
            log.warning("Mixed precision training with TP or PP is only supported when FSDP/HSDP/CP is enabled.")
            log.info("Mixed precision training is disabled")
        else:
            log.info("Mixed precision training is handled by AMP")

    # -- checkpoints

    def checkpointer_init(self):
        r, log, c = self.run, self.log, self.run.ckpt
        if self.gen == GEN_B:
            _check_checkpoint_b(dict(c), log)
        self.ckpt_on = c["enable"]
        if not self.ckpt_on:
            return
        self.folder = os.path.join(r.dump, c["folder"])
        if self.gen == GEN_A and c["keep_latest_k"] == 1:
            self.fail("ValueError", "We need to maintain at least 2 checkpoint replicas, as the last one may be in the "
                      "process of being saved.", self.init_frames + [
                          (self.paths.checkpoint, 299, "__init__", "raise ValueError(")])
        self.purge_thread = c["keep_latest_k"] > 0
        log.info("Checkpointing active. Checkpoints will be loaded from and saved to {}".format(self.folder))

    def _find_load_step(self):
        import re

        if not os.path.isdir(self.folder):
            return -1
        steps = []
        for name in os.listdir(self.folder):
            m = re.search(r"step-(\d+)", name)
            if m and (os.path.isfile(os.path.join(self.folder, name, ".metadata"))
                      or os.path.isfile(os.path.join(self.folder, name, "model.safetensors.index.json"))):
                steps.append(int(m.group(1)))
        return max(steps) if steps else -1

    def ckpt_load(self):
        """CheckpointManager.load(step=checkpoint.load_step) at train start."""
        if not self.ckpt_on:
            return
        r, log, c, P = self.run, self.log, self.run.ckpt, self.paths
        train_frames = self.train_frames + [
            (P.train, 654, "train", "self.checkpointer.load(step=job_config.checkpoint.load_step)")
            if self.gen == GEN_A else
            (P.trainer, 1016, "train", "self.checkpointer.load(step=config.checkpoint.load_step)")]
        step = c["load_step"]
        model_only = False
        if self.gen == GEN_A:
            if not os.path.exists(self.folder):
                model_only = c["initial_load_model_only"]
                if c["initial_load_path"]:
                    cid = c["initial_load_path"]
                    if not os.path.isdir(cid):
                        self.fail("ValueError", "checkpoint.initial_load_path is specified but the path is not valid.",
                                  train_frames + [(P.checkpoint, 598, "load", "raise ValueError(")])
                    if c["initial_load_in_hf"]:
                        log.info("loading from HF safetensors from --checkpoint.initial_load_path: " + cid)
                elif c["initial_load_in_hf"]:
                    cid = r.v["model"]["hf_assets_path"]
                    log.info("loading HF safetensors from --model.hf_assets_path: " + cid)
                else:
                    return
            else:
                if c["initial_load_path"]:
                    log.warning("checkpoint.initial_load_path is provided but the checkpoint.folder exists. Checkpointer "
                                "will use the checkpoints from the checkpoint.folder {}.".format(self.folder))
                if c["initial_load_in_hf"]:
                    log.warning("checkpoint.initial_load_in_hf is True but the checkpoint.folder exists. Checkpointer "
                                "will not load from HF safetensors")
                step = self._find_load_step() if step == -1 else step
                if step == -1:
                    return
                model_only = step == 0
                cid = os.path.join(self.folder, "step-{}".format(step))
                if not os.path.isdir(cid):
                    self.fail("FileNotFoundError", "--checkpoint.load_step={} but checkpoint {} is not found.".format(
                        step, cid), train_frames + [(P.checkpoint, 640, "load", "raise FileNotFoundError(")])
        else:
            has_folder = os.path.isdir(self.folder)
            load_step = -1
            if has_folder:
                load_step = self._find_load_step() if step == -1 else step
            if step != -1 and not has_folder:
                self.fail("FileNotFoundError", "--checkpoint.load_step={} not found because checkpoint.folder {} does "
                          "not exist".format(step, self.folder), train_frames + [
                              (P.dcp, 526, "_load", "raise FileNotFoundError(")])
            if load_step == -1:
                model_only = c["initial_load_model_only"]
                if c["initial_load_path"]:
                    cid = c["initial_load_path"]
                    if not os.path.isdir(cid):
                        self.fail("ValueError", "Checkpoint.initial_load_path is invalid: " + cid, train_frames + [
                            (P.dcp, 547, "_load", "raise ValueError(")])
                    if c["initial_load_in_hf"]:
                        log.info("Loading from HF safetensors from --checkpoint.initial_load_path: " + cid)
                elif c["initial_load_in_hf"]:
                    cid = r.v["hf_assets_path"]
                    log.info("Loading HF safetensors from --model.hf_assets_path: " + cid)
                else:
                    log.info("No checkpoint was provided, this is a fresh start.")
                    return
            else:
                step = load_step
                model_only = step == 0
                cid = os.path.join(self.folder, "step-{}".format(step))
                if not os.path.isdir(cid):
                    self.fail("FileNotFoundError", "--checkpoint.load_step={} not found at {}".format(step, cid),
                              train_frames + [(P.dcp, 587, "_load", "raise FileNotFoundError(")])
        log.info("Loading the checkpoint from {}.".format(cid))
        begin = log.t
        meta = {}
        try:
            with open(os.path.join(cid, ".metadata")) as f:
                meta = json.load(f)
        except (OSError, ValueError):
            meta = {}
        log.wait(self.ckpt_seconds())
        dcp_frames = train_frames + ([(P.checkpoint, 647, "load", "self.dcp_load("),
                                      (P.checkpoint, 470, "dcp_load",
                                       "dcp.load(state_dict, checkpoint_id=checkpoint_id)")]
                                     if self.gen == GEN_A else
                                     [(P.dcp, 598, "_load", "self.dcp_load(")])
        if not model_only and meta.get("model_only"):
            # all states requested from a model-only checkpoint (torch DCP's load planner)
            self.fail("RuntimeError", "Missing key in checkpoint state_dict: train_state.step.", dcp_frames)
        if not model_only and self.gen == GEN_A and "dataloader" not in c["exclude_from_loading"] and \
                meta.get("dp_degree") not in (None, self.dp_degree):
            self.fail("AssertionError", "dp_degree is inconsistent before and after checkpoint, dataloader resharding "
                      "is not supported yet.", dcp_frames)
        log.info("[GC] GC collection for checkpoint loading. took 0.01 seconds")
        log.info("Finished loading the checkpoint in {:.2f} seconds.".format(log.t - begin))
        if not model_only and meta.get("step") is not None:
            self.step = int(meta["step"])

    def ckpt_seconds(self):
        """The emulator's own choice: the rank's shard (weights, plus optimizer
        states for a full checkpoint) at 2 GiB/s, at least a second."""
        mem = self.pred.data.get("memory") or {}
        gib = float(mem.get("weights_gib") or 0.0) + float(mem.get("optimizer_gib") or 0.0)
        return max(1.0, gib / 2.0)

    def ckpt_should_save(self, step, last):
        c = self.run.ckpt
        if not self.ckpt_on or c["load_only"]:
            return False
        if step == 1 and c["enable_first_step_checkpoint"]:
            return True
        if not last and c["interval"] == 0:
            P = self.paths
            self.fail("ZeroDivisionError", "integer modulo by zero", self.train_frames + [
                (P.train, 680, "train", "self.checkpointer.save("),
                (P.checkpoint, 497, "save", "if not self._should_save(curr_step, last_step):"),
                (P.checkpoint, 823, "_should_save", "if curr_step % self.interval == 0:")])
        return last or step % c["interval"] == 0

    def ckpt_save(self, step, last):
        if not self.ckpt_should_save(step, last):
            return
        log, c = self.log, self.run.ckpt
        begin = log.t
        model_only = last and c["last_save_model_only"]
        mode = c["async_mode"]
        if self.gen == GEN_A:
            log.info("Saving the checkpoint (or staging if async is enabled).")
        else:
            log.info("{} the checkpoint.".format("Saving" if mode == "disabled" else "Staging"))
        gc = "[GC] GC collection invoked by checkpointer. took 0.01 seconds"
        if last:
            if model_only:
                log.info("Saving a model only checkpoint in torch.{} at last step, step {}.".format(
                    c["export_dtype"], step))
            else:
                log.info("Saving a full checkpoint at last step, step {}.".format(step))
            self.write_checkpoint(step, model_only)
            log.info(gc)
            if self.gen == GEN_B:
                log.info("Last step checkpoint completed in {:.2f}s".format(log.t - begin))
            return
        if mode != "disabled":
            log.info(gc)
        self.write_checkpoint(step, False)
        if mode in ("disabled", "async"):
            log.info(gc)
        self.purge()
        if self.gen == GEN_A:
            log.info("Finished saving the checkpoint (or staging if async is enabled)in {:.2f} seconds.".format(
                log.t - begin))
        else:
            log.info("Finished {} the checkpoint in {:.2f} seconds.".format(
                "saving" if mode == "disabled" else "staging", log.t - begin))

    def write_checkpoint(self, step, model_only):
        """The DCP layout: step-N/ with one shard file per rank and the
        coordinator's .metadata (here JSON markers)."""
        path = os.path.join(self.folder, "step-{}".format(step))
        os.makedirs(path, exist_ok=True)
        self.log.wait(self.ckpt_seconds())
        harness.write_file(os.path.join(path, "__{}_0.distcp".format(self.rank)),
                           "attune emulator: stands in for rank {}'s DCP shard\n".format(self.rank))
        if self.rank == 0:
            harness.write_json(os.path.join(path, ".metadata"), {
                "attune_emulator": "stands in for torch.distributed.checkpoint metadata", "step": step,
                "model_only": model_only, "dp_degree": self.dp_degree, "world_size": self.world})

    def purge(self):
        import re
        import shutil

        k = self.run.ckpt["keep_latest_k"]
        if not (k > 0 and self.rank == 0 and os.path.isdir(self.folder)):
            return
        found = []
        for name in os.listdir(self.folder):
            m = re.search(r"step-(\d+)", name)
            if m:
                found.append((int(m.group(1)), os.path.join(self.folder, name)))
        found.sort()
        for _, path in found[:-k]:
            self.log.info("Checkpointer is deleting {}.".format(path))
            shutil.rmtree(path, ignore_errors=True)
            self.log.info("Checkpointer deleted {} in 0.01 seconds.".format(path))

    # -- the loop

    def train(self):
        g, r, log, P = self.gen, self.run, self.log, self.paths
        if g == GEN_A:
            self.train_frames = [(P.train, 781, "<module>", "main(Trainer)"),
                                 (P.train, 768, "main", "trainer.train()")]
        else:
            self.train_frames = [(P.train, 79, "<module>", "main()"), (P.train, 65, "main", "trainer.train()")]
        try:
            self.ckpt_load()
        finally:
            if self.ckpt_on and not self.fake:
                # the load is collective: no rank saves before every rank has looked
                _barrier("checkpoint_load", self.world, self.rank)
        loaded = self.step
        log.info("Training starts at step {}".format(self.step + 1))
        prof = _Profiler(self, loaded)
        snap = _Snapshots(self, loaded)
        pred = self.pred
        fail_step = max(1, pred.fails_at_step) if pred.ooms else None
        self.tokens_window = 0
        try:
            while self.step < r.steps:
                self.step += 1
                step = self.step
                if r.gc_debug:
                    log.info("[GC] Force GC to perform collection to obtain debug information took 0.01 seconds")
                elif step > 1 and step % r.gc_freq == 0:
                    log.info("[GC] Performing periodic GC collection took 0.01 seconds")
                dt = self.clock.seconds(step)
                if fail_step is not None and step >= fail_step:
                    log.wait(dt * 0.5)
                    raise _OOM(step)
                log.wait(dt)
                self.tokens_window += self.tokens_per_rank_step
                if step != 1 and r.metrics["log_freq"] == 0:
                    self.fail("ZeroDivisionError", "integer modulo by zero", self.train_frames + [
                        (P.train, 607, "train_step", "if not self.metrics_processor.should_log(self.step):"),
                        (P.at("components/metrics.py"), 394, "should_log",
                         "return step == 1 or step % self.job_config.metrics.log_freq == 0")])
                if step == 1 or step % r.metrics["log_freq"] == 0:
                    self.step_line(step, self.tokens_window)
                    self.tokens_window = 0
                self.ckpt_save(step, last=step == r.steps)
                self.maybe_validate(step)
                prof.step()
                snap.step()
                if (g == GEN_A and step == 1) or (g == GEN_B and step - loaded == 1):
                    log.info("Synchronizing and adjusting timeout for all ProcessGroups to {}".format(
                        _timedelta(r.comm["train_timeout_seconds"])))
        except _OOM:
            snap.exit_dump()
            frames = self.train_frames + ([
                (P.train, 675, "train", "self.train_step(data_iterator)"),
                (P.train, 584, "train_step", "loss = self.forward_backward_step("),
                (P.train, 542, "forward_backward_step", "loss.backward()")] if g == GEN_A else [
                (P.trainer, 1037, "train", "self.train_step(data_iterator)")])
            self.fail("torch.OutOfMemoryError", harness.cuda_oom_message(pred, self.w.local_rank), frames)
        prof.exit()
        if self.rank == 0:
            log.info("Sleeping 2 seconds for other ranks to complete")
            log.wait(2.0)
            if g == GEN_A:
                log.info("Training completed")
        if g == GEN_B:
            log.info("Training completed")

    def step_line(self, step, tokens):
        log, pred, r = self.log, self.pred, self.run
        delta = max(1e-9, log.t - self.metrics_t)
        tps = tokens / (delta * self.non_dp)
        per_token = pred.data.get("flops_per_token") or {}
        if per_token.get("full_attention"):
            # torchtitan's own count (get_num_flop_per_token): attention in full, no causal halving
            fpt = float(per_token["full_attention"])
        elif pred.tflops_per_gpu > 0 and pred.tokens_per_s_per_gpu > 0:
            fpt = pred.tflops_per_gpu * 1e12 / pred.tokens_per_s_per_gpu
        else:
            # no prediction: flops per token for 40% MFU at the nominal step time (the emulator's own choice)
            fpt = 0.4 * self.peak_flops() * pred.step_s * self.non_dp / max(1, self.tokens_per_rank_step)
        tflops = fpt * tps / 1e12
        mfu = 100 * fpt * tps / self.peak_flops()
        gib = pred.peak_reserved_gib
        pct = 100 * gib / self.capacity
        c = _COLORS if self.color else _NOCOLOR
        mfu_s = "N/A" if (self.gen == GEN_B and r.quantized) else "{:.2f}%".format(mfu)
        log.info("{}step: {:2}  {}loss: {:8.5f}  {}grad_norm: {:7.4f}  {}memory: {:5.2f}GiB({:.2f}%)  {}tps: {:,}  "
                 "{}tflops: {:,.2f}  {}mfu: {}{}".format(
                     c["red"], step, c["green"], harness.loss(step), c["orange"], harness.grad_norm(step),
                     c["turquoise"], gib, pct, c["blue"], round(tps), c["cyan"], tflops, c["magenta"], mfu_s,
                     c["reset"]))
        self.metrics_t = log.t

    def maybe_validate(self, step):
        """Validator.validate + MetricsProcessor.log_validation: `steps` forward
        passes (the emulator takes a third of a training step each, and 10 for
        steps=-1), then the line; the tokens and time since the last line count."""
        r, log = self.run, self.log
        val = r.validation
        if not val["enable"]:
            return
        freq = val["freq"]
        if not (step == 1 or step % freq == 0):
            return
        n = val["steps"] if val["steps"] > 0 else 10
        log.wait(n * self.clock.seconds(step) / 3.0)
        if self.gen == GEN_A:
            per_batch = val["local_batch_size"] * val["seq_len"]
        else:
            per_batch = r.v["training"]["num_tokens_per_microbatch_per_dp_rank"]
        self.tokens_window += n * per_batch
        tps = self.tokens_window / (max(1e-9, log.t - self.metrics_t) * self.non_dp)
        c = _COLORS if self.color else _NOCOLOR
        gib = self.pred.peak_reserved_gib
        log.info("{}validate step: {:2}  {}loss: {:7.4f}  {}memory: {:5.2f}GiB({:.2f}%)  {}tps: {:,}{}".format(
            c["yellow"], step, c["green"], harness.loss(step) + 0.05, c["turquoise"], gib, 100 * gib / self.capacity,
            c["blue"], round(tps), c["reset"]))
        self.tokens_window = 0
        self.metrics_t = log.t

    def close(self):
        """Trainer.close(): the checkpointer's purge thread ends on every rank."""
        if self.ckpt_on and self.purge_thread:
            self.log.info("Destroying the purge thread.")

    def seed_checkpoint(self):
        """checkpoint.create_seed_checkpoint: a model-only step-0 on one device."""
        r, P = self.run, self.paths
        line = 760 if self.gen == GEN_A else 57
        frames = [(P.train, 781 if self.gen == GEN_A else 79, "<module>", "main(Trainer)" if self.gen == GEN_A
                   else "main()")]
        if "WORLD_SIZE" not in os.environ:
            self.fail("KeyError", "'WORLD_SIZE'", frames + [(P.train, line, "main", "int(os.environ[\"WORLD_SIZE\"]) "
                                                                                     "== 1")])
        if int(os.environ["WORLD_SIZE"]) != 1:
            self.fail("AssertionError", "Must create seed checkpoint using a single device, to disable sharding.",
                      frames + [(P.train, line - 1, "main", "assert (")])
        if not r.ckpt["enable"]:
            self.fail("AssertionError", "Must enable checkpointing when creating a seed checkpoint.",
                      frames + [(P.train, line + 2, "main", "assert (")])
        self.ckpt_save(0, last=True)
        self.log.info("Created seed checkpoint")


def _barrier(name, world, rank, payload=0.0):
    """What the collectives give the real ranks: none passes `name` before all
    have reached it (files under the temp dir, keyed by the job's identity)."""
    if world <= 1:
        return
    import hashlib
    import shutil
    import tempfile

    ident = "|".join(os.environ.get(k, "") for k in (
        "SLURM_JOB_ID", "SLURM_STEP_ID", "TORCHELASTIC_RUN_ID", "MASTER_ADDR", "WORLD_SIZE", "ATTUNE_EMULATE_SEED"))
    d = os.path.join(tempfile.gettempdir(), "attune-emulate-torchtitan",
                     "{}-{}".format(hashlib.sha256(ident.encode()).hexdigest()[:20], name))
    os.makedirs(d, exist_ok=True)
    arrived = time.time()
    harness.write_file(os.path.join(d, str(rank)), "{!r} {!r}".format(arrived, payload))
    deadline = time.monotonic() + 900
    payloads = []

    def fresh(suffix):
        del payloads[:]
        for r in range(world):
            try:
                with open(os.path.join(d, str(r) + suffix)) as f:
                    fields = f.read().split()
                if float(fields[0]) >= arrived - 300:
                    payloads.append(float(fields[-1]))
            except (OSError, ValueError, IndexError):
                pass
        return len(payloads)

    while fresh("") < world:
        if time.monotonic() > deadline:
            harness.emulator_fault("rank {}: the other ranks never reached {}".format(rank, name))
        time.sleep(0.005)
    seen = list(payloads)
    harness.write_file(os.path.join(d, "{}.done".format(rank)), repr(time.time()))
    if fresh(".done") == world:
        shutil.rmtree(d, ignore_errors=True)
    return seen


class _OOM(Exception):
    pass


_COLORS = {"red": "\033[31m", "green": "\033[32m", "yellow": "\033[33m", "blue": "\033[34m", "magenta": "\033[35m",
           "cyan": "\033[36m", "reset": "\033[39m", "orange": "\033[38;2;180;60;0m",
           "turquoise": "\033[38;2;54;234;195m"}
_NOCOLOR = {k: "" for k in _COLORS}


def _timedelta(seconds):
    s = int(seconds)
    return "{}:{:02d}:{:02d}".format(s // 3600, (s // 60) % 60, s % 60) if s < 86400 else \
        "{} day{}, {}:{:02d}:{:02d}".format(s // 86400, "" if s // 86400 == 1 else "s", (s % 86400) // 3600,
                                            (s // 60) % 60, s % 60)


class _Profiler:
    """torch.profiler.profile with torchtitan's schedule(wait=freq-(warmup+active),
    warmup, active): a trace after every profile_freq-th step, per rank."""

    NONE, WARMUP, RECORD, SAVE = range(4)

    def __init__(self, proc, global_step):
        self.proc = proc
        r, log = proc.run, proc.log
        p = r.prof
        self.on = p["enable_profiling"]
        if not self.on:
            return
        self.dir = os.path.join(r.dump, proc.run.prof_folder)
        self.freq, self.warmup, self.active = p["profile_freq"], p["profiler_warmup"], p["profiler_active"]
        self.wait = self.freq - (self.active + self.warmup)
        if proc.gen == GEN_A:
            log.info("Profiling active. Traces will be saved at {}".format(self.dir))
            os.makedirs(self.dir, exist_ok=True)
            if self.wait < 0:
                P = proc.paths
                proc.fail("AssertionError", "profile_freq must be greater than or equal to warmup + active",
                          proc.train_frames + [(P.train, 658, "train", "maybe_enable_profiling("),
                                               (P.at("tools/profiling.py"), 64, "maybe_enable_profiling",
                                                "assert (")])
            self.skip_first = self.repeat = self.skip_first_wait = 0
        else:
            log.info("Profiling active. Traces will be saved at {}".format(self.dir))
            os.makedirs(self.dir, exist_ok=True)
            self.skip_first = p["profiler_skip_first"] or 0
            self.repeat = p["profiler_repeat"] or 0
            self.skip_first_wait = p["profiler_skip_first_wait"] or 0
        self.step_num = 0
        self.action = self.schedule(0)
        self.step_num = global_step

    def schedule(self, step):
        """torch.profiler.schedule's action for a step."""
        if step < self.skip_first:
            return self.NONE
        step -= self.skip_first
        if self.skip_first_wait:
            step += self.wait
        n = self.wait + self.warmup + self.active
        if self.repeat > 0 and step / n >= self.repeat:
            return self.NONE
        m = step % n
        if m < self.wait:
            return self.NONE
        if m < self.wait + self.warmup:
            return self.WARMUP
        return self.RECORD if m < n - 1 else self.SAVE

    def step(self):
        if not self.on:
            return
        prev = self.action
        self.step_num += 1
        self.action = self.schedule(self.step_num)
        if prev == self.SAVE:
            self.dump()

    def exit(self):
        if self.on and self.action in (self.RECORD, self.SAVE):
            self.dump()

    def dump(self):
        proc, log = self.proc, self.proc.log
        d = os.path.join(self.dir, "iteration_{}".format(self.step_num))
        os.makedirs(d, exist_ok=True)
        log.info("Dumping profiler traces at step {}".format(self.step_num))
        begin = log.t
        name = "rank{}_trace.json".format(proc.rank) + (".gz" if proc.gen == GEN_B else "")
        log.wait(2.0)
        harness.write_file(os.path.join(d, name), "attune emulator: stands in for a chrome trace\n")
        log.info("Finished dumping profiler traces in {:.2f} seconds".format(log.t - begin))


class _Snapshots:
    """The memory profiler: a snapshot every profile_freq (B:
    memory_snapshot_freq) steps, and one on OOM."""

    def __init__(self, proc, global_step):
        self.proc = proc
        r, log = proc.run, proc.log
        p = r.prof
        self.on = p["enable_memory_snapshot"]
        if not self.on:
            return
        self.dir = os.path.join(r.dump, r.snap_folder)
        if proc.gen == GEN_A:
            self.freq = p["profile_freq"]
        else:
            self.freq = p["profile_freq"] if p["memory_snapshot_freq"] is None else p["memory_snapshot_freq"]
            if self.freq <= 0:
                proc.fail("ValueError", "Memory snapshot frequency must be greater than zero; set "
                          "profiler.memory_snapshot_freq or profiler.profile_freq to a positive value.",
                          proc.train_frames + [(proc.paths.at("tools/profiler.py"), 376, "build_memory_profiler",
                                                "raise ValueError(")])
        os.makedirs(self.dir, exist_ok=True)
        log.info("Memory profiler active. Snapshot will be saved at {}".format(self.dir))
        self.step_num = global_step

    def step(self, exit_ctx=False):
        if not self.on:
            return
        self.step_num += 1
        if not exit_ctx and self.step_num % self.freq != 0:
            return
        proc, log = self.proc, self.proc.log
        cur = self.step_num if not exit_ctx else self.step_num - 1
        if proc.gen == GEN_A:
            d = os.path.join(self.dir, "iteration_{}{}".format(cur, "_exit" if exit_ctx else ""))
            name = "rank{}_memory_snapshot.pickle".format(proc.rank)
        else:
            d = os.path.join(self.dir, "step_{:012d}{}".format(cur, "_exit" if exit_ctx else ""))
            name = "{:06d}_step_{}.pickle".format(proc.rank, cur)
        os.makedirs(d, exist_ok=True)
        log.info("Dumping memory snapshot at step {}".format(cur))
        begin = log.t
        log.wait(1.0)
        harness.write_file(os.path.join(d, name), "attune emulator: stands in for a CUDA memory snapshot\n")
        log.info("Finished dumping memory snapshot in {:.2f} seconds".format(log.t - begin))

    def exit_dump(self):
        if self.on:
            self.step(exit_ctx=True)


# ---------------------------------------------------------------- the entry point


def main(argv):
    """`python -m torchtitan.train ARGS` (argv: the ARGS)."""
    gen = _generation()
    log = _Log()
    paths = _Paths(gen)
    try:
        return _main(gen, list(argv), log, paths)
    except _Fail as f:
        _print_traceback(f.frames, f.exc, f.message)
        sys.exit(1)
    except (TypeError, AttributeError, KeyError, IndexError, ValueError) as e:
        harness.emulator_fault("a config value the emulator cannot interpret ({}: {})".format(type(e).__name__, e))
    except KeyboardInterrupt:
        import signal

        _print_traceback([(paths.train, 781 if gen == GEN_A else 79, "<module>",
                           "main(Trainer)" if gen == GEN_A else "main()")], "KeyboardInterrupt", "")
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)


def _main(gen, argv, log, paths):
    log.wait(10.0)  # importing torch and torchtitan (the emulator's own choice)
    log.info("torchtitan version: {} (0.0.0 means __version__ is not defined correctly).".format(VERSION))
    if gen == GEN_A:
        values = _load_a(argv, log, paths)
    else:
        values = _load_b(argv, log, paths)
        rank = int(os.environ.get("RANK", 0))
        if values["debug"]["enable_structured_logging"]:
            rnd = harness.random_for("jsonl", rank, os.getpid())
            path = os.path.join(values["dump_folder"], "structured_logs", "training.global_rank_{}.{}-{}.jsonl".format(
                rank, time.strftime("%Y%m%d-%H%M%S", time.localtime(log.now())),
                "".join(rnd.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") for _ in range(6))))
            harness.write_file(path, "")
            log.info("Structured logging -> JSONL: {}".format(path),
                     name="torchtitan.observability.structured_logger.jsonl_handler")
        else:
            log.info("Structured logging disabled via DebugConfig.enable_structured_logging=False",
                     name="torchtitan.observability.structured_logger.structured_logging")
        if values["comm"]["mode"] == "local_tensor":
            log.info("Local tensor mode enabled - skipping training execution")
            return 0
    run = _Run(gen, values)
    proc = _Proc(gen, run, log, paths)
    proc.init()
    proc.trainer_init()
    if gen == GEN_A and run.comm["mode"] == "local_tensor":
        log.info("Local tensor mode enabled - skipping training execution")
        return 0
    try:
        if run.ckpt["create_seed_checkpoint"]:
            proc.seed_checkpoint()
        else:
            proc.train()
    except _Fail:
        proc.close()
        raise
    proc.close()
    log.info("Process group destroyed")
    return 0
