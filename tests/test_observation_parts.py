"""A spec's observation in parts (`Spec.observation_parts`) is a claim: each
part reads only the fields it names. The fingerprint search remembers a
part's values, and each property's verdict, under those fields' numbers, so
a part that read another field would give a stale verdict. Audited here on
reachable states of every variant, as `audit_observed_fields` audits
`observed_fields`; and the verdicts by parts equal the verdicts of the whole
observation."""

from __future__ import annotations

import pytest

from txncheck.checker.engines.parallel.records import Fields
from txncheck.checker.job import Job
from txncheck.checker.verdicts import PartVerdicts, Verdicts, row_positions
from txncheck.spec.pip473.spec import Pip473

CASES = [
    ("fixed", dict(txns=2, writes="t1:0 t1:3", acks="t1:s1:1:ind t2:s2:1:cum", reshape="merge", decisions="both",
                   crashes=1, failovers=1, recovery="steps")),
    ("merged", dict(txns=2, writes="t1:0", plain="0", acks="t2:s1:1:cum", reshape="none", decisions="both",
                    crashes=1, failovers=1, trim=True, opfail=True, tc="steps", recovery="steps")),
    ("pip-text", dict(txns=2, writes="t1:0", acks="t1:s1:1:ind", reshape="split", crashes=1)),
    ("fixed", dict(txns=1, writes="t1:0", acks="t1:s2:1:cum:sub2", reshape="none", subs=2, trim=True,
                   replies="owed")),
    # the pending-ack stores' own replays (Part.aready, aready2) beside the buffer's recovery in steps, the
    # F6 gate on the read limit, and a topic unload with its closed instance's sends (bound unloads)
    ("fixed", dict(txns=1, writes="t1:0", plain="0", acks="t1:s1:1:cum:sub2", reshape="none", participants="split",
                   subs=2, crashes=1, failovers=0, unloads=1, recovery="steps", decisions="both", client="stock")),
]


def _reachable(spec, n: int) -> list:
    seen = list(dict.fromkeys(spec.init_states()))
    index = set(seen)
    i = 0
    while i < len(seen) and len(seen) < n:
        for _, t in spec.next(seen[i]):
            if t not in index:
                index.add(t)
                seen.append(t)
        i += 1
    return seen


@pytest.mark.parametrize("variant,bounds", CASES, ids=[f"{v}-{k}" for k, (v, _) in enumerate(CASES)])
def test_each_part_reads_only_its_fields(variant, bounds):
    spec = Pip473(variant, **bounds)
    states = _reachable(spec, 1500)
    parts = spec.observation_parts()
    names = type(states[0])._fields
    merged: dict = {}
    for _, part in parts:
        keys = set(part(states[0]))
        assert not keys & set(merged), "two parts give one symbol"
        merged.update(dict.fromkeys(keys))
    assert set(merged) == set(spec.schema.symbols)
    h = len(states) // 2
    for s, r in zip(states, states[h:] + states[:h]):  # BFS neighbours are alike: mix with a far one
        assert {k: v for _, p in parts for k, v in p(s).items()} == spec.observe(s)
        for fields, part in parts:
            mixed = s._replace(**{f: getattr(r, f) for f in names if f not in fields})
            assert part(mixed) == part(s), f"a part of {fields} reads another field"


@pytest.mark.parametrize("variant,bounds", CASES[:2], ids=["fixed", "merged"])
def test_verdicts_by_parts_are_the_verdicts_of_the_observation(variant, bounds):
    spec = Pip473(variant, **bounds)
    states = _reachable(spec, 4000)
    job = Job(spec=spec, properties=spec.invariants, witnesses=spec.witnesses)
    whole = Verdicts(spec, job.invariant_checker(), job.witness_checker(set(spec.witnesses)), set(spec.witnesses))
    parts = PartVerdicts(spec, spec.invariants, spec.witnesses, set(spec.witnesses), row_positions(states[0]))
    fields = Fields()
    for t in states:
        bad, holds = parts(fields.row(t), t)
        want_bad, want_holds = whole(t)
        assert (bad, sorted(holds)) == (want_bad, sorted(want_holds))
    assert parts.evaluated < len(states) * len(spec.invariants)  # remembered verdicts were reused
