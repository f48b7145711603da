"""CPU seconds of the processes of a Spark run, read from /proc, for the
benches: wall seconds on a shared machine say more about the other load
than about the engine, CPU seconds much less.

`SparkCpu.sample()` returns (driver, spark): the CPU seconds (user + system)
so far of this process (the driver: Python, its py4j threads), and of its
Spark JVM with every process under it (on local[N]: the executor's threads,
the pyspark daemon and the Python workers it forks), their reaped children
included (`cutime`, `cstime`), so a Python worker that has exited still
counts. On a cluster the executors run under their workers, not under this
JVM: `spark` then covers the driver's JVM only (the cluster bench reads the
executors' own process trees).
"""

from __future__ import annotations

import os
import resource
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds of pid and its reaped children)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    f = text[text.rfind(")") + 2:].split()   # after "pid (comm) "
    return int(f[1]), sum(int(x) for x in f[11:15]) / TICK   # ppid; utime stime cutime cstime


def tree_cpu(root: int) -> float:
    """CPU seconds of process `root` and of every live process under it."""
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = _stat(int(name))
            if st is not None:
                parent[int(name)], cpu[int(name)] = st
    total = 0.0
    for pid, c in cpu.items():
        p = pid
        while p and p != root:
            p = parent.get(p, 0)
        if p == root:
            total += c
    return total


def self_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def jvm_pid() -> int | None:
    """The pid of this process's Spark JVM, once a session has started it."""
    try:
        from pyspark import SparkContext
    except ImportError:
        return None
    gw = SparkContext._gateway
    proc = getattr(gw, "proc", None) if gw is not None else None
    return proc.pid if proc is not None else None


class SparkCpu:
    def sample(self) -> tuple[float, float]:
        pid = jvm_pid()
        return self_cpu(), (tree_cpu(pid) if pid else 0.0)
