"""`txncheck prove` on the classic specs: the inductive invariants of the
TLAPS proofs in tlaplus/Examples proved at TLC's bounds, each clause of
TwoPhase's shown necessary by the CTI its absence gives, bounded checking
against bfs, and the command's exit codes."""

from __future__ import annotations

import json

import pytest
import z3

from txncheck.checker.cli import main
from txncheck.checker.symbolic.agreement import reachable
from txncheck.checker.symbolic.induction import prove
from txncheck.checker.symbolic.run import prove_model
from txncheck.spec.classic.tcommit import TCommit
from txncheck.spec.classic.twophase import TPState

from .helpers import MODELS
from .helpers import explore

TCOMMIT = MODELS / "classic" / "tcommit-rm3.toml"
TWOPHASE = MODELS / "classic" / "twophase-rm3.toml"
TWOPHASE6 = MODELS / "classic" / "twophase-rm6.toml"
DIEHARD = MODELS / "classic" / "diehard.toml"
TWOPHASE_LEMMAS = ["OneDecisionSent", "TMStateMatchesSent", "TMPreparedWasSent", "PreparedLeftWorking",
                   "CommittedAfterCommitSent", "CommitAfterAllPrepared", "AbortedWhy"]


def run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize("model, lemmas", [(TCOMMIT, []), (TWOPHASE, TWOPHASE_LEMMAS), (TWOPHASE6, TWOPHASE_LEMMAS)])
def test_the_tlaps_invariants_are_inductive_at_tlcs_bounds(model, lemmas):
    r = prove_model(model)
    assert r.verdict == "proved" and r.exit_code == 0
    assert r.lemmas == lemmas
    assert r.proof.clauses in (r.properties + lemmas, r.properties + lemmas + ["DeclaredBounds"])


def _holds(system, cells, formula_of_frame) -> bool:
    """A clause, evaluated on a valuation with Z3."""
    f = system.frame("check")
    sv = z3.Solver()
    sv.add(*f.equals(cells), z3.Not(formula_of_frame(f)))
    return sv.check() == z3.unsat




@pytest.mark.parametrize("dropped, clause", [
    ("OneDecisionSent", "TCConsistent"),
    ("TMStateMatchesSent", "OneDecisionSent"),
    ("TMPreparedWasSent", "CommitAfterAllPrepared"),
    ("PreparedLeftWorking", "TCConsistent"),
    ("CommittedAfterCommitSent", "TCConsistent"),
    ("CommitAfterAllPrepared", "TCConsistent"),
    ("AbortedWhy", "TCConsistent"),
])
def test_each_clause_of_twophases_invariant_is_needed(dropped, clause):
    """Without any one lemma the step fails. Which CTI Z3 picks varies, so
    the test checks what makes it one: its first state satisfies every
    remaining clause and is unreachable, its step is the spec's own (by
    `next`), and the second state breaks the clause."""
    r = prove_model(TWOPHASE, without=[dropped])
    assert r.verdict == "not inductive" and r.exit_code == 3
    cti = r.proof.cti
    assert cti.clause == clause and clause in cti.failing
    system, spec = r.system, r.system.relation.spec
    rel = system.relation
    before, after = rel.state_of(cti.before), rel.state_of(cti.after)
    assert isinstance(before, TPState) and (cti.action, after) in list(spec.next(before))
    lemmas = {n: rel.lemmas[n] for n in r.lemmas}
    clauses = {**{n: (lambda f, p=p: rel.property(f, p)) for n, p in spec.invariants.items()},
               **{n: (lambda f, p=p: rel.lemma(f, p)) for n, p in lemmas.items()},
               "DeclaredBounds": lambda f: z3.And(f.types())}
    assert all(_holds(system, cti.before, clauses[n]) for n in r.proof.clauses)
    assert not _holds(system, cti.after, clauses[clause])
    assert before not in set(reachable(spec))


@pytest.mark.parametrize("model, dropped", [(TCOMMIT, None), (TWOPHASE, None),
                                             *[(TWOPHASE, x) for x in TWOPHASE_LEMMAS]])
def test_the_step_asked_per_action_decides_as_the_whole_step(model, dropped):
    """`prove` asks the inductive step per action, and only of the clauses
    whose cells the action changes. Asked of the whole step at once, the
    verdict is the same, and a CTI either way is a step of that action that
    breaks the clause it names."""
    split, whole = (prove_model(model, without=[dropped] if dropped else [], per_action=x) for x in (True, False))
    assert split.proof.verdict == whole.proof.verdict == ("not inductive" if dropped else "proved")
    for r in (split, whole):
        rel, cti = r.system.relation, r.proof.cti
        if cti:
            before, after = rel.state_of(cti.before), rel.state_of(cti.after)
            assert (cti.action, after) in list(rel.spec.next(before)) and cti.clause in cti.failing


