"""`txncheck prove` exits 0 only when every property the model asks for was
decided true (issue 50): a temporal property, `deadlock = true`, an empty
property list, an action dead under the invariant, a witness not reached, or
a hand-written relation with no current agreement each leave the verdict
"not proved" (exit 3) with a line naming it; `--agreement` finds a relation
that is not the spec's, and will not record it; a budget stops a relation
whose code never returns; `--bounded` takes ASCII digits only."""

from __future__ import annotations

import json
import re
import textwrap

import pytest

from txncheck.checker.cli import main

from .helpers import MODELS

TWOPHASE = MODELS / "classic" / "twophase-rm3.toml"
LIVENESS = MODELS / "classic" / "twophase-rm3-liveness.toml"
TCOMMIT = MODELS / "classic" / "tcommit-rm3.toml"


def run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def prove_table(model) -> str:
    """A shipped model's [prove] table (its recorded agreement included)."""
    return "[prove]" + model.read_text().split("[prove]", 1)[1]


def without_prove(model) -> str:
    return model.read_text().split("[prove]", 1)[0]


def test_the_shipped_models_prove(capsys):
    rc, out, _ = run(capsys, "prove", TWOPHASE)
    assert rc == 0 and out.splitlines()[-1].startswith("verdict: proved")
    assert "actions: 17 of 17 can fire under the invariant" in out and "deadlock freedom: proved" in out


def test_a_temporal_property_is_not_proved(capsys, tmp_path):
    """check exits 1 on this liveness violation (no fairness); prove said
    "proved", exit 0, and nothing of the temporal property."""
    model = tmp_path / "live.toml"
    model.write_text(LIVENESS.read_text().replace('fairness = ["WF(*)"]\n', "") + "\n" + prove_table(TWOPHASE))
    assert run(capsys, "check", model, "--out", tmp_path)[0] == 1
    rc, out, _ = run(capsys, "prove", model)
    assert rc == 3
    assert "verdict: not proved" in out
    assert "EventuallyAllDecided: a temporal property (prove decides invariants only" in out


def test_deadlock_freedom_is_proved_or_the_verdict_is_not_proved(capsys, tmp_path):
    """TCommit's all-committed state has no successor: check finds the
    deadlock, and prove (which said "proved") cannot prove its absence."""
    model = tmp_path / "tc.toml"
    model.write_text(TCOMMIT.read_text().replace("deadlock = false", "deadlock = true"))
    assert run(capsys, "check", model, "--out", tmp_path)[0] == 1
    rc, out, _ = run(capsys, "prove", model)
    assert rc == 3 and "deadlock freedom: not proved" in out
    assert "deadlock freedom (deadlock = true): a state of the invariant has no action enabled" in out


def test_an_empty_property_list_is_nothing_proved(capsys, tmp_path):
    model = tmp_path / "none.toml"
    model.write_text(re.sub(r"(?m)^properties = .*$", "properties = []", TWOPHASE.read_text()))
    rc, out, _ = run(capsys, "prove", model, "--json")
    doc = json.loads(out)
    assert rc == 3 and doc["verdict"] == "not proved" and doc["exit_code"] == 3
    assert any("there is nothing to prove" in x for x in doc["not_proved"])


def test_a_dead_action_is_named_unless_the_model_declares_it(capsys, tmp_path):
    """TwoPhase's TMAbort made dead (its guard false) is no proof of TwoPhase;
    a `dead` entry naming an action that can fire is refused too."""
    model = tmp_path / "tp.toml"
    model.write_text(without_prove(TWOPHASE) + prove_table(TWOPHASE) + 'dead = ["TMCommit"]\n')
    rc, out, _ = run(capsys, "prove", model)
    assert rc == 3 and "[prove] dead names TMCommit, but it can fire under the invariant" in out


def test_a_dead_entry_the_code_never_yields_is_dead_in_the_code(capsys, tmp_path):
    """The derived relation has a label for each action the code yields: a
    `dead` entry with none (PIP-473's tick with ticks = 0) hides no step."""
    model = tmp_path / "tp.toml"
    model.write_text(without_prove(TWOPHASE) + prove_table(TWOPHASE) + 'dead = ["tick"]\n')
    rc, out, _ = run(capsys, "prove", model)
    assert rc == 0 and "dead names" not in out, out


