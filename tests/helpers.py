"""Small helpers shared by the foundation tests."""

from __future__ import annotations

from txncheck.checker.engines import get_engine
from txncheck.checker.job import Job


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


def assert_verdict_and_counts(report, row):
    """row = (verdict, violated property, trace length, distinct, generated, depth);
    the model file's [expect] table must say the same."""
    verdict, prop, length, distinct, generated, depth = row
    o = report.outcome
    assert (o.verdict, o.distinct_states, o.states_generated, o.depth) == (verdict, distinct, generated, depth)
    assert report.model.expect.get("verdict") == verdict
    if verdict == "violation":
        [v] = o.violations
        assert (v.kind, v.property, v.length) == ("invariant", prop, length)
        assert (report.model.expect["property"], report.model.expect["length"]) == (prop, length)
    else:
        assert o.violations == []
        assert o.witnesses_found and all(o.witnesses_found.values())


def assert_trace_found_again(trace, violation, spec_name, length):
    """A committed corpus trace equals the shortest counterexample found now,
    state for state (by fingerprint) and action for action."""
    from txncheck.checker.encoding import fingerprint

    assert trace.meta["spec"] == spec_name and trace.meta["property"] == violation.property
    assert trace.length == violation.length == length
    assert [s["fingerprint"] for s in trace.steps] == [f"{fingerprint(st):016x}" for _, st in violation.path]
    assert [s["action"] for s in trace.steps[1:]] == [a[0] for a, _ in violation.path[1:]]
