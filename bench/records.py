"""What the benches that keep a record share: the record's provenance (the
commit measured, Python, Z3, the machine) and the section of a document
they write from it, between two markers."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path


def provenance(root: Path) -> dict:
    import z3

    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True)
    return {"commit": out.stdout.strip() or "unknown", "python": f"Python {platform.python_version()}",
            "z3": z3.get_version_string(), "machine": f"{platform.machine()}, {len(os.sched_getaffinity(0))} cores"}


def measured_at(record: dict) -> str:
    return (f"Measured at commit {record['commit']} ({record['python']}, z3-solver {record['z3']}, "
            f"{record['machine']})")


def write_section(doc: Path, begin: str, end: str, text: str) -> None:
    """Replace the doc's text from `begin` to `end` (both kept) by `text`, which holds both."""
    old = doc.read_text()
    i, j = old.index(begin), old.index(end) + len(end)
    doc.write_text(old[:i] + text + old[j:])
