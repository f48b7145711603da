"""Record every test's duration into tests/durations.txt, from one run of the
whole suite as CI runs it, which tests/conftest.py reads to put each test in
its tier: a test that took at least SLOW_SECONDS (tests/durations.py) is marked
`slow`, and `make test` leaves it to CI (tests/README.md).

    .venv/bin/python scripts/record_durations.py [PYTEST ARGS ...]

runs `CI=true pytest -n 2 --durations=0 --durations-min=0` (niced) over the
whole suite, or over the given paths, whose recorded lines it replaces; or,
with `--from LOG`, reads a saved run's output instead. A test's duration is
its setup, call and teardown together. The machine's load stretches every
figure alike; relative durations are what decide the tiers.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.durations import DURATIONS, parse, read, write  # noqa: E402 - the file's format is the tests'


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--from", dest="log", metavar="LOG", help="a saved pytest output with --durations=0")
    args, pytest_args = ap.parse_known_args(argv)
    if args.log:
        text = Path(args.log).read_text()
    else:
        cmd = ["nice", "-n", "10", sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider",
               "--durations=0", "--durations-min=0", *pytest_args]
        run = subprocess.run(cmd, cwd=ROOT, env={**os.environ, "CI": "true"}, text=True, capture_output=True)
        text = run.stdout + run.stderr
        sys.stdout.write(text[-2000:])
    new = parse(text)
    if not new:
        print("record_durations: no durations in the output", file=sys.stderr)
        return 1
    durations = read() if pytest_args else {}  # a partial run replaces only its own tests' lines
    durations.update(new)
    write(durations)
    print(f"record_durations: {len(new)} tests recorded, {len(durations)} in {DURATIONS.relative_to(ROOT)}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
