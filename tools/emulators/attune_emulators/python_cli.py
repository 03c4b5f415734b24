"""`python` as a training job calls it: `python [OPTIONS] SCRIPT ARGS` or
`python [OPTIONS] -m MODULE ARGS`. A framework's entry point (by module name,
or by the script's path inside the framework's checkout) goes to that
framework's emulator; `-m torch.distributed.run` is torchrun; anything else is
handed to the real Python unchanged (a user's own helper script, `-c`).

Python's own errors are Python 3's: a script that does not exist is
`python3: can't open file '<abs path>': [Errno 2] No such file or directory`
with exit status 2; a module that does not exist is
`/usr/bin/python3: No module named <name>` with exit status 1.
"""

import os
import sys

from . import entries, harness

# Options that take no argument, and those that take one (python3 --help).
_FLAGS = set("bBdEhiIOPqsSuvVx")
_WITH_VALUE = set("WX")


def _real_python(argv):
    os.execv(harness.REAL_PYTHON, [harness.REAL_PYTHON] + argv)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "-m":
            if i + 1 >= len(argv):
                harness.err("Argument expected for the -m option")
                sys.exit(2)
            module, rest = argv[i + 1], argv[i + 2:]
            run = entries.module_entry(module)
            if run is None:
                if module.split(".")[0] in entries.FRAMEWORK_PACKAGES:
                    harness.err("{}: No module named {}".format(harness.REAL_PYTHON, module))
                    sys.exit(1)
                _real_python(argv)
            sys.argv = [module] + rest
            return run(rest)
        if a.startswith("-m") and len(a) > 2:
            return main(argv[:i] + ["-m", a[2:]] + argv[i + 1:])
        if a == "-c" or a.startswith("-c") or a == "-":
            _real_python(argv)
        if a.startswith("-") and len(a) > 1:
            letters = a[1:]
            if all(c in _FLAGS for c in letters):
                i += 1
                continue
            if letters[0] in _WITH_VALUE:
                i += 1 if len(letters) > 1 else 2
                continue
            _real_python(argv)
        break
    if i >= len(argv):
        _real_python(argv)
    script, rest = argv[i], argv[i + 1:]
    path = os.path.abspath(script)
    if not os.path.exists(path):
        harness.err("python3: can't open file '{}': [Errno 2] No such file or directory".format(path))
        sys.exit(2)
    run = entries.script_entry(path)
    if run is None:
        _real_python(argv)
    sys.argv = [script] + rest
    return run(rest)
