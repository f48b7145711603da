"""PIP-473's symbolic relation (spec/pip473/symbolic/relation.py) against the spec:
the agreement at every state of the small models and at 25,000 (fixed) and
10,000 (merged) states of random walks at the standard bounds, a changed
guard caught, and bounded symbolic checking against the corpus: every
violation of at most 12 states found with its [expect] length and property
(the gate holds bfs to those), its trace taken by `show` and `replay`."""

from __future__ import annotations

import itertools
import json
import tomllib

import pytest
import z3

from txncheck.checker.cli import main
from txncheck.checker.model import load_model
from txncheck.checker.symbolic.agreement import disagreements, reachable, walk
from txncheck.checker.symbolic.load import relation_for
from txncheck.checker.symbolic.run import prove_model
from txncheck.spec.pip473.symbolic import relation as pip473_relation

from .helpers import MODELS, ROOT

PIP473 = MODELS / "pip473"
STANDARD = {"fixed": PIP473 / "fixed-standard.toml",
            "merged": PIP473 / "merged.toml"}   # merged.toml has the standard bounds


def spec_of(path):
    return load_model(path).instantiate()


# bounds the relation refuses (the closed instance's stages; the producer gate): their models are bfs's alone
def corpus_violations(longest: int) -> list[tuple[str, str, int]]:
    """(stem, property, length) of each violation of at most `longest` states
    whose bounds the relation states (it refuses the others: `state_schema`)."""
    out = []
    for p in sorted(PIP473.glob("*.toml")):
        exp = tomllib.loads(p.read_text()).get("expect", {})
        if exp.get("verdict") == "violation" and "length" in exp and exp["length"] <= longest:
            try:
                relation_for(spec_of(p)).state_schema()
            except ValueError:
                continue
            out.append((p.stem, exp["property"], exp["length"]))
    return out


def small_models(most: int):
    """(stem, relation, every reachable state) of each model of models/pip473
    the relation states that has at most `most` states. A model whose
    [expect] counts more distinct states is not explored: bfs's count, under
    any reduction or depth bound, is at most the reachable states'."""
    for p in sorted(PIP473.glob("*.toml")):
        if tomllib.loads(p.read_text()).get("expect", {}).get("distinct", 0) > most:
            continue
        spec = spec_of(p)
        try:
            rel = relation_for(spec)
        except ValueError:
            continue
        states = list(itertools.islice(reachable(spec, limit=most + 1), most + 1))
        if len(states) <= most:
            yield p.stem, rel, states


@pytest.mark.parametrize("stem, states", [("gc-forced-delete", 51), ("late-ack-merged", 69), ("late-ack-fixed", 51)])
def test_every_state_of_a_small_model_of_each_variant_agrees(stem, states):
    spec = spec_of(PIP473 / f"{stem}.toml")
    checked, bad = disagreements(relation_for(spec), reachable(spec), stop_after=1)
    assert bad == [] and checked == states


@pytest.mark.slow
def test_every_state_of_every_small_model_agrees():
    """Every model of models/pip473 the relation states with at most 10,000
    states, every state (the counts are printed: `-rP`). Larger models are
    compared on walks (below) and, for each proof's model, by its recorded
    agreement (`txncheck prove MODEL --agreement`)."""
    stems, total = [], 0
    for stem, rel, states in small_models(10_000):
        checked, bad = disagreements(rel, states, stop_after=1)
        assert bad == [], f"{stem}: {bad[0]}"
        stems.append(stem)
        total += checked
    print(f"{len(stems)} models, {total} states: {' '.join(stems)}")
    assert len(stems) >= 20 and total > 50_000


@pytest.mark.slow
@pytest.mark.parametrize("variant, states", [("fixed", 25_000), ("merged", 10_000)])
def test_states_of_random_walks_at_the_standard_bounds_agree(variant, states):
    """fixed's relation is what `prove` proves with; merged's backs no proof
    (bounded checks and CTIs only), so fewer of its states are compared."""
    spec = spec_of(STANDARD[variant])
    checked, bad = disagreements(relation_for(spec), walk(spec, 10**9, seed=473, depth=60),
                                 stop_after=1, most=states)
    assert bad == [] and checked == states


