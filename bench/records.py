"""What the benches that keep a record share: the record's provenance (the
commit measured, Python, Z3, the machine) and the section of a document
they write from it, between two markers."""

from __future__ import annotations

import json
import os
import platform
import subprocess
from pathlib import Path
from typing import Callable


CODE = ("checker", "spec", "package", "reference", "counterexamples", "examples", "models", "bench/*.py")


def provenance(root: Path) -> dict:
    import z3

    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True)
    commit = out.stdout.strip() or "unknown"
    # code not yet committed is not the commit's: "abc1234+" says the figures are of changes on top of it
    dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", *CODE], cwd=root, capture_output=True)
    commit += "+" if dirty.returncode == 1 else ""
    return {"commit": commit, "python": f"Python {platform.python_version()}",
            "z3": z3.get_version_string(), "machine": f"{platform.machine()}, {len(os.sched_getaffinity(0))} cores"}


def measured_at(record: dict) -> str:
    return (f"Measured at commit {record['commit']} ({record['python']}, z3-solver {record['z3']}, "
            f"{record['machine']})")


def write_section(doc: Path, begin: str, end: str, text: str) -> None:
    """Replace the doc's text from `begin` to `end` (both kept) by `text`, which holds both."""
    old = doc.read_text()
    i, j = old.index(begin), old.index(end) + len(end)
    doc.write_text(old[:i] + text + old[j:])


def record_and_write(root: Path, record_path: Path, doc: Path, begin: str, end: str,
                     render: Callable[[dict], str], measure: Callable[[dict], dict] | None) -> None:
    """`measure(old record)` gives the new record, kept with its provenance
    (no `measure`: the record as it is); the doc's section is then rendered
    from the record."""
    record = json.loads(record_path.read_text()) if record_path.exists() else {}
    if measure is not None:
        record = measure(record)
        record.update(provenance(root))
        record_path.write_text(json.dumps(record, indent=1) + "\n")
    write_section(doc, begin, end, render(record))
