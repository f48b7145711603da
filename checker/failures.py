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
import re
import signal
import sys
import threading
import time
import traceback
from contextlib import contextmanager
from typing import Any

from .errors import EnvironmentFault

EXIT_USAGE, EXIT_INCOMPLETE = 2, 3

# pip extra for each optional module
_EXTRAS = {"pyspark": "spark", "py4j": "spark", "pyarrow": "spark", "kazoo": "zookeeper"}



def extra_packages(extra: str) -> list[str]:
    """The packages of one of txncheck's extras (pyproject.toml), as the
    installed txncheck declares them: txncheck itself is on no package index,
    so `pip install 'txncheck[spark]'` would find nothing."""
    from importlib.metadata import PackageNotFoundError, requires

    try:
        reqs = requires("txncheck") or []
    except PackageNotFoundError:
        reqs = []
    found = [r.split(";")[0].strip().replace(" ", "") for r in reqs
             if r.replace(" ", "").endswith(f'extra=="{extra}"') and not r.startswith("txncheck")]
    return [re.split(r"[<>=!~\[]", r)[0] for r in found] or [f"the packages of txncheck's {extra!r} extra"]


interrupted: list[str] = []  # set by the signal handlers: a run that ends after it is incomplete
_owner: list[int] = []  # the pid that installed the handlers (a forked worker inherits them)
_last_signal = [0.0]
_redeliver = False
_debug: list[bool] = []
_fork_hook: list[bool] = []
DUPLICATE_WITHIN = 0.5  # seconds: a second signal this soon after the first is the same one
BUDGET_SLACK = 0.5  # seconds past --max-seconds (and 5%) before the budget interrupts the code running


class SignalInterrupt(KeyboardInterrupt):
    """The KeyboardInterrupt that txncheck's handler raises for Ctrl-C or SIGTERM."""


class BudgetExpired(KeyboardInterrupt):
    """`--max-seconds` ran out while Python code (a spec's `next`) did not return
    to the engine (checker/api.py arms it); engines stop on it as on Ctrl-C."""


def _on_signal(signum, _frame):
    if _owner and os.getpid() != _owner[0]:
        # a forked worker (bfs --workers): its coordinator stops it; a SIGTERM
        # (the coordinator's terminate, or anyone's) ends it at once, without a
        # traceback, and as the signal's death, which its coordinator names
        if signum == signal.SIGTERM:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            os._exit(EXIT_INCOMPLETE)
        return
    global _redeliver
    if _redeliver:  # an interrupt that a callback swallowed, raised again (`_on_unraisable`)
        _redeliver = False
        raise SignalInterrupt
    now = time.monotonic()
    if interrupted and now - _last_signal[0] < DUPLICATE_WITHIN:
        return  # the same signal twice: sent to the process group, and passed on by the supervisor
    interrupted.append(signal.Signals(signum).name)
    _last_signal[0] = now
    raise SignalInterrupt


def _on_unraisable(unraisable) -> None:
    """An interrupt that landed in a callback Python cannot raise from (an
    at-fork handler while `--workers` forks, a `__del__`) is printed as
    "Exception ignored" and lost: raise it again, in the code that runs
    after the callback. Once interrupted, print no such report (unless
    --debug): an object the signal caught half-built (a z3 Context) fails
    in its `__del__`."""
    global _redeliver
    if interrupted and _owner == [os.getpid()]:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            # Sent a moment later, from a thread: a signal sent here would be handled in this hook.
            sig = signal.SIGTERM if interrupted[0] == "SIGTERM" else signal.SIGINT
            timer = threading.Timer(0.05, signal.pthread_kill, (threading.main_thread().ident, sig))
            timer.daemon = True
            timer.start()
            _redeliver = True  # set last, and without a call: no handler runs in this hook after it
        if not _debug:
            return
    sys.__unraisablehook__(unraisable)


