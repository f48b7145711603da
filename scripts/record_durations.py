"""Record every test's CPU seconds into tests/durations.txt, which
tests/conftest.py reads to put each test in its tier (tests/durations.py says
how, tests/README.md what the tiers are), and write the fast tier's recorded
CPU seconds into tests/README.md. tests/test_durations.py fails when the
record has drifted from the suite.

    .venv/bin/python scripts/record_durations.py [--cap S] [--missing | PYTEST ARGS ...]

With no arguments it runs the suite as CI does (`CI=true pytest -n 2
-p tests.durations`, niced) and replaces the record: every test the record
tiers, that is all but those slow by a mark (`@pytest.mark.slow`, the Spark
tests of tests/spark/conftest.py's list), which need no time. With paths, it
replaces only their tests' lines. `--missing` records only the fast-tier tests that
have no recorded time and drops the lines of tests that no longer exist:
what tests/test_durations.py asks for after tests were added or removed.
`--cap S` stops each test at S CPU seconds (tests/durations.py), so a
recording on a busy machine costs at most that much per slow test.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.durations import DURATIONS, FIGURE_PATTERN, drift, fast_seconds, figure, read, write  # noqa: E402
TESTS_README = ROOT / "tests" / "README.md"
PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]


def collect(env: dict) -> dict:
    """What the suite holds now (tests/durations.py `collection`)."""
    with tempfile.NamedTemporaryFile("r", suffix=".json") as out:
        proc = subprocess.run([*PYTEST, "--collect-only"], cwd=ROOT, env={**env, "TXNCHECK_COLLECTED": out.name},
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        text = out.read()
    if proc.returncode != 0 or not text:
        sys.exit(f"record_durations: the suite does not collect:\n{proc.stderr[-2000:]}")
    return json.loads(text)


def record(args: list[str], env: dict) -> dict[str, float]:
    """CPU seconds of the tests `args` select, run as CI runs them."""
    with tempfile.NamedTemporaryFile("r", suffix=".txt") as log:
        subprocess.run(["nice", "-n", "10", *PYTEST, "-n", "2", "-p", "tests.durations", *args], cwd=ROOT,
                       env={**env, "TXNCHECK_RECORD_DURATIONS": log.name})
        rows = (line.split(None, 1) for line in log.read().splitlines())
        return {nodeid: float(seconds) for seconds, nodeid in rows if nodeid.startswith("tests/")}


def main(argv: list[str]) -> int:
    env = {**os.environ, "CI": "true"}
    if argv[:1] == ["--cap"]:
        env["TXNCHECK_DURATIONS_CAP"], argv = argv[1], argv[2:]
    missing = argv == ["--missing"]
    durations = read()
    if missing:
        unrecorded, stale = drift(durations, collect(env))
        for n in stale:
            del durations[n]
        new = record(unrecorded, env) if unrecorded else {}
        if len(new) < len(unrecorded):
            print(f"record_durations: {len(unrecorded) - len(new)} of {len(unrecorded)} tests were not recorded",
                  file=sys.stderr)
        print(f"record_durations: {len(stale)} lines of tests that no longer exist dropped", file=sys.stderr)
    else:
        new = record(argv, env)
        if not new:
            print("record_durations: no test was recorded", file=sys.stderr)
            return 1
        if not argv:   # the whole suite: nothing else is kept
            durations = {}
    durations.update(new)
    write(durations)
    fast = fast_seconds(durations, collect(env)["fast"])
    text = TESTS_README.read_text()
    TESTS_README.write_text(re.sub(FIGURE_PATTERN, figure(fast), text, count=1))
    print(f"record_durations: {len(new)} tests recorded, {len(durations)} in {DURATIONS.relative_to(ROOT)}; "
          f"the fast tier: {figure(fast)} (tests/README.md)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
