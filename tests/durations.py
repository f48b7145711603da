"""The tiers of the suite. tests/durations.txt records every test's CPU
seconds (its process's and its waited-for subprocesses', setup to teardown)
from one run of the suite as CI runs it; CPU time hardly depends on how
loaded the machine is, so the recording holds on another machine. A test
recorded at SLOW_SECONDS or more is in the `slow` tier, which `make test`
leaves to CI (tests/README.md); a test not recorded yet is in the fast tier
until the next recording, unless it is marked `slow` itself.

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

DURATIONS = Path(__file__).resolve().parent / "durations.txt"
SLOW_SECONDS = 2.0
HEADER = """\
# Every test's CPU seconds (setup to teardown, with the subprocesses it waited for), slowest first,
# from one run of the suite as CI runs it (CI=true pytest -n 2). A test recorded at SLOW_SECONDS or
# more (tests/durations.py) is in the `slow` tier, which `make test` leaves to CI.
# Re-record with: .venv/bin/python scripts/record_durations.py [PATHS ...]
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


# -- the recording plugin ---------------------------------------------------------------------

def _cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


class Capped(BaseException):
    """Raised in a test that used up the recording's cap."""


def _stop(signum, frame):
    raise Capped(f"stopped at the recording's cap ({os.environ['TXNCHECK_DURATIONS_CAP']} s)")


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
