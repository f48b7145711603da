"""PaxosCommit (examples/paxos_commit/, a spec loaded by path) proved from
its own code: PCTypeOK at TLC's bounds with the invariant of
PaxosCommit_proof.tla, its lemmas written in the spec's terms (AccInv over
the properties' schema, MsgInv1b a predicate of the state), and the
counterexample to induction each lemma's absence gives. (Agreement of the
derived relation with the spec: tests/test_symbolic_derive.py.)"""

from __future__ import annotations

from txncheck.checker.cli import main
from txncheck.checker.symbolic.run import prove_model

from .helpers import ROOT

EXAMPLE = ROOT / "examples" / "paxos_commit"


def test_pctypeok_is_proved_at_tlcs_bounds_with_the_tlaps_invariant():
    r = prove_model(EXAMPLE / "prove-typeok.toml")
    assert r.verdict == "proved" and r.lemmas == ["AccInv", "MsgInv1b"]
    assert r.system.relation.derived


def test_without_accinv_a_phase_1b_message_reports_no_value(capsys, tmp_path):
    """AccInv (an acceptor's val is "none" exactly when its bal is -1) is
    needed by MsgInv1b: without it, an acceptor that voted with no value
    answers a phase 1a message with a phase 1b message reporting a ballot
    and "none". The CTI is printed and written in the spec's fields."""
    rc = main(["prove", str(EXAMPLE / "prove-typeok.toml"), "--without", "AccInv", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 3 and "inductive step: MsgInv1b is not preserved" in out
    assert "  action Phase1b(acc=" in out and "    msgs + {<<phase1b, " in out
    assert ", none, a" in out.split("state 2 (what changed):")[1]
    rc = main(["show", str(tmp_path / "prove-typeok.cti.itf.json")])
    shown = capsys.readouterr().out
    assert rc == 0 and "violates MsgInv1b (counterexample to induction) in 2 states" in shown
    assert "aState = " in shown and "msgs = " in shown


def test_pctypeok_is_inductive_alone_with_the_shapes_types():
    """The TLAPS proof needs AccInv and MsgInv1b to type the values a
    phase 2a message carries: TLA+'s Message admits any. The derived
    relation's cells hold only the messages the spec's code can send (its
    shape, widened to every successor; its claims are the Types clause,
    proved with the rest), so PCTypeOK needs neither here."""
    r = prove_model(EXAMPLE / "prove-typeok.toml", without=["AccInv", "MsgInv1b"])
    assert r.verdict == "proved" and r.proof.clauses == ["PCTypeOK", "DeclaredBounds"]


def test_tcconsistent_alone_is_not_inductive():
    """The TLAPS proof is of PCTypeOK only: TCConsistent (PaxosCommit
    implements TCommit) needs lemmas about the acceptors' votes that nobody
    has written, so `prove` answers with a CTI."""
    r = prove_model(EXAMPLE / "paxos_commit.toml")
    assert r.verdict == "not inductive" and r.proof.cti.clause == "TCConsistent"
