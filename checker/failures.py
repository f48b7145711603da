"""Every failure mapped onto the exit-code contract, in one place.

    0  every property holds            (replay: not reproduced)
    1  a property is violated          (replay: reproduced)
    2  bad input or usage, including a bug in the spec's own code
    3  incomplete: a budget, an interruption, or a fault of the environment
       (a missing dependency, a disk that cannot be written, an internal error)
    4  replay only: the implementation diverged from the spec

A failure is reported as one line on stderr; `--debug` adds the traceback.
A crash never exits 1: a CI pipeline reads 1 as "a bug was found".
"""

from __future__ import annotations

import sys
import sysconfig
import traceback
from pathlib import Path

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE, EXIT_INCOMPLETE, EXIT_DIVERGED = 0, 1, 2, 3, 4

_PACKAGE_DIRS = ("spec", "checker", "counterexamples", "reference", "package")
# modules of spec/ that are the API, not a spec: an error there is the caller's
_SPEC_API = {"api.py", "schema.py", "registry.py", "__init__.py"}


def _roots() -> tuple[Path, list[Path], list[Path]]:
    from .. import spec

    spec_dir = Path(spec.__file__).resolve().parent
    ours = [spec_dir.parent / d for d in _PACKAGE_DIRS]
    paths = sysconfig.get_paths()
    system = [Path(paths[k]).resolve() for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths]
    return spec_dir, ours, system


def _inside(path: Path, dirs) -> bool:
    return any(path == d or d in path.parents for d in dirs)


def spec_frame(exc: BaseException) -> traceback.FrameSummary | None:
    """The innermost frame of the traceback that is a spec's own code: a
    module of spec/ other than its API, or a file outside txncheck, the
    standard library and the installed packages (a user's spec)."""
    spec_dir, ours, system = _roots()
    found = None
    for fs in traceback.extract_tb(exc.__traceback__):
        if fs.filename.startswith("<"):
            continue
        p = Path(fs.filename).resolve()
        if _inside(p, [spec_dir]):
            if p.name not in _SPEC_API:
                found = fs
        elif not _inside(p, ours) and not _inside(p, system):
            found = fs
    return found


def _compiled_property_key(exc: BaseException) -> str | None:
    """The symbol a compiled property could not find in an observation."""
    if not isinstance(exc, KeyError):
        return None
    frames = traceback.extract_tb(exc.__traceback__)
    if frames and frames[-1].filename == "<invariants>":
        return str(exc.args[0]) if exc.args else "?"
    return None


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C is: the engines stop at a clean point
    (writing their checkpoint) and the run ends incomplete, exit 3."""


def on_sigterm(signum, frame):
    raise Terminated()


class UsageError(Exception):
    """Bad command-line use; the message is one line."""


def bad_input_errors() -> tuple[type[BaseException], ...]:
    from ..spec.api import SpecError
    from .encoding import EncodingError
    from .engines import EngineError
    from .invariants import PropertyError
    from .itf import TraceError
    from .model import ModelError

    return (UsageError, ModelError, SpecError, PropertyError, TraceError, EngineError, EncodingError)


def describe(exc: BaseException) -> tuple[int, str]:
    """(exit code, one line) for an exception that reached the command line."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if isinstance(exc, Terminated):
        return EXIT_INCOMPLETE, "txncheck: terminated (SIGTERM)"
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INCOMPLETE, "txncheck: interrupted"
    if isinstance(exc, bad_input_errors()):
        return EXIT_USAGE, f"txncheck: error: {text}"
    symbol = _compiled_property_key(exc)
    if symbol is not None:
        return EXIT_USAGE, (f"txncheck: error: spec error: observe() gave no value for the schema symbol "
                            f"{symbol!r} (every symbol the properties read must be observed)")
    fs = spec_frame(exc)
    if fs is not None:
        return EXIT_USAGE, (f"txncheck: error: spec error: {type(exc).__name__}: {text} at {fs.filename}:"
                            f"{fs.lineno} in {fs.name}() (--debug shows the traceback)")
    if isinstance(exc, RecursionError):
        return EXIT_USAGE, "txncheck: error: the input nests too deeply (a formula, a table or a document)"
    if isinstance(exc, TypeError) and "unhashable" in text:
        return EXIT_USAGE, (f"txncheck: error: spec error: a state is not hashable ({text}); states are "
                            f"tuples, frozensets, ints, strs, bools and None")
    if isinstance(exc, ModuleNotFoundError):
        extra = {"pyspark": "spark", "pyarrow": "spark", "kazoo": "zookeeper"}.get((exc.name or "").split(".")[0])
        hint = f" (pip install 'txncheck[{extra}]')" if extra else ""
        return EXIT_INCOMPLETE, f"txncheck: error: a dependency is missing: {exc.name}{hint}"
    if isinstance(exc, MemoryError):
        return EXIT_INCOMPLETE, "txncheck: error: out of memory (try --no-graph, --fingerprints or smaller bounds)"
    if isinstance(exc, OSError):
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        return EXIT_INCOMPLETE, f"txncheck: error: {exc.strerror or text}{where}"
    return EXIT_INCOMPLETE, (f"txncheck: internal error: {type(exc).__name__}: {text} "
                             f"(no verdict; --debug shows the traceback)")


def report(exc: BaseException, debug: bool) -> int:
    code, line = describe(exc)
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    print(line, file=sys.stderr)
    return code
