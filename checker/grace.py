"""How long a signalled child has had to stop, not counting time it waited for a CPU.

After Ctrl-C, txncheck gives a child process a grace period to report what it
did before it is killed (checker/supervisor.py, checker/isolation.py). On a
busy machine a child that is niced, or simply outnumbered, waits on the run
queue for most of that time: a wall-clock grace then kills it mid-report
although it was stopping as fast as it was let. So the grace is charged the
wall time since the signal less the longest time any process of the child's
tree (the child, its workers) spent runnable but not running (Linux's
/proc/PID/schedstat, second field, of each main thread): a coordinator asleep
while its starved workers report is waiting for a CPU too. Time they spend
running or asleep counts: a child that swallows the interrupt and sleeps is
still ended on time. `CAP` bounds the wait in wall time whatever the load.
Without schedstat (not Linux) the grace is wall time. Imports nothing of txncheck's.
"""

from __future__ import annotations

import os
import time

CAP = 30.0  # wall seconds after which a child is ended however long it waited for a CPU


def _waited(pid: int) -> float:
    """Seconds the main thread of `pid` has spent waiting on a run queue (0 if unknown)."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


def descendants(pid: int) -> list[int]:
    """pid and its descendants, as /proc/PID/task/TID/children tells (every thread's children)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            pass
    return out


class Grace:
    """`seconds` of a child's own time from now (see the module doc)."""

    def __init__(self, pid: int, seconds: float):
        self.pid, self.seconds = pid, seconds
        self.t0 = time.monotonic()
        self.w0 = {p: _waited(p) for p in descendants(pid)}    # a process born later waited from 0

    def used(self) -> float:
        wall = time.monotonic() - self.t0
        if wall >= CAP:
            return wall
        waited = max((_waited(p) - self.w0.get(p, 0.0) for p in descendants(self.pid)), default=0.0)
        return max(0.0, wall - waited)

    def left(self) -> float:
        """Seconds of grace left (0 when it is over); a wait of this long is safe to start."""
        return max(0.0, self.seconds - self.used())