def test_a_dropped_action_is_found_by_the_dead_action_check(capsys, monkeypatch):
    from txncheck.checker.symbolic.derive import DerivedRelation
    from txncheck.spec.symbolic import Act

    real = DerivedRelation.actions

    def without_abort(self):
        return [a if a.label[0] != "TMAbort" else Act(a.label, lambda f, step=a.step: (False, step(f)[1]))
                for a in real(self)]

    monkeypatch.setattr(DerivedRelation, "actions", without_abort)
    rc, out, _ = run(capsys, "prove", TWOPHASE)
    assert rc == 3 and "action that can never fire under the invariant" in out and ": TMAbort" in out



def test_a_dead_pattern_names_every_instance_it_matches(capsys, monkeypatch, tmp_path):
    """A `dead` entry with a wildcard names the instances whose printed
    label it matches (PIP-473's derived relation has a set per unused
    segment): the dropped TMAbort is declared by one, and a pattern that
    matches only actions that can fire is refused as a name is."""
    from txncheck.checker.symbolic.derive import DerivedRelation
    from txncheck.spec.symbolic import Act

    real = DerivedRelation.actions
    monkeypatch.setattr(DerivedRelation, "actions", lambda self: [
        a if a.label[0] != "TMAbort" else Act(a.label, lambda f, step=a.step: (False, step(f)[1]))
        for a in real(self)])
    model = tmp_path / "tp.toml"   # (without TMAbort, a state where every RM is working is stuck)
    text = without_prove(TWOPHASE).replace("deadlock = true", "deadlock = false") + prove_table(TWOPHASE)
    model.write_text(text + 'dead = ["TM*bort"]\n')
    rc, out, _ = run(capsys, "prove", model)
    assert rc == 0 and "can never fire" not in out, out
    model.write_text(text + 'dead = ["TM*bort", "TMC*"]\n')
    rc, out, _ = run(capsys, "prove", model)
    assert rc == 3 and "[prove] dead names TMC*, but it can fire under the invariant" in out, out
    # derived_dead: the same, read only with a relation derived from the code (TwoPhase's is)
    model.write_text(text + 'derived_dead = ["TM*bort"]\n')
    rc, out, _ = run(capsys, "prove", model)
    assert rc == 0, out

LOCK = '''
from typing import NamedTuple
import z3
from txncheck.spec.api import Spec
from txncheck.spec.schema import Bool, Enum

class S(NamedTuple):
    pc: tuple
    lock: bool

class Lock(Spec):
    """Two processes: check that the lock is free, then take it (racy)."""
    name = "lock"
    def setup(self):
        sc = self.schema
        sc.enum("Proc", ("p1", "p2"))
        sc.enum("Pc", ("idle", "checked", "crit"))
        pc = sc.fun("pc", "Proc", Enum("Pc"))
        sc.var("lock", Bool())
        crit = sc.const("Pc", "crit")
        self.invariants["MutualExclusion"] = sc.forall(
            ("Proc", "Proc"), lambda a, b: z3.Implies(z3.And(a != b, pc(a) == crit), pc(b) != crit))
    def init_states(self):
        yield S(("idle", "idle"), False)
    def next(self, s):
        for i, p in enumerate(("p1", "p2")):
            at = lambda x: s.pc[:i] + (x,) + s.pc[i + 1:]
            if s.pc[i] == "idle" and not s.lock:
                yield ("Check", (("p", p),)), S(at("checked"), s.lock)
            if s.pc[i] == "checked":
                yield ("Take", (("p", p),)), S(at("crit"), True)
            if s.pc[i] == "crit":
                yield ("Release", (("p", p),)), S(at("idle"), False)
    def observe(self, s):
        return {"pc": dict(zip(("p1", "p2"), s.pc)), "lock": s.lock}
'''

