"""The tiers of the suite. tests/durations.txt records every test's CPU
seconds (its process's and its waited-for subprocesses', setup to teardown)
from one run of the suite as CI runs it; CPU time hardly depends on how
loaded the machine is, so the recording holds on another machine. A test
recorded at SLOW_SECONDS or more is in the `slow` tier, which `make test`
leaves to CI (tests/README.md). The record cannot drift: tests/test_durations.py
fails on a fast-tier test without a recorded time (a new test is in the fast
tier until it is recorded, unless it is marked `slow` itself) and on a
recorded id that names no test (`drift`).

Recording (scripts/record_durations.py sets it up): with the environment
variable TXNCHECK_RECORD_DURATIONS=FILE, this module, loaded as a pytest
plugin (`-p tests.durations`), appends `SECONDS NODEID` lines to FILE. With
TXNCHECK_DURATIONS_CAP=SECONDS as well, a test is stopped once its process
has used that much CPU, or TXNCHECK_DURATIONS_WALL_CAP seconds of wall time
(default 30 times as much, for a loaded machine), and recorded at the cap:
enough to know that it is slow, at a bounded cost.
Spark's and ZooKeeper's JVMs are not waited for, so their work is not in
the figures: tests/spark/conftest.py tiers the Spark tests itself."""

from __future__ import annotations

import os
import resource
import signal
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DURATIONS = ROOT / "tests" / "durations.txt"
SLOW_SECONDS = 1.0   # make test within 5 minutes on two cores (bench/make_test.py): at 1.5 it took 4 min 59 s to 5 min 6 s on 2026-11-29
HEADER = """\
# Every test's CPU seconds (setup to teardown, with the subprocesses it waited for), slowest first,
# from one run of the suite as CI runs it (CI=true pytest -n 2). A test recorded at SLOW_SECONDS or
# more (tests/durations.py) is in the `slow` tier, which `make test` leaves to CI. Only tests under
# tests/ are recorded (the examples of README.md and docs/ are never left out of the fast tier).
# Re-record with: .venv/bin/python scripts/record_durations.py [--missing | PATHS ...] (tests/README.md)
"""


def read(path: Path = DURATIONS) -> dict[str, float]:
    """nodeid -> CPU seconds, as recorded."""
    out = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                seconds, nodeid = line.split(None, 1)
                out[nodeid] = float(seconds)
    return out


def write(durations: dict[str, float], path: Path = DURATIONS) -> None:
    rows = sorted(durations.items(), key=lambda kv: (-kv[1], kv[0]))
    path.write_text(HEADER + "".join(f"{s:9.3f}  {n}\n" for n, s in rows))


def slow(durations: dict[str, float]) -> set[str]:
    return {n for n, s in durations.items() if s >= SLOW_SECONDS}


def drift(durations: dict[str, float], collected: dict) -> tuple[list[str], list[str]]:
    """(fast-tier tests without a recorded time, recorded ids that name no
    test) for a collection (`collection`): a recorded id is judged only if
    its file was collected whole, or no longer exists."""
    unrecorded = [n for n in collected["fast"] if n not in durations]
    every = set(collected["all"])
    whole = set(collected["whole"])
    stale = [n for n in durations
             if (n.split("::", 1)[0] in whole and n not in every) or not (ROOT / n.split("::", 1)[0]).is_file()]
    return unrecorded, stale


def collection(items, args) -> dict:
    """What a session collected, before -m and -k deselect: every test id
    under tests/, those of the fast tier (no `slow` mark), and the files
    collected whole (not narrowed to some of their tests by `file::test`)."""
    ids = [i.nodeid for i in items if i.nodeid.startswith("tests/")]
    narrowed = {a.split("::", 1)[0] for a in args if "::" in a}
    return {"all": ids,
            "fast": [i.nodeid for i in items if i.nodeid.startswith("tests/") and not i.get_closest_marker("slow")],
            "whole": sorted({n.split("::", 1)[0] for n in ids} - {str(Path(a)) for a in narrowed})}


def fast_seconds(durations: dict[str, float], fast: list[str]) -> float:
    """The fast tier's recorded CPU seconds (what tests/README.md gives)."""
    return sum(durations.get(n, 0.0) for n in fast)


FIGURE_PATTERN = r"[\d,]+ CPU s recorded"   # tests/README.md's figure for the fast tier


def figure(seconds: float) -> str:
    return f"{round(seconds):,} CPU s recorded"


# -- the recording plugin ---------------------------------------------------------------------

def _cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


class Capped(BaseException):
    """Raised in a test that used up the recording's cap."""


def _stop(signum, frame):
    raise Capped(f"stopped at the recording's cap ({os.environ['TXNCHECK_DURATIONS_CAP']} s)")


def slow_by_mark(item) -> bool:
    """In the slow tier for a reason other than the record: marked so, or a
    Spark test of tests/spark/conftest.py's list; a recording leaves it out."""
    return any(m.kwargs.get("recorded") is not True for m in item.iter_markers("slow"))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """While recording: only the tests the record tiers (the fast ones and
    those it found slow), so that a whole recording runs no Spark campaign,
    no wheel build and no cluster."""
    if os.environ.get("TXNCHECK_RECORD_DURATIONS"):
        left = [i for i in items if slow_by_mark(i)]
        if left:
            config.hook.pytest_deselected(items=left)
            items[:] = [i for i in items if not slow_by_mark(i)]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    item.stash[_START] = _cpu()
    cap = float(os.environ.get("TXNCHECK_DURATIONS_CAP") or 0)
    if cap and os.environ.get("TXNCHECK_RECORD_DURATIONS"):
        signal.signal(signal.SIGPROF, _stop)
        signal.signal(signal.SIGALRM, _stop)
        signal.setitimer(signal.ITIMER_PROF, cap)
        signal.setitimer(signal.ITIMER_REAL, float(os.environ.get("TXNCHECK_DURATIONS_WALL_CAP") or 30 * cap))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.when == "teardown" and _START in item.stash:
        cap = float(os.environ.get("TXNCHECK_DURATIONS_CAP") or 0)
        if cap:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.setitimer(signal.ITIMER_REAL, 0)
        used = _cpu() - item.stash[_START]
        if item.stash.get(_CAPPED, False):
            used = max(used, cap)
        report.user_properties.append(("cpu_seconds", round(used, 3)))
    elif call.excinfo is not None and call.excinfo.errisinstance(Capped):
        item.stash[_CAPPED] = True


def pytest_runtest_logreport(report):
    """In the process that reports (xdist's controller, or the only one)."""
    target = os.environ.get("TXNCHECK_RECORD_DURATIONS")
    cpu = dict(report.user_properties).get("cpu_seconds")
    if target and report.when == "teardown" and cpu is not None and "PYTEST_XDIST_WORKER" not in os.environ:
        with open(target, "a") as f:
            f.write(f"{cpu:.3f} {report.nodeid}\n")


_START = pytest.StashKey[float]()
_CAPPED = pytest.StashKey[bool]()
