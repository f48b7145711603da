"""The recorded figures of a findings folder: `figures.json`.

Two facts a report states that are too slow, or need a server, to recompute
on every regeneration:

- `fix`: for each fix model (by path), the verdict and the distinct states,
  states generated and depth of an exhaustive check of it;
- `zookeeper`: for each finding's model (by path), the verdict, step and
  property of its trace's replay on `reference/` over a live ZooKeeper.

Only `txncheck report --check-fix` and `txncheck report --zookeeper` write
them, each from a run they have just made; nothing here is typed in by hand.
tests/test_findings.py checks the fix figures against the gate's tests (and
re-checks the small fix models), so a recorded figure cannot go stale quietly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..itf import read_untrusted_text
from .notes import NotesError
from .output import write_text_atomic

NAME = "figures.json"
MAX_BYTES = 1024 * 1024


class Figures:
    def __init__(self, path: Path | None, data: dict[str, dict[str, Any]] | None = None):
        self.path = path
        self.data = {"fix": {}, "zookeeper": {}, **(data or {})}
        self.changed = False

    @classmethod
    def load(cls, path: str | Path | None) -> "Figures":
        if path is None:
            return cls(None)
        path = Path(path)
        if not path.exists():
            return cls(path)
        try:
            data = json.loads(read_untrusted_text(path, MAX_BYTES, "figures"))
        except ValueError as exc:
            raise NotesError(f"{path}: {exc}") from None
        if not (isinstance(data, dict) and set(data) <= {"fix", "zookeeper"}
                and all(isinstance(v, dict) for v in data.values())):
            raise NotesError(f"{path}: expected {{\"fix\": {{...}}, \"zookeeper\": {{...}}}}")
        return cls(path, data)

    def get(self, table: str, key: str) -> dict[str, Any] | None:
        v = self.data[table].get(key)
        return v if isinstance(v, dict) else None

    def record(self, table: str, key: str, value: dict[str, Any]) -> None:
        if self.data[table].get(key) != value:
            self.data[table][key] = value
            self.changed = True

    def keep_only(self, table: str, keys: set[str], under: list[str]) -> None:
        """Drop the entries of `table` below one of the folders `under` (as
        the reports show paths) that are not in `keys`: figures no report
        shows any more (a model now the same defect as another's)."""
        gone = [k for k in self.data[table] if k not in keys and any(k.startswith(u) for u in under)]
        for k in gone:
            del self.data[table][k]
        self.changed = self.changed or bool(gone)

    def save(self) -> None:
        if self.path is not None and self.changed:
            write_text_atomic(self.path, json.dumps(self.data, indent=2, sort_keys=True) + "\n")
            self.changed = False
