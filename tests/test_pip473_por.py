"""Partial-order reduction on PIP-473 (`--por`, spec/pip473/reductions/footprints.py).

* The footprints are honest on reachable states: `audit_footprints` (every
  observed change declared; declared-independent actions commute and do not
  disable each other), and every action another one enables reads something
  the enabling action writes (the stubborn sets rely on it for disabled
  actions).
* Every pip473 safety model file keeps its verdict under --por, at its own
  bounds, with no more distinct or generated states.
* The por-*-readcommitted models are reduced, by the figures measured.
"""

from __future__ import annotations

import pytest

from txncheck.checker.api import check_model
from txncheck.checker.engines import bfs
from txncheck.checker.job import Job
from txncheck.checker.model import load_model
from txncheck.checker.reductions.locations import overlap
from txncheck.checker.reductions.por import audit_footprints
from txncheck.spec.pip473.spec import Pip473
from txncheck.spec.pip473.reductions.footprints import footprints

from .helpers import MODELS

PIP473 = MODELS / "pip473"
# These take from a few seconds (10-15 s for both runs) to over a minute: marked slow.
SLOW = {"sealed-mid-txn.toml", "zk-oneshot.toml", "zk-oneshot-point.toml"}
# The gate's heavy models (`[expect] runtime = "heavy"`) are too large to explore
# twice in CI (fixed-crash-anywhere alone took 232 CPU s with POR); the footprints
# of their bounds are audited on reachable states below (the "every mechanism",
# standard and two-subscription cases).


def _reachable(spec, cap=None):
    job = Job(spec=spec, properties={}, witnesses={}, deadlock=False, max_states=cap, keep_graph=False)
    return bfs.run(job).exploration.states


def _audit_enabling(spec, states) -> None:
    fps = spec.footprints()
    for s in states:
        before = {a for a, _ in spec.next(s)}
        for b, t in spec.next(s):
            for a, _ in spec.next(t):
                if a not in before and a != b:
                    assert any(overlap(w, r) for w in fps[b][1] for r in fps[a][0]), \
                        f"{b} enables {a} but writes nothing it reads, at {s}"


@pytest.mark.parametrize("name", ["gc-forced-delete.toml", "late-write.toml", "late-write-fixed.toml",
                                  "orphan-op-fixed.toml", "orphan-op.toml", "unknown-is-aborted.toml",
                                  "por-fixed-readcommitted.toml", "por-merged-readcommitted.toml",
                                  "coalesced-events-fixed.toml"])
