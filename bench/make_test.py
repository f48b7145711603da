"""`make test` as the README gives it: wall time, CPU and peak memory of the
fast tier, measured with /usr/bin/time -v, on this machine (run it on a quiet
one: the wall time is the figure).

    .venv/bin/python bench/make_test.py            # measure, print the README's sentence
    .venv/bin/python bench/make_test.py --write    # and write it into README.md

The peak is /usr/bin/time's: the largest resident set of any one process
(pytest-xdist's workers are separate processes). Spark's and ZooKeeper's JVMs
are not waited for by the tests, so their CPU is not in the CPU figure; it is
in the wall time. tests/test_docs_skipped.py reads the sentence back.
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
TARGET = (300, 1024)   # seconds of wall time and MiB of peak memory the fast tier must stay within
# The README's sentence; `sentence` writes it and PATTERN reads it back.
PATTERN = (r"Measured on (?P<cores>\d+) cores with `/usr/bin/time -v` \(`bench/make_test\.py`, (?P<date>\d{4}-\d\d-\d\d)\): "
           r"(?P<min>\d+) min (?P<sec>\d+) s, (?P<cpu>[\d,]+) CPU s, a peak of (?P<mib>[\d,]+) MiB in one process\.")
SELF = "tests/test_docs_skipped.py::test_the_readme_gives_make_tests_time_as_measured_within_its_target"
PLACEHOLDER = "Not measured yet on a quiet machine (`bench/make_test.py --write` writes the figure here)."


def sentence(cores: int, date: str, seconds: float, cpu: float, peak_mib: float) -> str:
    s = round(seconds)
    return (f"Measured on {cores} cores with `/usr/bin/time -v` (`bench/make_test.py`, {date}): "
            f"{s // 60} min {s % 60} s, {round(cpu):,} CPU s, a peak of {round(peak_mib):,} MiB in one process.")


def parse_time(text: str) -> dict:
    """Wall seconds, CPU seconds and peak MiB from /usr/bin/time -v's report."""
    def field(name: str) -> str:
        return re.search(rf"^\s*{re.escape(name)}: (.+)$", text, re.M).group(1).strip()

    *hm, sec = field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")
    wall = float(sec) + 60 * int(hm[-1]) + (3600 * int(hm[0]) if len(hm) == 2 else 0)
    cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
    return {"seconds": wall, "cpu": cpu, "peak_mib": int(field("Maximum resident set size (kbytes)")) / 1024}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="write the sentence into README.md")
    args = ap.parse_args(argv)
    proc = subprocess.run(["/usr/bin/time", "-v", "make", "test"], cwd=ROOT, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    print(proc.stdout[-3000:])
    print(proc.stderr[-3000:], file=sys.stderr)
    failed = set(re.findall(r"^FAILED (\S+)", proc.stdout, re.M))
    if proc.returncode != 0 and failed != {SELF}:   # the test that reads this sentence fails until it is written
        print(f"make_test: make test exited {proc.returncode}: nothing written", file=sys.stderr)
        return 1
    m = parse_time(proc.stderr)
    line = sentence(os.cpu_count() or 1, datetime.date.today().isoformat(), m["seconds"], m["cpu"], m["peak_mib"])
    print(line)
    if m["seconds"] > TARGET[0] or m["peak_mib"] > TARGET[1]:
        print(f"make_test: over the target of {TARGET[0]} s and {TARGET[1]} MiB", file=sys.stderr)
    if args.write:
        text = README.read_text()
        old = re.search(PATTERN, text) or re.search(re.escape(PLACEHOLDER), text)
        if old is None:
            print("make_test: README.md has no sentence to replace", file=sys.stderr)
            return 1
        README.write_text(text.replace(old.group(0), line, 1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