RELATION = '''
import z3
from txncheck.spec.symbolic import Act, Relation

class LockRelation(Relation):
    """Checks as if a check also needed the other process idle: too restrictive."""
    def setup(self):
        sc = self.schema
        pc, idle = sc.symbols["pc"].ref, sc.const("Pc", "idle")
        self.lemmas["OneBusy"] = z3.Or(pc(sc.const("Proc", "p1")) == idle, pc(sc.const("Proc", "p2")) == idle)

    def actions(self):
        sc = self.schema
        v = lambda x: sc.const("Pc", x)
        out = []
        for p, q in (("p1", "p2"), ("p2", "p1")):
            out += [
                Act(("Check", (("p", p),)), lambda f, p=p, q=q: (
                    z3.And(f.pc(p) == v("idle"), z3.Not(f.lock), GUARD), {f.pc(p): v("checked")})),
                Act(("Take", (("p", p),)), lambda f, p=p: (f.pc(p) == v("checked"), {f.pc(p): v("crit"), f.lock: True})),
                Act(("Release", (("p", p),)), lambda f, p=p: (f.pc(p) == v("crit"), {f.pc(p): v("idle"), f.lock: False})),
            ]
        return out
'''


def lock_model(tmp_path, guard: str):
    (tmp_path / "lock.py").write_text(LOCK)
    (tmp_path / "lock_relation.py").write_text(RELATION.replace("GUARD", guard))
    model = tmp_path / "lock.toml"
    model.write_text('spec = "lock.py:Lock"\nproperties = ["MutualExclusion"]\n\n[prove]\nlemmas = ["OneBusy"]\n')
    return model


def test_a_relation_that_is_not_the_specs_proves_nothing(capsys, tmp_path):
    """The racy lock violates MutualExclusion; a relation that restricts the
    check "proves" it. prove refuses a relation with no recorded agreement,
    and --agreement finds the step the relation refuses, and records nothing."""
    model = lock_model(tmp_path, "f.pc(q) == v('idle')")
    assert run(capsys, "check", model, "--out", tmp_path)[0] == 1
    rc, out, _ = run(capsys, "prove", model)
    assert rc == 3 and "the relation is hand-written and the model file records no agreement" in out
    text = model.read_text()
    rc, out, _ = run(capsys, "prove", model, "--agreement", "--record")
    assert rc == 1 and "verdict: disagrees" in out
    assert "spec-only by Check(p=p" in out and "the relation's guard is false" in out
    assert model.read_text() == text


def test_a_relation_that_agrees_is_recorded_and_then_proves_or_refutes(capsys, tmp_path):
    """The faithful relation agrees; once recorded, prove uses it (and finds
    the racy lock's invariant not inductive); an edit of the relation's code
    makes the record stale."""
    model = lock_model(tmp_path, "True")
    rc, out, _ = run(capsys, "prove", model, "--agreement", "--record")
    assert rc == 0 and "every reachable state" in out and "verdict: agrees" in out
    assert re.search(r'(?m)^agreement = "[0-9a-f]{16}"$', model.read_text())
    rc, out, _ = run(capsys, "prove", model)
    assert rc == 3 and "verdict: not inductive" in out
    (tmp_path / "lock_relation.py").write_text(RELATION.replace("GUARD", "z3.BoolVal(True)"))
    rc, out, _ = run(capsys, "prove", model, "--json")
    doc = json.loads(out)
    assert rc == 3 and doc["verdict"] == "not inductive"   # the proof fails before the record matters


def test_a_stale_agreement_is_not_a_proof(capsys, tmp_path):
    """TwoPhase beside a hand-written relation (here the derived one, posing
    as hand-written) whose recorded agreement is of other code."""
    (tmp_path / "tp.py").write_text("from txncheck.spec.classic import twophase\n\n\n"
                                    "class TwoPhase(twophase.TwoPhase):\n    pass\n")
    (tmp_path / "tp_relation.py").write_text("from txncheck.checker.symbolic.derive import DerivedRelation\n\n\n"
                                            "class TwoPhaseRelation(DerivedRelation):\n    derived = False\n")
    model = tmp_path / "tp.toml"
    model.write_text(TWOPHASE.read_text().replace('spec = "twophase"', 'spec = "tp.py:TwoPhase"')
                     + 'agreement = "0000000000000000"\n')
    rc, out, _ = run(capsys, "prove", model)
    assert rc == 3 and "the relation's recorded agreement is of other code or bounds" in out
    # a sub-package beside the spec is code the agreement is of (as spec/pip473/protocol/ is)
    from txncheck.checker.model import load_model
    from txncheck.checker.symbolic.agreement_run import agreement_digest
    from txncheck.checker.symbolic.load import relation_for

    rel = relation_for(load_model(str(model)).instantiate())
    before = agreement_digest(rel)
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "__init__.py").write_text("")
    (tmp_path / "parts" / "step.py").write_text("X = 1\n")
    assert agreement_digest(rel) != before


