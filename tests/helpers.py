"""What the tests share: the repository's paths, and small helpers of the
foundation tests. (conftest.py holds pytest's hooks and fixtures only: a test
imports from here, never from a conftest.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from txncheck.checker.engines import get_engine
from txncheck.checker.job import Job

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"
COLLECTED = pytest.StashKey[dict]()   # tests/durations.py's `collection` of this session, for tests/test_durations.py


def explore(spec, *, deadlock=False, props=None, **kw):
    """Run bfs (in process, or parallel with options={"workers": N}) on a spec
    instance with its own (or the given) invariants."""
    job = Job(spec=spec, properties=spec.invariants if props is None else props, deadlock=deadlock, **kw)
    return get_engine("bfs")(job)


def report_cache(out_dir, folder):
    """stem -> Report for the model `folder/stem.toml`, each checked once (traces to out_dir)."""
    from txncheck.checker.api import check_model

    cache = {}

    def get(stem):
        if stem not in cache:
            cache[stem] = check_model(folder / f"{stem}.toml", out_dir=out_dir)
        return cache[stem]

    return get


def expected_violations(folder, skip=("-liveness",)) -> dict[str, tuple[str, int]]:
    """stem -> (property, length) of each model in `folder` whose [expect] is a
    violation (the gate judges the run against it; the corpus tests compare traces)."""
    from txncheck.checker.model import load_model

    out = {}
    for path in sorted(folder.glob("*.toml")):
        e = load_model(path).expect
        if e.get("verdict") == "violation" and not path.stem.endswith(skip):
            out[path.stem] = (e["property"], e["length"])
    return out


def assert_trace_found_again(trace, violation, spec_name, length):
    """A committed corpus trace equals the shortest counterexample found now,
    state for state (by fingerprint) and action for action."""
    from txncheck.checker.encoding import fingerprint

    assert trace.meta["spec"] == spec_name and trace.meta["property"] == violation.property
    assert trace.length == violation.length == length
    assert [s["fingerprint"] for s in trace.steps] == [f"{fingerprint(st):016x}" for _, st in violation.path]
    assert [s["action"] for s in trace.steps[1:]] == [a[0] for a, _ in violation.path[1:]]