def test_footprints_are_honest_on_models(name):
    spec = load_model(PIP473 / name).instantiate()
    states = _reachable(spec)
    states = states[::max(1, len(states) // 300)]  # a spread over every depth
    audit_footprints(spec, states)
    _audit_enabling(spec, states)


def test_footprints_are_honest_on_every_state_of_a_recovery_in_steps():
    """Every reachable state, not a spread: a materialized abort leaves an
    aborted record and a watermark, then the broker crashes (prune off) and
    recovers in steps while the dispatcher reads."""
    for variant in ("merged", "fixed"):
        spec = Pip473(variant, txns=1, writes="t1:0", acks="", reshape="none", decisions="abort", crashes=1,
                      failovers=0, recovery="steps", prune=False)
        states = _reachable(spec)
        assert any(x.part[0] is not None and x.part[0].loaded == 2 for x in states)
        audit_footprints(spec, states)
        _audit_enabling(spec, states)


@pytest.mark.parametrize("variant,constants", [
    ("fixed", {"recovery": "steps", "participants": "split"}),               # standard bounds (merge)
    ("fixed", {"txns": 1, "acks": "", "crashes": 0, "failovers": 0}),        # a send on a sealed parent
    ("pip-text", {"reshape": "split", "writes": "t1:0 t2:1", "failovers": 0}),
    ("merged", {"decisions": "both", "ticks": 2, "timeout": 1, "retention": 1, "crashes": 0}),
    ("pip-text", {"watches": "zk-oneshot", "decisions": "both", "failovers": 0}),
    ("merged", {"txns": 3, "writes": "t1:0 t3:2", "acks": "t2:s2:1:ind", "reshape": "none"}),
    # every mechanism (fixed-mechanisms.toml's bounds): two sends with failing op
    # writes, a plain send, trimming and pruning, both decisions, a crash
    ("fixed", {"writes": "t1:0 t1:0", "plain": "0", "acks": "t2:s1:1:cum", "reshape": "none", "decisions": "both",
               "failovers": 0, "client": "stock", "trim": True, "opfail": True, "recovery": "steps",
               "participants": "split"}),
    ("merged", {"writes": "t1:0 t1:0", "plain": "0 1", "acks": "t2:s1:1:cum", "reshape": "merge", "decisions": "both",
                "trim": True, "opfail": True}),
    # the coordinator's three steps, failovers between them (fixed F9 re-drives)
    ("fixed", {"tc": "steps", "decisions": "both", "failovers": 2}),
    ("merged", {"tc": "steps", "decisions": "both", "failovers": 2, "reshape": "none"}),
    # separate buffer and pending-ack participants (the standard bounds, commit only), and pip-text's watches
    ("fixed", {"participants": "split"}),
    ("pip-text", {"participants": "split", "reshape": "none", "decisions": "both"}),
    # the buffer's recovery in steps, with non-transactional sends and trimming between the loads
    ("merged", {"recovery": "steps", "plain": "0 0", "writes": "t1:0 t2:0", "reshape": "none", "trim": True,
                "decisions": "abort", "crashes": 2}),
    ("fixed", {"recovery": "steps", "plain": "0 0", "writes": "t1:0 t2:0", "reshape": "none", "trim": True,
               "decisions": "abort", "crashes": 2, "participants": "split"}),
    # two subscriptions on a segment, a merge giving the child both
    ("fixed", {"subs": 2, "participants": "split", "recovery": "steps", "trim": True, "decisions": "both",
               "acks": "t2:s1:2:cum t2:s1:1:cum:sub2 t1:s2:1:ind:sub2"}),
    ("merged", {"subs": 2, "participants": "split", "trim": True, "decisions": "both", "reshape": "none",
                "acks": "t2:s1:2:cum t2:s1:1:cum:sub2 t1:s2:1:ind:sub2"}),
    # a send's header read and its callback's cache put as two steps, an unload or a crash between them
    ("merged", {"check": "steps", "writes": "t1:0 t1:0", "acks": "", "reshape": "none", "decisions": "both",
                "unloads": 1, "opfail": True}),
    ("fixed", {"check": "steps", "writes": "t1:0 t1:0 t2:0", "reshape": "none", "decisions": "both", "unloads": 1}),
])
def test_footprints_are_honest_on_other_bounds(variant, constants):
    """A spread of the first 3000 states (BFS order) of bounds no model file uses."""
    spec = Pip473(variant, **constants)
    states = _reachable(spec, cap=3000)
    states = states[::max(1, len(states) // 120)]
    audit_footprints(spec, states)
    _audit_enabling(spec, states)


def _models():
    out = []
    for p in sorted(PIP473.glob("*.toml")):
        model = load_model(p)
        if model.temporal or model.expect.get("runtime") == "heavy":  # --por refuses temporal properties
            continue
        if footprints(model.instantiate()) is None:   # no footprints declared: --por explores everything
            continue
        out.append(pytest.param(p, id=p.name, marks=[pytest.mark.slow] if p.name in SLOW else []))
    return out


@pytest.mark.parametrize("path", _models())
def test_por_keeps_the_verdict(path):
    """Against the unreduced run's verdict and figures, which the gate judges
    from the model's [expect]."""
    full = load_model(path).expect
    red = check_model(path, keep_graph=False, options={"por": True}).outcome
    assert red.verdict == full["verdict"]
    assert red.distinct_states <= full["distinct"]
    assert red.states_generated <= full["generated"]
    assert red.extra["reductions"]["por"]["declared"] is True


@pytest.mark.parametrize("name,por_counts", [
    ("por-fixed-readcommitted.toml", (2977, 9803)),
    ("por-merged-readcommitted.toml", (8626, 30713)),
])
def test_por_reduces_readcommitted(name, por_counts):
    """Fewer states than the unreduced run's (3,783 / 13,224 and 9,703 / 35,757: [expect])."""
    full = load_model(PIP473 / name).expect
    red = check_model(PIP473 / name, keep_graph=False, options={"por": True}).outcome
    assert full["verdict"] == red.verdict == "ok"
    assert (red.distinct_states, red.states_generated) == por_counts
    assert por_counts[0] < full["distinct"] and por_counts[1] < full["generated"]
    assert red.extra["reductions"]["por"]["ample_states"] > 0


def test_the_text_report_names_por(capsys, tmp_path):
    from txncheck.checker.cli import main

    out = ["--por", "--quiet", "--out", str(tmp_path)]
    assert main(["check", str(PIP473 / "por-fixed-readcommitted.toml"), *out]) == 0
    assert "reductions: partial-order reduction (185 states expanded in part)" in capsys.readouterr().out.splitlines()
    # a spec without footprints: every state in full, and the report says so
    assert main(["check", str(MODELS / "classic" / "diehard.toml"), *out]) == 1
    assert "reductions: partial-order reduction (no footprints: every state in full)" in \
        capsys.readouterr().out.splitlines()