def install_signal_handlers(debug: bool = False) -> dict:
    """Ctrl-C and SIGTERM both raise KeyboardInterrupt (exit 3) and are remembered,
    so a library that swallows the exception cannot turn the run into a success
    (Z3's own Ctrl-C handler is off: checker/invariants.py). Returns the
    previous handlers, for `restore_signal_handlers`."""
    global _redeliver
    interrupted.clear()
    _redeliver = False
    _owner[:] = [os.getpid()]
    _debug[:] = [True] if debug else []
    old: dict[str | signal.Signals, Any] = {"unraisablehook": sys.unraisablehook}
    sys.unraisablehook = _on_unraisable
    if not _fork_hook:  # once per process: a process forked from here (a --workers worker) dies with it
        os.register_at_fork(after_in_child=_die_with_parent)
        _fork_hook.append(True)
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            old[sig] = signal.signal(sig, _on_signal)
        except (ValueError, OSError):  # not the main thread
            pass
    return old


def _die_with_parent() -> None:
    """In a process forked from txncheck's: SIGTERM when its parent dies (Linux
    PR_SET_PDEATHSIG), so a worker never outlives a coordinator that was
    killed, or ended by `os._exit`, before it could stop it."""
    if not _owner:
        return
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass


def debugging() -> bool:
    """--debug (or TXNCHECK_DEBUG=1) was given: a failure's traceback is printed too
    (by a forked worker, which reports its failure as one line, as well)."""
    return bool(_debug)


def unblock_signals() -> None:
    """The supervisor's child starts with Ctrl-C and SIGTERM blocked
    (checker/supervisor.py): one that came meanwhile is raised here."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


def foreign_interrupt(exc: BaseException) -> bool:
    """A KeyboardInterrupt that no signal caused and no budget raised: code
    that txncheck ran (a spec's) raised it itself while txncheck's handlers
    were installed. It is that code's error (exit 2), not a Ctrl-C."""
    return (isinstance(exc, KeyboardInterrupt) and not isinstance(exc, (SignalInterrupt, BudgetExpired))
            and not interrupted and _owner == [os.getpid()])


@contextmanager
def budget_alarm(seconds: float | None):
    """`--max-seconds` for code that never returns to the engine (a spec's
    `next` in an endless loop): a timer signal raises `BudgetExpired` in the
    Python code running BUDGET_SLACK past the budget; the engines stop on it
    as on Ctrl-C. Yields a list that holds True once it fired. The main
    thread only (elsewhere, the engines' own clock checks are the budget)."""
    fired: list[bool] = []
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield fired
        return

    def on_alarm(_signum, _frame):
        fired.append(True)
        raise BudgetExpired(f"max-seconds {seconds:g} reached")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds * 1.05 + BUDGET_SLACK)
    try:
        yield fired
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


_IN_CTYPES = re.compile(r"argument \d+: (KeyboardInterrupt|SignalInterrupt|BudgetExpired): ")


def as_interrupt(exc: BaseException) -> BaseException:
    """`exc`, or the interrupt it stands for. ctypes, which Z3's Python bindings
    call through, turns an exception raised while it converts an argument into
    `ctypes.ArgumentError` ("argument 2: SignalInterrupt: "), which no
    `except KeyboardInterrupt` catches: a Ctrl-C landing in a Z3 call lost the
    whole report. Such an error, after a signal or the budget fired, is the interrupt."""
    m = _IN_CTYPES.match(str(exc)) if type(exc).__name__ == "ArgumentError" else None
    if m is None or not (interrupted or m[1] == "BudgetExpired"):
        return exc
    found = {"SignalInterrupt": SignalInterrupt, "BudgetExpired": BudgetExpired}.get(m[1], KeyboardInterrupt)()
    found.__cause__ = exc
    return found


def stops_the_search(exc: BaseException) -> bool:
    """An engine ends its search on this and reports what it found: an
    interrupt, a budget, or either of them inside a ctypes call (`as_interrupt`)."""
    return isinstance(as_interrupt(exc), KeyboardInterrupt)


