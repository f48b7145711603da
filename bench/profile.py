"""The profile of the standard PIP-473 `fixed` model in docs/performance.md
("Why PIP-473 `fixed` at the standard bounds is this big"), written from a
record so that the block cannot fall behind the spec by hand.

One `txncheck profile models/pip473/fixed-standard.toml --max-states 600000`
process, as a user runs it: its output, CPU seconds (the kernel's account of
the child), wall seconds and peak RSS go into bench/records/profile.json,
and the console block is written from the record. tests/test_docs_skipped.py
runs the same command to 2,000 states and compares its sections, fields and
actions with the block, so a spec change that adds a field fails there until
this is re-run. Run it on a quiet machine (a minute and a half, 1.8 GiB):

    .venv/bin/python bench/profile.py            # measure, then the record and the block
    .venv/bin/python bench/profile.py --render   # the block from the record alone
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from records import measured_at, record_and_write  # noqa: E402

RECORD = ROOT / "bench" / "records" / "profile.json"
DOC = ROOT / "docs" / "performance.md"
BEGIN = "<!-- profile: written by bench/profile.py from bench/records/profile.json -->"
END = "<!-- /profile -->"
ARGS = ["profile", "models/pip473/fixed-standard.toml", "--max-states", "600000"]


def measure(_old: dict) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    out = subprocess.run([str(ROOT / ".venv" / "bin" / "txncheck"), *ARGS], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"command": "txncheck " + " ".join(ARGS), "output": out.rstrip("\n"), "wall_s": round(wall, 1),
            "cpu_s": round(cpu, 1), "peak_rss_gib": round(after.ru_maxrss / 2**20, 1),
            "date": time.strftime("%Y-%m-%d")}


def render(r: dict) -> str:
    return "\n".join([
        BEGIN,
        '<!-- skip: next "a minute and a half and 1.8 GiB; tests/test_docs_skipped.py runs the same command to '
        '2,000 states and compares its sections, fields and actions" -->',
        "```console", f"$ {r['command']}", r["output"], "```", "",
        f"{measured_at(r)}, on {r['date']}, on a quiet machine: {r['wall_s']} s of wall time, {r['cpu_s']} s "
        f"of CPU, {r['peak_rss_gib']} GiB peak RSS (`.venv/bin/python bench/profile.py`).",
        END])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--render", action="store_true", help="write the block from the record alone")
    a = ap.parse_args()
    record_and_write(ROOT, RECORD, DOC, BEGIN, END, render, None if a.render else measure)


if __name__ == "__main__":
    main()
