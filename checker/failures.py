"""The one place that maps a failure to the exit-code contract.

    0 ok, 1 violation, 2 bad input or usage (a spec's own error included),
    3 incomplete, interrupted or an environment fault (a missing extra, a disk
    that refuses a write), 4 replay divergence.

Every failure leaves as one line on stderr; `--debug` (or TXNCHECK_DEBUG=1)
adds the traceback. A violation is never lost to a failed write: the command
prints its verdict first and reports the write separately (checker/commands/check.py).
"""

from __future__ import annotations

import os
import signal
import sys
import sysconfig
import traceback
from pathlib import Path

from .errors import EnvironmentFault

EXIT_USAGE, EXIT_INCOMPLETE = 2, 3

_PACKAGE_DIR = Path(__file__).resolve().parent.parent  # txncheck: checker/, spec/, reference/, ...
_SPEC_DIR = _PACKAGE_DIR / "spec"
_SPEC_FRAMEWORK = {"__init__.py", "api.py", "registry.py", "schema.py"}  # the spec API, not a spec
# Where the code that is neither txncheck's checker nor a spec lives.
_LIBRARY_DIRS = tuple({Path(p).resolve() for k in ("stdlib", "platstdlib", "purelib", "platlib")
                       if (p := sysconfig.get_paths().get(k))})
# pip extra for each optional module
_EXTRAS = {"pyspark": "spark", "py4j": "spark", "pyarrow": "spark", "kazoo": "zookeeper"}



interrupted: list[str] = []  # set by the signal handlers: a run that ends after it is incomplete


def _on_signal(signum, _frame):
    interrupted.append(signal.Signals(signum).name)
    raise KeyboardInterrupt


def install_signal_handlers() -> dict:
    """Ctrl-C and SIGTERM both raise KeyboardInterrupt (exit 3) and are remembered,
    so a library that swallows the exception cannot turn the run into a success.
    Returns the previous handlers, for `restore_signal_handlers`."""
    interrupted.clear()
    old = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            old[sig] = signal.signal(sig, _on_signal)
        except (ValueError, OSError):  # not the main thread
            pass
    return old


def exit_on_late_signal() -> None:
    """For the rest of the process: Ctrl-C or SIGTERM exits 3 at once, with
    what was printed flushed, instead of a traceback from interpreter exit."""
    def _late(signum, _frame):
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(EXIT_INCOMPLETE)

    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            signal.signal(sig, _late)
        except (ValueError, OSError):
            pass


def quiet_teardown() -> None:
    """After an interrupted run has reported its one line: an object the
    signal caught half-built (a z3 Context interrupted in its constructor)
    can fail in `__del__` as the interpreter exits, which Python prints as
    "Exception ignored" with a traceback. Drop those reports."""
    sys.unraisablehook = lambda _unraisable: None


def restore_signal_handlers(old: dict) -> None:
    for sig, handler in old.items():
        signal.signal(sig, handler)


def _is_library(file: str) -> bool:
    """Not a spec's own code: txncheck outside spec/ (and spec/'s framework
    modules), the standard library, installed packages."""
    if file.startswith("<"):
        return True
    p = Path(file).resolve()
    if p.is_relative_to(_SPEC_DIR):
        return p.parent == _SPEC_DIR and p.name in _SPEC_FRAMEWORK
    return p.is_relative_to(_PACKAGE_DIR) or any(p.is_relative_to(d) for d in _LIBRARY_DIRS)


def spec_frame(exc: BaseException) -> traceback.FrameSummary | None:
    """The innermost frame of the spec's own code that the exception passed through."""
    frames = traceback.extract_tb(exc.__traceback__)
    for fr in reversed(frames):
        if not _is_library(fr.filename):
            return fr
    return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def classify(exc: BaseException, bad_input: tuple[type[BaseException], ...]) -> tuple[int, str]:
    """(exit code, one line) for an exception that reached the command line."""
    from .reports.output import ReportError

    if isinstance(exc, KeyboardInterrupt) or interrupted or _caused_by_interrupt(exc):
        how = interrupted[0] if interrupted else "SIGINT"
        return EXIT_INCOMPLETE, f"interrupted ({how}); the run is incomplete"
    if isinstance(exc, (ReportError, EnvironmentFault)):
        return EXIT_INCOMPLETE, str(exc)
    if isinstance(exc, bad_input):
        return EXIT_USAGE, str(exc)
    if isinstance(exc, ModuleNotFoundError) and exc.name and exc.name.split(".")[0] in _EXTRAS:
        mod = exc.name.split(".")[0]
        return EXIT_INCOMPLETE, (f"this needs the optional module {mod!r}, which is not installed "
                                 f"(pip install 'txncheck[{_EXTRAS[mod]}]')")
    if isinstance(exc, MemoryError):
        return EXIT_INCOMPLETE, "out of memory; the run is incomplete"
    fr = spec_frame(exc)
    if fr is not None:
        return EXIT_USAGE, f"spec error at {fr.filename}:{fr.lineno} in {fr.name}: {_first_line(exc)}"
    if isinstance(exc, TypeError) and "unhashable" in str(exc):
        return EXIT_USAGE, f"spec error: a state or value is not hashable ({_first_line(exc)})"
    if isinstance(exc, RecursionError):
        return EXIT_USAGE, "input nests too deeply"
    if isinstance(exc, ValueError) and "digits" in str(exc) and "limit" in str(exc):
        return EXIT_USAGE, f"input holds an integer too long to read ({_first_line(exc)})"
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return EXIT_INCOMPLETE, f"{where}{exc.strerror or _first_line(exc)} (environment fault; the run is incomplete)"
    return EXIT_INCOMPLETE, f"internal error, the run is incomplete: {_first_line(exc)} (--debug shows the traceback)"


def _caused_by_interrupt(exc: BaseException) -> bool:
    seen = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, KeyboardInterrupt) or "KeyboardInterrupt" in str(e):  # py4j wraps it in text
            return True
        e = e.__cause__ or e.__context__
    return False


def report(exc: BaseException, bad_input, debug: bool) -> int:
    code, line = classify(exc, bad_input)
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    print(f"txncheck: error: {one_line(line)}", file=sys.stderr)
    return code


def one_line(text: str) -> str:
    """No newline or terminal escape in a message that names untrusted text."""
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}"
                   for c in " ".join(text.split()))
