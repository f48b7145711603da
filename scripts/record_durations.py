"""Record every test's CPU seconds into tests/durations.txt, from one run of
the whole suite as CI runs it, which tests/conftest.py reads to put each test
in its tier (tests/durations.py says how, tests/README.md what the tiers are).

    .venv/bin/python scripts/record_durations.py [--cap S] [PYTEST ARGS ...]

runs `CI=true pytest -n 2 -p tests.durations` (niced) over the whole suite,
or over the given paths, whose recorded lines it replaces. `--cap S` stops
each test at S CPU seconds (tests/durations.py), so that a recording on a
busy machine costs at most that much per slow test.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.durations import DURATIONS, read, write  # noqa: E402 - the file's format is the tests'


def main(argv: list[str]) -> int:
    env = {**os.environ, "CI": "true"}
    if argv[:1] == ["--cap"]:
        env["TXNCHECK_DURATIONS_CAP"], argv = argv[1], argv[2:]
    with tempfile.NamedTemporaryFile("r", suffix=".txt") as log:
        cmd = ["nice", "-n", "10", sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider",
               "-p", "tests.durations", *argv]
        subprocess.run(cmd, cwd=ROOT, env={**env, "TXNCHECK_RECORD_DURATIONS": log.name})
        new = {}
        for line in log.read().splitlines():
            seconds, nodeid = line.split(None, 1)
            new[nodeid] = float(seconds)
    if not new:
        print("record_durations: no test was recorded", file=sys.stderr)
        return 1
    durations = read() if argv else {}  # a partial run replaces only its own tests' lines
    durations.update(new)
    write(durations)
    print(f"record_durations: {len(new)} tests recorded, {len(durations)} in {DURATIONS.relative_to(ROOT)}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
