"""Small helpers shared by the foundation tests."""

from __future__ import annotations

from txncheck.checker.engines import bfs
from txncheck.checker.job import Job


def explore(spec, *, deadlock=False, props=None, **kw):
    """Run bfs on a spec instance with its own (or the given) invariants."""
    job = Job(spec=spec, properties=spec.invariants if props is None else props, deadlock=deadlock, **kw)
    return bfs.run(job)
