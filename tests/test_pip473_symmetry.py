"""Symmetry reduction on PIP-473 (`--symmetry`, spec/pip473/reductions/symmetry.py).

* Txns are interchangeable only when their clients run the same plan; the
  standard models give every txn its own plan, and --symmetry says so in one
  line.
* On the twin-clients models (two clients, one plan) the reduction keeps the
  verdict and the witnesses, stores one state per orbit (the figures are
  measured), and a counterexample found under --symmetry is a concrete trace
  that replays on the reference implementation.
* `permute` is an automorphism on reachable states (successors and every
  property commute with it) and the spec's own signatures do not change
  under renaming.
* A model file can switch the reduction on (`symmetry = true`).
"""

from __future__ import annotations

import json

import pytest

from txncheck.checker.api import check_model
from txncheck.checker.cli import main
from txncheck.checker.engines import bfs
from txncheck.checker.job import Job
from txncheck.checker.model import load_model
from txncheck.checker.reductions.symmetry import audit_permute
from txncheck.counterexamples.replay import replay
from txncheck.spec.pip473.spec import Pip473

from .helpers import MODELS

PIP473 = MODELS / "pip473"
SWAP = {"Txn": {"t1": "t2", "t2": "t1"}}


def _cli(capsys, *args):
    code = main(["check", *map(str, args), "--quiet", "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


def test_txns_are_grouped_by_plan():
    std = Pip473("fixed")
    assert std.symmetry_classes("Txn") == (("t1",), ("t2",))
    m = Pip473("fixed", txns=3, writes="t1:0 t3:0", acks="t2:s2:1:cum")
    assert m.symmetry_classes("Txn") == (("t1", "t3"), ("t2",))
    # newTxn: a txn of a later class waits for every txn of the earlier ones;
    # within a class either client may start first
    [s0] = m.init_states()
    assert sorted(a[1][0][1] for a, _ in m.next(s0) if a[0] == "newTxn") == ["t1", "t3"]


def test_standard_models_refuse_symmetry_in_one_line(capsys, tmp_path):
    code, rep, err = _cli(capsys, PIP473 / "fixed.toml", "--symmetry", "--out", tmp_path)
    assert code == 2 and rep is None
    assert err.strip().splitlines() == [
        "txncheck: error: --symmetry: no two elements of Txn are interchangeable in "
        "pip473[fixed](txns=2, writes=t1:0, acks=t1:s1:1:ind t2:s2:1:cum, plain=, reshape=merge, decisions=both, "
        "client=permissive, crashes=1, failovers=1, unloads=0, apply=atomic, check=atomic, sync=atomic, "
        "track=atomic, producers=ungated, ticks=0, timeout=0, retention=0, trim=False, "
        "opfail=False, tc=atomic, recovery=steps, participants=split, subs=1, prune=True, watches=point); "
        "check it without --symmetry"]


def test_twin_clients_fixed_is_halved_with_the_same_verdict():
    """The same orbits in every visited-set mode (each has its own shortcut
    for successors that are stored representatives already), and POR on top
    keeps the verdict with no more states."""
    m = load_model(PIP473 / "twin-clients-fixed.toml")
    full = m.expect  # the unreduced run, which the gate judges: ok, 161,767 distinct (the stock client), every witness reached
    every_witness = {w: True for w in m.witnesses}
    for mode in ({}, {"fingerprints": True}, {"compact": True}):
        red = check_model(PIP473 / "twin-clients-fixed.toml", keep_graph=False, options={"symmetry": True, **mode})
        r = red.outcome
        assert (r.verdict, r.distinct_states, r.states_generated, r.depth) == ("ok", 81131, 356724, 28), mode
        assert full["verdict"] == "ok" and 2 * r.distinct_states > full["distinct"] > r.distinct_states
        assert r.witnesses_found == every_witness
        assert r.extra["reductions"]["symmetry"]["inexact_states"] == 0
    both = check_model(PIP473 / "twin-clients-fixed.toml", keep_graph=False,
                       options={"symmetry": True, "por": True}).outcome
    assert both.verdict == "ok" and both.distinct_states <= 81131 and both.witnesses_found == every_witness


def test_twin_clients_merged_trace_is_concrete_and_replays(tmp_path):
    full = check_model(PIP473 / "twin-clients-merged.toml", keep_graph=False, out_dir=tmp_path / "full")
    red = check_model(PIP473 / "twin-clients-merged.toml", keep_graph=False, out_dir=tmp_path / "sym",
                      options={"symmetry": True})
    assert (full.outcome.distinct_states, red.outcome.distinct_states) == (124, 69)
    [v] = red.outcome.violations
    [u] = full.outcome.violations
    assert (v.property, v.length) == (u.property, u.length) == ("NoMissedDecision", 6)
    spec = red.spec
    for (_, s), (a, t) in zip(v.path, v.path[1:]):   # a real path of the unreduced spec
        assert (a, t) in set(spec.next(s))
    res = replay(v.trace_file)
    assert (res.verdict, res.property, res.step) == ("reproduced", "NoMissedDecision", 5)


@pytest.mark.parametrize("name", ["twin-clients-fixed.toml", "twin-clients-merged.toml"])
def test_permute_is_an_automorphism_and_signatures_are_invariant(name):
    m = load_model(PIP473 / name)
    spec = m.instantiate()
    props = {**m.selected_properties(spec), **{w: spec.witnesses[w] for w in m.witnesses}}
    job = Job(spec=spec, properties={}, witnesses={}, deadlock=False, keep_graph=False)
    states = bfs.run(job).exploration.states
    states = states[::max(1, len(states) // 1500)]
    audit_permute(spec, states, [SWAP], props)
    for s in states:
        sig, swapped = spec.symmetry_signatures(s, "Txn"), spec.symmetry_signatures(spec.permute(s, SWAP), "Txn")
        assert swapped == {"t1": sig["t2"], "t2": sig["t1"]}
        if sig["t1"] == sig["t2"]:   # equal signatures: the swap changes nothing
            assert spec.permute(s, SWAP) == s


def test_a_renaming_remembers_a_bounded_number_of_values(monkeypatch):
    """permute remembers the renamed set-valued fields, ledgers and
    participants per renaming; with room for 3 values per field (so it
    forgets all the time) it renames as with the default room."""
    from txncheck.spec.pip473.reductions import symmetry

    m = load_model(PIP473 / "twin-clients-fixed.toml")
    job = Job(spec=m.instantiate(), properties={}, witnesses={}, deadlock=False, keep_graph=False)
    states = bfs.run(job).exploration.states[::20]
    roomy = m.instantiate()
    expected = [roomy.permute(s, SWAP) for s in states]
    monkeypatch.setattr(symmetry, "MEMO", 3)
    tight = m.instantiate()
    assert [tight.permute(s, SWAP) for s in states] == expected
    assert [tight.permute(t, SWAP) for t in expected] == states   # a swap is its own inverse
    [renaming] = tight._renamings.values()
    assert all(len(memo) <= 3 for memo, _ in renaming.memos.values())
    assert max(len(memo) for memo, _ in roomy._renamings[(1, 0)].memos.values()) > 3


def test_a_model_file_switches_the_reduction_on(tmp_path, capsys):
    text = (PIP473 / "twin-clients-merged.toml").read_text()
    on = tmp_path / "on.toml"
    on.write_text("symmetry = true\n" + text)
    code, rep, _ = _cli(capsys, on, "--out", tmp_path)
    assert code == 1 and rep["distinct_states"] == 69 and "symmetry" in rep["reductions"]
    code, rep, _ = _cli(capsys, on, "--out", tmp_path, "--no-symmetry")   # the command line wins
    assert code == 1 and rep["distinct_states"] == 124 and "symmetry" not in (rep.get("reductions") or {})
    main(["check", str(on), "--quiet", "--out", str(tmp_path), "--fingerprints"])   # the text report says so
    lines = capsys.readouterr().out.splitlines()
    # 69 distinct x (112 - 69) generated / 2^64
    assert lines[2] == "reductions: symmetry over Txn; 64-bit fingerprints (collision probability 1.6e-16)"
    main(["check", str(on), "--quiet", "--out", str(tmp_path), "--no-symmetry"])
    assert not any(x.startswith("reductions:") for x in capsys.readouterr().out.splitlines())
    bad = tmp_path / "bad.toml"
    bad.write_text('symmetry = "yes"\n' + text)
    code, rep, err = _cli(capsys, bad, "--out", tmp_path)
    assert code == 2 and rep is None
    assert err.strip().splitlines() == [f"txncheck: error: {bad}: 'symmetry' must be true or false"]


def test_the_larger_bench_model_is_symmetric_in_t2_and_t3():
    """bench/models/pip473-fixed-larger.toml (a third txn; too big for a
    test run): its classes, its reductions, and permute is an automorphism
    on the first few thousand reachable states."""
    m = load_model(MODELS.parent / "bench" / "models" / "pip473-fixed-larger.toml")
    spec = m.instantiate()
    assert spec.symmetry_classes("Txn") == (("t1",), ("t2", "t3"))
    assert m.reductions() == {"symmetry": True, "fingerprints": True}
    job = Job(spec=spec, properties={}, witnesses={}, deadlock=False, keep_graph=False, max_states=3000)
    states = bfs.run(job).exploration.states[::3]
    props = {**m.selected_properties(spec), **{w: spec.witnesses[w] for w in m.witnesses}}
    audit_permute(spec, states, [{"Txn": {"t1": "t1", "t2": "t3", "t3": "t2"}}], props)


@pytest.mark.parametrize("variant", ["merged", "pip-text"])
def test_permute_is_an_automorphism_with_split_participants(variant):
    """participants = split: the pending-ack store's cache and events are renamed too."""
    spec = Pip473(variant, participants="split", writes="t1:0 t2:0", acks="t1:s1:1:ind t2:s1:1:ind",
                  reshape="none", decisions="both", crashes=1, failovers=0)
    assert spec.symmetry_classes("Txn") == (("t1", "t2"),)
    job = Job(spec=spec, properties={}, witnesses={}, deadlock=False, keep_graph=False, max_states=20000)
    states = bfs.run(job).exploration.states
    assert any(s.part[0] is not None and s.part[0].acache and (s.part[0].aevents or variant == "merged")
               for s in states)
    audit_permute(spec, states[::max(1, len(states) // 1500)], [SWAP], {})


@pytest.mark.parametrize("variant", ["merged", "pip-text"])
def test_permute_is_an_automorphism_with_two_subscriptions(variant):
    """subs = 2: the second pending-ack store's cache, events and acks, and
    the ack ops and ghosts of its subscription, are renamed too."""
    spec = Pip473(variant, participants="split", subs=2, writes="t1:0 t2:0",
                  acks="t1:s1:1:ind:sub2 t2:s1:1:ind:sub2", reshape="none", decisions="both", crashes=1,
                  failovers=0)
    assert spec.symmetry_classes("Txn") == (("t1", "t2"),)
    job = Job(spec=spec, properties={}, witnesses={}, deadlock=False, keep_graph=False, max_states=20000)
    states = bfs.run(job).exploration.states
    assert any(s.part[0] is not None and s.part[0].acache2 and (s.part[0].aevents2 or variant == "merged")
               for s in states)
    assert any(s.part[0] is not None and s.part[0].packs2 for s in states) == (variant == "merged")
    assert any(o.sub == 1 for s in states for o in s.ops)
    props = {n: spec.invariants[n] for n in ("NoLostCommittedAck", "NoAbortedAck", "AcksFixedAtDecision")}
    audit_permute(spec, states[::max(1, len(states) // 1500)], [SWAP], props)
