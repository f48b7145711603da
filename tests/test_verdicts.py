"""Property verdicts remembered per observed part (checker/verdicts.py).

* PIP-473's `observed_fields` is what its `observe` reads: on reachable
  states of every variant, with the clock, retention and timeouts moving,
  swapping the other fields keeps the observation, and the audit does fail
  for a declaration that leaves out a field `observe` reads.
* The remembered verdicts are the computed ones, including the witnesses,
  across generations, and each combination of observed fields is evaluated
  once while it is remembered.
* With and without the memory, bfs (in process and with two workers) finds
  the same counts, the same violation and the same trace.
* A declaration that names a field the states lack, or none, is one line.
"""

from __future__ import annotations

import pytest

from txncheck.checker.api import check_model
from txncheck.checker.engines import bfs, parallel
from txncheck.checker.job import Job
from txncheck.checker.verdicts import Verdicts, audit_observed_fields
from txncheck.spec.api import SpecError
from txncheck.spec.classic.tcommit import TCommit
from txncheck.spec.pip473.spec import Pip473

from .helpers import MODELS

TIMED = {"ticks": 2, "timeout": 1, "retention": 1, "plain": "0"}


def _states(spec, limit=6000):
    job = Job(spec=spec, properties={}, max_states=limit)
    return bfs.run(job).exploration.states


def test_pip473_observe_reads_only_the_observed_fields():
    moved = set()
    two_subs = {"subs": 2, "participants": "split", "acks": "t1:s1:1:ind t2:s2:1:cum:sub2"}
    for variant, more in (("pip-text", {}), ("merged", {}), ("fixed", {}), ("fixed", {"tc": "steps"}),
                          ("merged", two_subs), ("fixed", {"unloads": 1})):
        spec = Pip473(variant, **TIMED, **more)
        states = _states(spec)
        audit_observed_fields(spec, states)
        moved |= {f for f in type(states[0])._fields if len({getattr(s, f) for s in states}) > 1}
    unobserved = set(type(states[0])._fields) - set(Pip473.observed_fields)
    # tcp is observed (NoMissedDecision's `fanning`: the TC's owed fan-out, bound tc = steps)
    assert unobserved == {"now", "seqs", "rd", "rd2", "reshape", "crashes", "failovers", "plain", "unloads"}
    assert unobserved <= moved  # so the audit tests each one


def test_the_audit_fails_for_a_field_observe_reads():
    spec = Pip473("fixed", **TIMED)
    states = _states(spec)
    spec.observed_fields = tuple(f for f in Pip473.observed_fields if f != "client")
    with pytest.raises(AssertionError, match="observe reads a field outside observed_fields"):
        audit_observed_fields(spec, states)


def _job(spec):
    return Job(spec=spec, properties=spec.invariants, witnesses=spec.witnesses)


def test_remembered_verdicts_are_the_computed_ones():
    spec = Pip473("merged", **TIMED)
    states = _states(spec)
    job = _job(spec)
    check, wcheck = job.invariant_checker(), job.witness_checker(spec.witnesses)
    expected = [(check(o), sorted(wcheck(o))) for o in map(spec.observe, states)]
    assert any(bad for bad, _ in expected) and any(w for _, w in expected)  # both kinds occur
    combinations = len({tuple(getattr(s, f) for f in spec.observed_fields) for s in states})
    assert combinations < len(states)
    runs = {}
    for limit in (1 << 20, 64):  # one generation; many, dropped as the search moves on
        v = Verdicts(spec, check, wcheck, set(spec.witnesses), limit=limit)
        assert [(bad, sorted(w)) for bad, w in map(v, states)] == expected
        runs[limit] = v.evaluated
    assert runs[1 << 20] == combinations  # each combination evaluated once
    assert combinations < runs[64] < len(states)


def test_a_spec_without_the_declaration_is_evaluated_every_time():
    spec = TCommit(rm=3)
    states = _states(spec)
    job = _job(spec)
    v = Verdicts(spec, job.invariant_checker(), None, set())
    assert [v(s) for s in states] == [(None, ())] * len(states)
    assert v.evaluated == len(states)


@pytest.mark.parametrize("stem, options", [
    ("gc-forced-delete", {}), ("gc-forced-delete", {"workers": 2}),
    ("twin-clients-merged", {}), ("twin-clients-merged", {"symmetry": True}),
    ("twin-clients-merged", {"symmetry": True, "workers": 2}),
    ("twin-clients-fixed", {"symmetry": True, "workers": 2}),
])
def test_bfs_finds_the_same_with_and_without_the_memory(monkeypatch, tmp_path, stem, options):
    monkeypatch.setattr(parallel.coordinator, "SPLIT_AT", 2)  # fork the workers at the second level

    def run(tag):
        r = check_model(MODELS / "pip473" / f"{stem}.toml", out_dir=tmp_path / tag, keep_graph=False,
                        options=dict(options))
        o = r.outcome
        assert o.extra.get("workers", {}).get("forked", 0) == options.get("workers", 0)
        return (o.verdict, o.distinct_states, o.states_generated, o.depth,
                [(v.property, [s for _, s in v.path]) for v in o.violations],
                sorted(n for n, ok in o.witnesses_found.items() if ok))

    with_memory = run("with")
    assert with_memory[0] == ("ok" if stem == "twin-clients-fixed" else "violation")
    monkeypatch.setattr(Pip473, "observed_fields", None)
    assert run("without") == with_memory


def test_a_declaration_naming_no_field_or_none_is_one_line():
    spec = Pip473("fixed")
    spec.observed_fields = ("hdr", "nope")
    v = Verdicts(spec, lambda o: None, None, set())
    with pytest.raises(SpecError, match=r"^the spec's observed_fields names 'nope', which its states \(S\) lack$"):
        v(next(iter(spec.init_states())))
    spec.observed_fields = ()
    v = Verdicts(spec, lambda o: None, None, set())
    with pytest.raises(SpecError, match=r"^the spec's observed_fields is empty; give the fields observe reads, or None$"):
        v(next(iter(spec.init_states())))