def test_tcommit_has_no_clause_to_weaken():
    """TCommit's TLAPS invariant is TCTypeOK /\\ TCConsistent. Dropping
    TCTypeOK leaves TCConsistent inductive on its own, and so is each of its
    pair clauses: Decide's guards read every RM, so no step makes one RM
    aborted while another is committed. There is no CTI to show."""
    r = prove_model(TCOMMIT)
    spec = r.system.relation.spec
    assert prove(r.system, {"TCConsistent": spec.invariants["TCConsistent"]}, {}).verdict == "proved"
    st = spec.schema.symbols["rmState"]
    r1, r2 = spec.schema.const("RM", "r1"), spec.schema.const("RM", "r2")
    one_pair = z3.Not(z3.And(st(r1) == z3.StringVal("aborted"), st(r2) == z3.StringVal("committed")))
    assert prove(r.system, {"OnePair": one_pair}, {}).verdict == "proved"
    # and a property TCommit does not have is refuted with a CTI
    never_committed = spec.schema.forall("RM", lambda x: st(x) != z3.StringVal("committed"))
    p = prove(r.system, {"NeverCommitted": never_committed}, {})
    assert p.verdict == "not inductive" and p.cti.action[0] == "Decide"


def test_the_cti_is_printed_as_two_states_and_an_action(capsys):
    rc, out, err = run(capsys, "prove", TWOPHASE, "--without", "PreparedLeftWorking")
    assert rc == 3 and err == ""
    assert "inductive step: TCConsistent is not preserved" in out
    lines = out.splitlines()
    i = lines.index("counterexample to induction:")
    assert lines[i + 1] == "  state 1 (every clause of the invariant holds):"
    assert any(x.startswith("  action RMChooseToAbort(rm=") for x in lines)   # the only step that breaks it
    assert "    tmState = committed" in lines[i + 2:]
    assert "  clauses that fail in state 2: TCConsistent, AbortedWhy" in lines
    assert lines[-1].startswith("verdict: not inductive")


def test_an_initial_state_that_violates_is_exit_1(capsys, tmp_path):
    model = tmp_path / "solved.toml"
    model.write_text(DIEHARD.read_text().replace("goal = 4", "goal = 0").split("[expect]")[0])
    rc, out, _ = run(capsys, "prove", model)
    assert rc == 1
    assert "an initial state violates the invariant:" in out and "  clauses that fail: NotSolved" in out


def test_bounded_checking_finds_bfss_shortest_trace_and_show_reads_it(capsys, tmp_path):
    rc, out, _ = run(capsys, "prove", DIEHARD, "--bounded", "10", "--out", tmp_path, "--json")
    doc = json.loads(out)
    assert rc == 1 and doc["violation"]["property"] == "NotSolved"
    bfs = explore(prove_model(DIEHARD, depth=0).system.relation.spec).violations[0]
    assert doc["violation"]["length"] == bfs.length == 7
    rc, shown, _ = run(capsys, "show", doc["violation"]["trace"])
    assert rc == 0 and "violates NotSolved (invariant) in 7 states" in shown


def test_bounded_checking_without_a_violation_is_not_a_proof(capsys):
    rc, out, _ = run(capsys, "prove", TWOPHASE, "--bounded", "4")
    assert rc == 3
    assert out.splitlines()[-1] == "verdict: no violation within 4 steps of an initial state (not a proof)"


def test_bounded_checking_reports_a_deadlock(capsys, tmp_path):
    """TCommit's all-committed state has no successor (6 steps from the start)."""
    model = tmp_path / "tc.toml"
    model.write_text(TCOMMIT.read_text().replace("deadlock = false", "deadlock = true"))
    rc, out, _ = run(capsys, "prove", model, "--bounded", "8", "--out", tmp_path, "--json")
    doc = json.loads(out)
    assert rc == 1 and doc["violation"]["kind"] == "deadlock"
    assert doc["violation"]["length"] == explore(TCommit(rm=3), deadlock=True).violations[0].length


@pytest.mark.parametrize("argv, message", [
    (["--without", "NoSuchLemma"], "unknown lemma 'NoSuchLemma' for spec twophase (known: OneDecisionSent"),
    (["--bounded", "-1"], "argument --bounded: invalid depth from 0 to 1000 value"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    rc, _, err = run(capsys, "prove", TWOPHASE, *argv)
    assert rc == 2 and message in err and len(err.strip().splitlines()) == 1


def test_the_prove_table_of_a_model_file_is_checked(capsys, tmp_path):
    model = tmp_path / "m.toml"
    model.write_text(TCOMMIT.read_text().split("[prove]")[0] + "[prove]\nlemma = [\"x\"]\n")
    rc, _, err = run(capsys, "prove", model)
    assert rc == 2 and ("m.toml:18: unknown key 'lemma' in [prove]; did you mean 'lemmas'? "
                        "(known: agreement, dead, derived_dead, formulas, infer, lemmas, lemmas_from, without)") in err
