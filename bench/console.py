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
when that was). Where the prose compares a block's figures (a ratio, "N s
against M s"), the comparison is written under the block from the same
output (`NOTES`), so that it changes with the record, never by hand.
tests/test_docs_records.py holds the doc to the record, and
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


def table(output: str) -> list[dict[str, str]]:
    """The rows of the first Markdown table of a command's output, each
    row's cells by their header."""
    lines = [ln for ln in output.splitlines() if ln.startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    return [dict(zip(head, (c.strip() for c in ln.strip("|").split("|")))) for ln in lines[2:]]


def _row(rows: list[dict[str, str]], **cells: str) -> dict[str, str]:
    """The one row with these cells."""
    (row,) = [r for r in rows if all(r[k] == v for k, v in cells.items())]
    return row


def _n(cell: str) -> float:
    return float(cell.replace(",", ""))


def _suite_note(output: str) -> str:
    """What each reduction of a suite table costs or buys against its `unreduced` run."""
    rows = table(output)
    base, fp, compact, por, w2 = (_row(rows, run=run) for run in
                                  ("unreduced", "fingerprints", "compact", "por", "workers2"))

    def share(row, col):
        return f"{_n(row[col]) / _n(base[col]):.0%}"

    def times(row, col, of=base):
        return f"{_n(row[col]) / _n(of[col]):.2f}x"

    return (f"From this table, against `unreduced`: `fingerprints` needs {share(fp, 'peak RSS MiB')} of its "
            f"peak RSS ({fp['MiB / M states']} MiB per million states) for {times(fp, 'CPU s')} its CPU; "
            f"`compact` {share(compact, 'peak RSS MiB')} for {times(compact, 'CPU s')}; `por` keeps the same "
            f"states ({por['reduction']}) for {times(por, 'CPU s')} the CPU. `workers2` (two workers, "
            f"fingerprints) runs at {_n(fp['wall s']) / _n(w2['wall s']):.2f}x the wall-time speed of "
            f"`fingerprints` in one process ({w2['wall s']} s against {fp['wall s']} s), for "
            f"{times(w2, 'CPU s', fp)} its CPU.")


def _tlc_note(output: str) -> str:
    """txncheck's two workers against TLC's two, and against its own one process."""
    rows = table(output)
    tlc2 = _row(rows, tool="TLC", workers="2")
    one, two = _row(rows, tool="txncheck (in process)"), _row(rows, tool="txncheck --workers 2")
    return (f"From this table: txncheck with two workers took {two['wall / TLC']}x TLC's wall time with two "
            f"workers ({two['wall s']} s against {tlc2['wall s']} s) and ran "
            f"{_n(one['wall s']) / _n(two['wall s']):.2f}x as fast as its own run in one process "
            f"({one['wall s']} s), for {two['CPU s']} CPU s, {_n(two['CPU s']) / _n(one['CPU s']):.2f}x that "
            f"run's.")


# name -> the sentences under its block, written from the record's output, so
# that a comparison the prose draws is re-measured with its table
NOTES = {"suite-pip473-fixed": _suite_note, "tlc-paxos": _tlc_note}


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
    note = [NOTES[name](r["output"]), ""] if name in NOTES else []
    return "\n".join([begin, f'<!-- skip: next "{r["skip"]}" -->', "```console", f"$ {r['command']}",
                      r["output"], "```", "", *note, said, end])


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
