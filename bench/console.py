"""The console blocks of docs/performance.md: each is one bench command and
its output, kept in a record (bench/records/console.json) and written into
the doc from it, so that re-measuring is one command, never a paste.

    .venv/bin/python bench/console.py --measure NAME   # run NAME's command, record its output, rewrite the doc
    .venv/bin/python bench/console.py --render         # rewrite every block from the record
    .venv/bin/python bench/console.py --list           # the blocks, their commands and when each was recorded

A block sits between `<!-- console NAME: ... -->` and `<!-- /console NAME -->`;
the record keeps its command, its output, the doc's skip note (why the docs
test does not run it) and where it was measured: the commit, date, Python,
machine and load average of a --measure, or "imported" for an output pasted
into the doc before this script existed (the paragraph after the block says
when that was). tests/test_docs_records.py holds the doc to the record, and
tests/test_docs_skipped.py checks each block's shape against a small run.
Measure on a quiet machine: a figure measured beside other work says so
only through the load average recorded with it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from records import provenance, write_section  # noqa: E402

RECORD = ROOT / "bench" / "records" / "console.json"
DOC = ROOT / "docs" / "performance.md"


def markers(name: str) -> tuple[str, str]:
    return (f"<!-- console {name}: written by bench/console.py from bench/records/console.json -->",
            f"<!-- /console {name} -->")


def render(name: str, r: dict) -> str:
    begin, end = markers(name)
    where = r["measured"]
    if where == "imported":
        said = (f"Recorded before bench/console.py existed: the paragraph below says when. "
                f"`.venv/bin/python bench/console.py --measure {name}` re-measures it.")
    else:
        said = (f"Recorded by `.venv/bin/python bench/console.py --measure {name}` at commit {where['commit']} "
                f"on {where['date']} ({where['python']}, {where['machine']}, load average {where['load']} "
                f"at the start).")
    return "\n".join([begin, f'<!-- skip: next "{r["skip"]}" -->', "```console", f"$ {r['command']}",
                      r["output"], "```", "", said, end])


def load() -> dict:
    return json.loads(RECORD.read_text()) if RECORD.exists() else {}


def save(records: dict) -> None:
    RECORD.write_text(json.dumps(records, indent=1, sort_keys=True) + "\n")


def write_doc(records: dict) -> None:
    for name, r in records.items():
        write_section(DOC, *markers(name), render(name, r))


def measure(name: str, records: dict) -> None:
    r = records[name]
    load1 = f"{os.getloadavg()[0]:.1f}"
    start = time.strftime("%Y-%m-%d")
    out = subprocess.run(["bash", "-c", r["command"]], cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"console: {name}: `{r['command']}` exited {out.returncode}; the record is unchanged\n"
                 f"{out.stderr[-2000:]}")
    p = provenance(ROOT)
    r["output"] = out.stdout.rstrip("\n")
    r["measured"] = {"commit": p["commit"], "date": start, "python": p["python"], "machine": p["machine"],
                     "load": load1}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--measure", metavar="NAME", help="run the block's command and record its output")
    g.add_argument("--render", action="store_true", help="rewrite every block from the record")
    g.add_argument("--list", action="store_true", help="the blocks, their commands and when each was recorded")
    a = ap.parse_args()
    records = load()
    if a.list:
        for name, r in records.items():
            when = r["measured"] if r["measured"] == "imported" else r["measured"]["date"]
            print(f"{name:22} {when:10}  $ {r['command']}")
        return 0
    if a.measure:
        if a.measure not in records:
            sys.exit(f"console: no block {a.measure!r}; the blocks: {', '.join(records)}")
        measure(a.measure, records)
        save(records)
    write_doc(records)
    return 0


def blocks_of(text: str) -> list[str]:
    """The names of the console blocks a doc holds, in order."""
    return re.findall(r"<!-- console ([\w.-]+): written by", text)


if __name__ == "__main__":
    sys.exit(main())