def test_a_changed_guard_is_caught(monkeypatch):
    """The dispatcher without its maxReadPosition check reads past an open
    transaction's entry: Z3 allows a dispatch the spec does not."""
    real = pip473_relation.dispatch

    def reads_anything(s, j):
        guard, t = real(s, j)
        return z3.And(s.v("up", j), s.v("rd", j) <= s.v("llen", j)), t

    monkeypatch.setattr(pip473_relation, "dispatch", reads_anything)
    spec = spec_of(PIP473 / "append-before-op.toml")
    _, (bad, *_) = disagreements(relation_for(spec), reachable(spec), stop_after=1)
    assert (bad.what, bad.action[0]) == ("z3-only", "dispatch")
    assert "Z3 allows a successor the spec does not yield: rd = " in bad.detail


@pytest.mark.parametrize("stem, extra, bound", [
    ("prune-after-trim-merged", "", "trim = True"),
    # the relation's observation reads what a client was told, never an owed answer
    ("late-ack-fixed", 'replies = "owed"\n', "replies = 'owed'")], ids=["trim", "replies-owed"])
def test_unsupported_bounds_are_refused_in_one_line(capsys, tmp_path, stem, extra, bound):
    model = tmp_path / f"{stem}.toml"
    model.write_text((PIP473 / f"{stem}.toml").read_text().replace("[constants]\n", "[constants]\n" + extra))
    rc = main(["prove", str(model)])
    err = capsys.readouterr().err
    assert rc == 2 and f"the symbolic relation of pip473 does not state bound {bound}" in err


def _bounded(stem, tmp_path):
    r = prove_model(PIP473 / f"{stem}.toml", depth=12)
    return r, r.bounded


@pytest.mark.parametrize("stem, prop, length", [("late-ack-merged", "AcksFixedAtDecision", 4),
                                                ("append-before-op", "ReadCommitted", 5)])
def test_bounded_checking_finds_a_corpus_violation_at_bfss_length(stem, prop, length, tmp_path):
    _, b = _bounded(stem, tmp_path)
    assert (b.verdict, b.violated, b.length) == ("violation", prop, length)


@pytest.mark.slow
def test_bounded_checking_finds_every_corpus_violation_of_at_most_12_states():
    found = []
    for stem, prop, length in corpus_violations(12):
        r = prove_model(PIP473 / f"{stem}.toml", depth=12)
        found.append((stem, r.bounded.violated, r.bounded.length))
        assert (r.bounded.violated, r.bounded.length) == (prop, length), stem
    assert len(found) == 18   # unload-merged (apply = steps) and late-cache-put-merged (check = steps) are refused