def is_interrupt(exc: BaseException) -> bool:
    """Ctrl-C or SIGTERM: a KeyboardInterrupt that is neither a spec's own nor a budget's."""
    exc = as_interrupt(exc)
    return isinstance(exc, KeyboardInterrupt) and not foreign_interrupt(exc) and not isinstance(exc, BudgetExpired)


def spec_exit(exc: BaseException) -> bool:
    """An exception that would end the process or pose as Ctrl-C, raised by
    code txncheck runs: `sys.exit()` (SystemExit), or a KeyboardInterrupt of its own."""
    return isinstance(exc, SystemExit) or foreign_interrupt(exc)


def exit_on_late_signal(before_exit=None) -> None:
    """For the rest of the process: Ctrl-C or SIGTERM exits 3 at once, with
    what was printed flushed, instead of a traceback from interpreter exit
    (`before_exit(3)` first: the supervisor's report)."""
    def _late(signum, _frame):
        if interrupted and time.monotonic() - _last_signal[0] < DUPLICATE_WITHIN:
            return  # the interrupt that ended the run, passed on by the supervisor: let it end cleanly
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        if before_exit is not None:
            before_exit(EXIT_INCOMPLETE)
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
    _owner.clear()
    old = dict(old)
    sys.unraisablehook = old.pop("unraisablehook", sys.unraisablehook)
    for sig, handler in old.items():
        signal.signal(sig, handler)


def _is_library(file: str) -> bool:
    """Not a spec's own code: txncheck outside spec/ (and spec/'s framework
    modules), the standard library, installed packages (spec/source.py's
    `owner`, imported here late: it imports z3, which start-up does not)."""
    from ..spec.source import owner

    return owner(file) != "spec"


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

    if not interrupted and spec_exit(exc):
        fr = spec_frame(exc)
        if fr is not None:
            return EXIT_USAGE, f"spec error at {fr.filename}:{fr.lineno} in {fr.name}: {exit_text(exc)}"
        if isinstance(exc, SystemExit):  # not from a spec: never its exit code
            return EXIT_INCOMPLETE, (f"internal error, the run is incomplete: sys.exit({exc.code!r}) "
                                     "(--debug shows the traceback)")
    if isinstance(exc, BudgetExpired) and not interrupted:
        return EXIT_INCOMPLETE, f"{exc}; the run is incomplete"
    if isinstance(exc, KeyboardInterrupt) or interrupted or _caused_by_interrupt(exc, bad_input):
        how = interrupted[0] if interrupted else "SIGINT"
        return EXIT_INCOMPLETE, f"interrupted ({how}); the run is incomplete"
    if isinstance(exc, (ReportError, EnvironmentFault)):
        return EXIT_INCOMPLETE, str(exc)
    if isinstance(exc, bad_input):
        return EXIT_USAGE, str(exc)
    if isinstance(exc, ModuleNotFoundError) and exc.name and exc.name.split(".")[0] in _EXTRAS:
        mod = exc.name.split(".")[0]
        return EXIT_INCOMPLETE, (f"this needs the optional module {mod!r}, which is not installed "
                                 f"(pip install {' '.join(extra_packages(_EXTRAS[mod]))})")
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


def exit_text(exc: BaseException) -> str:
    """What a spec did when it raised SystemExit or a KeyboardInterrupt of its own."""
    if isinstance(exc, SystemExit):
        return f"it called sys.exit({exc.code!r}); spec code must not end the process"
    return "it raised KeyboardInterrupt itself (no signal was received)"


def _caused_by_interrupt(exc: BaseException, bad_input=()) -> bool:
    seen = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if foreign_interrupt(e):  # a spec's own (its error chains it): not a Ctrl-C
            return False
        if isinstance(e, KeyboardInterrupt):
            return True
        if not isinstance(e, bad_input) and "KeyboardInterrupt" in str(e):  # py4j wraps it in text
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
