"""PaxosCommit's symbolic relation (examples/paxos_commit/paxos_commit_relation.py,
found beside the spec file it restates): agreement with the spec, and the
inductive invariant of PaxosCommit_proof.tla proved at TLC's bounds."""

from __future__ import annotations

import pytest
import z3

from txncheck.checker.symbolic.agreement import disagreements, reachable, walk
from txncheck.checker.symbolic.load import relation_class, relation_for
from txncheck.checker.symbolic.run import prove_model
from txncheck.spec.registry import resolve

from .helpers import ROOT

EXAMPLE = ROOT / "examples" / "paxos_commit"
PAXOS = resolve(str(EXAMPLE / "paxos_commit.py") + ":PaxosCommit").cls
ACCS, MAJ = ("a1", "a2", "a3"), (("a1", "a2"), ("a1", "a3"), ("a2", "a3"))


def test_every_state_with_one_ballot_agrees():
    spec = PAXOS(rms=("r1", "r2"), acceptors=ACCS, majorities=MAJ, ballots=1)
    checked, bad = disagreements(relation_for(spec), reachable(spec), stop_after=1)
    assert bad == [] and checked == 545


def test_a_changed_guard_is_caught():
    """Phase1b with mbal <= b where PaxosCommit.tla has mbal < b: the
    relation lets an acceptor answer a phase 1a message of the ballot it
    has joined already, which the spec does not."""
    class Rejoins(relation_class(PAXOS)):
        def _phase1b(self, f, a, r, b):
            _, changes = super()._phase1b(f, a, r, b)
            return z3.And(f.msgs(self.msg_names["phase1a", r, b]), f.mbal(r, a) <= b), changes

    spec = PAXOS(rms=("r1",), acceptors=ACCS, majorities=MAJ, ballots=2)
    _, (bad, *_) = disagreements(Rejoins(spec), reachable(spec), stop_after=1)
    assert (bad.what, bad.action[0]) == ("z3-only", "Phase1b")
    assert bad.detail.startswith("Z3 allows a successor the spec does not yield")


@pytest.mark.parametrize("bounds, states", [
    (dict(rms=("r1",), acceptors=ACCS, majorities=MAJ, ballots=2), 1461),   # ballot 1's actions: 0.8 CPU s
    pytest.param(dict(rms=("r1", "r2"), acceptors=("a1",), majorities=(("a1",),), ballots=2), 1425,
                 marks=pytest.mark.slow)])
def test_every_state_of_the_small_configurations_agrees(bounds, states):
    spec = PAXOS(**bounds)
    checked, bad = disagreements(relation_for(spec), reachable(spec), stop_after=1)
    assert bad == [] and checked == states


@pytest.mark.slow
def test_25000_states_of_random_walks_at_tlcs_bounds_agree():
    spec = PAXOS(rms=("r1", "r2"), acceptors=ACCS, majorities=MAJ, ballots=2)
    checked, bad = disagreements(relation_for(spec), walk(spec, 10**9, seed=473, depth=60), stop_after=1,
                                 most=25_000)
    assert bad == [] and checked == 25_000


def test_pctypeok_is_proved_at_tlcs_bounds_with_the_tlaps_invariant():
    r = prove_model(EXAMPLE / "prove-typeok.toml")
    assert r.verdict == "proved" and r.lemmas == ["AccInv", "MsgInv1b"]


def test_without_accinv_a_phase_1b_message_reports_no_value():
    """AccInv (an acceptor's val is "none" exactly when its bal is -1) is
    needed: without it, an acceptor that voted with no value answers a
    phase 1a message with a phase 1b message reporting a ballot and "none"."""
    r = prove_model(EXAMPLE / "prove-typeok.toml", without=["AccInv"])
    assert r.verdict == "not inductive"
    assert (r.proof.cti.clause, r.proof.cti.action[0]) == ("MsgInv1b", "Phase1b")


def test_msginv1b_holds_here_by_construction():
    """MsgInv1b is what TLAPS needs to type Phase2a's value: here the
    relation's phase 2a messages range over TLA+'s Message, prepared or
    aborted, so PCTypeOK is inductive with AccInv alone."""
    assert prove_model(EXAMPLE / "prove-typeok.toml", without=["MsgInv1b"]).verdict == "proved"


def test_tcconsistent_alone_is_not_inductive():
    """The TLAPS proof is of PCTypeOK only: TCConsistent (PaxosCommit
    implements TCommit) needs lemmas about the acceptors' votes that neither
    it nor this relation states, so `prove` answers with a CTI."""
    r = prove_model(EXAMPLE / "paxos_commit.toml")
    assert r.verdict == "not inductive" and r.proof.cti.clause == "TCConsistent"