def test_the_bounded_trace_is_shown_and_reproduced_on_the_reference(capsys, tmp_path):
    rc = main(["prove", str(PIP473 / "late-ack-merged.toml"), "--bounded", "6", "--out", str(tmp_path), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 1 and doc["violation"]["length"] == 4
    trace = doc["violation"]["trace"]
    assert main(["show", trace]) == 0
    assert "violates AcksFixedAtDecision (invariant) in 4 states" in capsys.readouterr().out
    assert main(["replay", trace]) == 1     # reproduced
    assert "reproduced at step 3: AcksFixedAtDecision fails on the implementation" in capsys.readouterr().out


# -- proofs by induction ---------------------------------------------------------------


def _standard_proof_on(stem, without=()):
    """Prove a smaller fixed model with the standard model's twelve properties
    and its [prove] lemmas (less `without`): the lemmas name no bound."""
    from txncheck.checker.symbolic.induction import prove

    std = load_model(STANDARD["fixed"])
    spec = spec_of(PIP473 / f"{stem}.toml")
    rel = relation_for(spec)
    unknown = [n for n in std.raw["prove"]["lemmas"] if n not in rel.lemmas and n not in without]
    assert not unknown, f"lemmas the relation lacks at {stem}'s bounds: {unknown}"   # never skipped
    lemmas = {n: rel.lemmas[n] for n in std.raw["prove"]["lemmas"] if n not in without}
    from txncheck.checker.symbolic.system import System

    return prove(System(rel), {p: spec.invariants[p] for p in std.properties}, lemmas)


def test_without_the_watermark_lemma_recovery_gives_a_cti():
    """F2's lemma: a segment with an op record has a persisted watermark.
    Without it, a recovery that finds an OPEN txn holds maxReadPosition at
    the LAC instead, above the txn's entry: the CTI is that step."""
    p = _standard_proof_on("recovery-watermark-fixed", without=["WatermarkPersistedBeforeTheFirstOp"])
    assert p.verdict == "not inductive"
    assert (p.cti.clause, p.cti.action[0]) == ("MaxReadPositionSafe", "recoverComplete")
    assert p.cti.before[("wmark", ("s1",))] == -1 and p.cti.before[("tpos", ("s1", "t1", "-1"))] is False
    assert p.cti.after[("tpos", ("s1", "t1", "-1"))] is True


def test_merged_is_not_proved_with_fixeds_lemmas():
    """The lemmas are no proof of any variant: merged's late ack (appended
    after the decision) is a step they do not survive. Merged's relation
    states no lemma of F1's pipeline or F2's watermark, so those three are
    left out by name."""
    p = _standard_proof_on("late-ack-merged", without=["SendStages", "CachedAcksHaveOps",
                                                       "WatermarkPersistedBeforeTheFirstOp"])
    assert p.verdict == "not inductive" and p.cti.action[0] == "appendAck"


def test_a_model_with_sends_crashes_and_recovery_agrees_where_those_steps_are_enabled():
    """The fast tier's agreement compared states where no send, crash,
    recovery or dispatch was enabled (one txn, no sends): append-before-op-fixed
    has them all within its 833 states, and the coverage says each was seen."""
    from txncheck.checker.symbolic.agreement_run import run_agreement

    from txncheck.checker.symbolic.system import show_action

    rel = relation_for(spec_of(PIP473 / "append-before-op-fixed.toml"))
    run = run_agreement(rel, states=1000)
    assert run.agrees and run.complete and run.exhaustive == 833
    seen = {a.label[0] for a in rel.actions() if show_action(a.label) not in run.coverage["never_enabled"]}
    for step in ("publishCheck", "publishPutOp", "publishAppend", "crash", "recover", "recoverComplete",
                 "dispatch", "endTxn", "deliverEvent"):
        assert step in seen, f"{step} never enabled"


TWO_TXNS = {"txns": 2, "writes": "t1:0 t1:1 t2:0 t2:1", "acks": "", "crashes": 1, "failovers": 0,
            "reshape": "none", "decisions": "both", "participants": "split", "recovery": "steps", "ticks": 0,
            "timeout": 0, "retention": 0}


@pytest.mark.slow
def test_two_txns_with_two_sends_each_to_one_segment_agree():
    """Only one small model had two txns: this one has two sends of each to
    one segment, a crash and both decisions (over 60,000 states: the first
    20,000 breadth first, then 5,000 of walks biased toward rare steps)."""
    from txncheck.checker.symbolic.agreement_run import run_agreement
    from txncheck.spec.pip473.spec import Pip473

    run = run_agreement(relation_for(Pip473(variant="fixed", **TWO_TXNS)), states=20_000, walk_states=5_000)
    assert run.agrees, run.disagreement
    assert run.exhaustive == 20_000 and not run.complete and run.walked > 1_000


UNLOAD = {"txns": 1, "writes": "t1:0", "acks": "", "crashes": 0, "failovers": 0, "unloads": 1,
          "reshape": "none", "decisions": "both", "participants": "split", "recovery": "steps", "ticks": 0,
          "timeout": 0, "retention": 0, "client": "stock"}


def test_an_unload_with_the_stock_client_agrees_at_every_state():
    """Bound unloads (apply = "atomic") in fixed: the closed instance's send,
    the stock client's resend after it (one more op put per unload, so a seq
    the relation's cells must hold), its abort after a failed send, and F10
    (no recovery while a closed send runs), at every reachable state."""
    from txncheck.checker.symbolic.agreement_run import run_agreement
    from txncheck.checker.symbolic.system import show_action
    from txncheck.spec.pip473.spec import Pip473

    rel = relation_for(Pip473(variant="fixed", **UNLOAD))
    run = run_agreement(rel, states=20_000, walk_states=0)
    assert run.agrees, run.disagreement
    assert run.complete and run.exhaustive > 1_000, run.exhaustive
    seen = {a.label[0] for a in rel.actions() if show_action(a.label) not in run.coverage["never_enabled"]}
    assert {"unload", "publishPutOp", "publishAppend", "recover"} <= seen


def test_merged_with_an_unload_and_the_stock_client_is_refused_in_one_line(capsys, tmp_path):
    """Without F1 the closed send's op stays when the stock client resends:
    two op records of one send, which the relation's cells cannot hold."""
    model = tmp_path / "unload-merged.toml"
    model.write_text((PIP473 / "unload-merged.toml").read_text().replace('apply = "steps"', 'apply = "atomic"'))
    rc = main(["prove", str(model)])
    err = capsys.readouterr().err
    assert rc == 2 and "the symbolic relation of pip473 does not state bound client = 'stock'" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
