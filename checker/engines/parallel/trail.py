"""The parent pointers of a fingerprint search, on disk: for each level and
worker, a file of (fingerprint, parent's fingerprint, action id) records,
one per state that worker keeps. A counterexample is rebuilt from them by
walking back from the last state, then re-executing the spec forward from
an initial state, at each step taking the successor with the recorded
action and fingerprint (TLC keeps its trace the same way)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

from .disk import write_file

if TYPE_CHECKING:
    from ....spec.api import Spec

RECORD = np.dtype([("fp", "<u8"), ("pfp", "<u8"), ("aid", "<u4")])
SCAN = 1 << 22  # records read at a time when searching a file


class TrailError(RuntimeError):
    pass


class Trail:
    def __init__(self, folder: str) -> None:
        self.folder = folder

    def path(self, level: int, worker: int) -> str:
        return os.path.join(self.folder, f"trail-{level:04d}-{worker:03d}.bin")

    def write(self, level: int, worker: int, fps, pfps, aids) -> None:
        """Append records (arrays of equal length) to a level's file."""
        rec = np.empty(len(fps), dtype=RECORD)
        rec["fp"], rec["pfp"], rec["aid"] = fps, pfps, aids
        write_file(self.path(level, worker), [rec.tobytes()], "ab")

    def find(self, level: int, fp: int) -> tuple[int, int, int] | None:
        """(parent's fingerprint, worker, action id) of state `fp` of `level`."""
        want = np.uint64(fp)
        for name in sorted(os.listdir(self.folder)):
            if not name.startswith(f"trail-{level:04d}-"):
                continue
            worker = int(name[11:14])
            path = os.path.join(self.folder, name)
            size = os.path.getsize(path) // RECORD.itemsize
            if not size:
                continue
            rec = np.memmap(path, dtype=RECORD, mode="r", shape=(size,))
            for lo in range(0, size, SCAN):
                part = rec[lo:lo + SCAN]
                hit = np.flatnonzero(part["fp"] == want)
                if hit.size:
                    r = part[hit[0]]
                    return int(r["pfp"]), worker, int(r["aid"])
        return None

    def chain(self, level: int, fp: int, action) -> list[tuple[int, object]]:
        """[(fingerprint, action that reached it)] from an initial state to
        state `fp` of `level` (levels count from 1), `action(worker, aid)`
        naming the recorded action ids."""
        out = []
        for k in range(level, 0, -1):
            got = self.find(k, fp)
            if got is None:
                raise TrailError(f"the trace cannot be rebuilt: state {fp:016x} of level {k} is not on disk")
            pfp, worker, aid = got
            out.append((fp, action(worker, aid) if k > 1 else None))
            fp = pfp
        out.reverse()
        return out


def rebuild(spec: Spec, fingerprint, steps: list[tuple[int, object]]):
    """The path [(action, state)] that `steps` (from `Trail.chain`) names,
    by re-executing `spec`; a state that cannot be found is a fingerprint
    collision (or a spec whose `next` is not deterministic)."""
    succ = getattr(spec, "next_all", spec.next)
    fp0 = steps[0][0]
    cur = next((s for s in spec.init_states() if fingerprint(s) == fp0), None)
    out: list[tuple[object, object]] = [(None, cur)]   # (action, state)
    for fp, want in steps[1:]:
        if cur is None:
            break
        cur = next((t for a, t in succ(cur) if a == want and fingerprint(t) == fp), None)
        out.append((want, cur))
    if cur is None:
        raise TrailError("the trace cannot be rebuilt by re-executing the spec (a fingerprint collision, "
                         "or a next() that does not always yield the same successors)")
    return out