def test_the_agreement_reports_its_coverage(capsys):
    rc, out, _ = run(capsys, "prove", TWOPHASE, "--agreement", "--json")
    doc = json.loads(out)
    assert rc == 0 and doc["agrees"] and doc["complete"] and doc["exhaustive_states"] == 288
    c = doc["coverage"]
    assert c["labels"] == 17 and c["both"] == 17 and c["conjuncts_both"] == c["conjuncts"]


def test_a_spec_that_prints_leaves_prove_json_one_object(capsys, tmp_path):
    model = lock_model(tmp_path, "True")
    (tmp_path / "lock.py").write_text(LOCK.replace("    def setup(self):\n", "    def setup(self):\n        print('hi')\n"))
    rc, out, err = run(capsys, "prove", model, "--json")
    assert json.loads(out)["verdict"] in ("not proved", "not inductive") and "hi" in err


def test_max_seconds_stops_a_relation_whose_code_never_returns(capsys, tmp_path):
    model = lock_model(tmp_path, "True")
    (tmp_path / "lock_relation.py").write_text(RELATION.replace("GUARD", "True").replace(
        "        out = []\n", "        while True:\n            pass\n"))
    rc, out, _ = run(capsys, "prove", model, "--max-seconds", "1", "--json")
    assert rc == 3 and json.loads(out) == {"model": str(model), "verdict": "incomplete",
                                            "reason": "max-seconds 1 reached", "exit_code": 3}


@pytest.mark.parametrize("value", ["\u0663", "1_0", " 3", "+3"])
def test_bounded_takes_ascii_digits_only(capsys, value):
    rc, _, err = run(capsys, "prove", TWOPHASE, "--bounded", value)
    assert rc == 2 and "invalid depth from 0 to 1000 value" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("extra, why", [
    (["--infer"], "--derived goes with a proof, --bounded or --agreement, not --infer"),
    (["--agreement", "--record"], "a derived relation needs none"),
])
def test_derived_refuses_what_has_no_hand_written_relation_to_stand_for(capsys, extra, why):
    rc, _, err = run(capsys, "prove", TWOPHASE, "--derived", *extra)
    assert rc == 2 and why in err and len(err.splitlines()) == 1


def test_lemmas_from_borrows_a_siblings_lemmas_and_an_unknown_one_is_an_error(capsys, tmp_path):
    (tmp_path / "std.toml").write_text(TWOPHASE.read_text())
    model = tmp_path / "small.toml"
    model.write_text(without_prove(TWOPHASE) + textwrap.dedent('''\
        [prove]
        lemmas_from = "std"
        without = ["AbortedWhy"]
        '''))
    rc, out, _ = run(capsys, "prove", model)
    assert rc == 3 and "verdict: not inductive" in out   # AbortedWhy is needed
    model.write_text(without_prove(TWOPHASE) + '[prove]\nlemmas_from = "std"\nlemmas = ["NoSuchLemma"]\n')
    rc, _, err = run(capsys, "prove", model)
    assert rc == 2 and "unknown lemma 'NoSuchLemma' for spec twophase" in err


def test_each_shipped_agreement_record_is_of_todays_code():
    """A model file's recorded agreement is a digest of the spec's and the
    relation's code: an edit under spec/pip473/ leaves it stale, and `prove`
    then says "not proved" at the end of a proof. Here that shows in a
    second, naming the command that re-records."""
    import tomllib

    from txncheck.checker.model import load_model
    from txncheck.checker.symbolic.agreement_run import agreement_digest
    from txncheck.checker.symbolic.load import relation_for

    stale = []
    for path in sorted(MODELS.glob("*/*.toml")):
        recorded = tomllib.loads(path.read_text()).get("prove", {}).get("agreement")
        if recorded is not None and recorded != agreement_digest(relation_for(load_model(str(path)).instantiate())):
            stale.append(path.relative_to(MODELS.parent))
    assert not stale, ("recorded agreements of other code: for f in " + " ".join(map(str, stale))
                       + "; do txncheck prove $f --agreement --record; done")
