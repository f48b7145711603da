"""The tiers of the suite: tests/durations.txt records every test's duration
(scripts/record_durations.py writes it from one run of the suite as CI runs
it), and a test that took at least SLOW_SECONDS there is in the `slow` tier,
which `make test` leaves to CI (tests/README.md). A test not recorded yet is
in the fast tier until the next recording, unless it is marked `slow` itself."""

from __future__ import annotations

import re
from pathlib import Path

DURATIONS = Path(__file__).resolve().parent / "durations.txt"
SLOW_SECONDS = 4.0
HEADER = """\
# Every test's duration in seconds (setup + call + teardown), slowest first, from one run of the
# suite as CI runs it (CI=true pytest -n 2 --durations=0, on the 2-core machine, under the load of
# the day: the ratios matter, not the figures). A test that took at least SLOW_SECONDS
# (tests/durations.py) is in the `slow` tier, which `make test` leaves to CI.
# Re-record with: .venv/bin/python scripts/record_durations.py [PATHS ...]
"""
LINE = re.compile(r"^\s*([\d.]+)s (setup|call|teardown)\s+(\S.*?)\s*$")


def parse(text: str) -> dict[str, float]:
    """nodeid -> seconds, from the report of `pytest --durations=0`."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            out[m.group(3)] = out.get(m.group(3), 0.0) + float(m.group(1))
    return out


def read(path: Path = DURATIONS) -> dict[str, float]:
    """nodeid -> seconds, as recorded."""
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
