"""A Spark run's counterexample: the parent pointers of the checkpoint's
levels, read back on the driver with pyarrow, then replayed through
`spec.next` from the initial state, so the trace carries the spec's own
state objects, as `bfs` writes them."""

from __future__ import annotations

from typing import Callable, TYPE_CHECKING

from ...encoding import encode
from ...errors import EngineError
from ...encoding import fingerprint
from . import level as spark_level
from .codec import signed

if TYPE_CHECKING:
    from ....spec.api import Action, Spec, State


def ArrowError():
    import pyarrow

    return pyarrow.ArrowException


def rebuild(spec: Spec, root: str, k: int, fp: int, partitions: int,
            damaged: Callable[[int, Exception], Exception]) -> list:
    """The shortest path to state `fp` of level k: parent pointers back to
    level 1 (one part file a level), then a replay through `spec.next`.
    `damaged(level, exc)` makes the error for an unreadable level."""
    steps = []
    for j in range(k, 1, -1):
        try:
            row = spark_level.parent_of(root, j, fp, partitions)
        except (ValueError, OSError, ArrowError()) as exc:
            raise damaged(j, exc) from None
        if row is None or row[0] is None or row[1] is None:
            raise EngineError(f"{root}: checkpoint level {j} lacks a parent pointer")
        steps.append((bytes(row[1]), fp))
        fp = row[0]
    steps.reverse()
    cur = next((s for s in spec.init_states() if signed(fingerprint(s)) == fp), None)
    if cur is None:
        raise EngineError(f"{root}: the trace does not start in an initial state of this model")
    path: list[tuple[Action | None, State]] = [(None, cur)]
    for act, fp in steps:
        for a, t in spec.next(cur):
            if encode(a) == act and signed(fingerprint(t)) == fp:
                path.append((a, t))
                cur = t
                break
        else:
            raise EngineError(f"{root}: a parent pointer names no transition of this model")
    return path
