"""`txncheck prove --infer` (checker/symbolic/infer.py and its modules): the
lemma language, lemmas in a model file, inference on the classic specs.

The lemma language is untrusted input (a model file's [prove.formulas]):
it parses, never evaluates, and names only what the relation's schema has.
Inference must prove TwoPhase from no lemma, with lemmas each needed, that
prove again when written back into the model file; when it cannot, it
says so with a CTI, never `proved`.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
from pathlib import Path

import pytest

from txncheck.checker.cli import main
from txncheck.checker.errors import ModelError
from txncheck.checker.model import load_model
from txncheck.checker.symbolic.infer import infer
from txncheck.checker.symbolic.lemma_text import LemmaSyntaxError, parse, show
from txncheck.checker.symbolic.lemma_z3 import compile_text
from txncheck.checker.symbolic.model_lemmas import with_formulas
from txncheck.checker.symbolic.run import prove_model
from txncheck.checker.symbolic.samples import bounds_to_sample
from txncheck.checker.symbolic.vocabulary import Sorts

ROOT = Path(__file__).resolve().parents[1]
TWOPHASE = ROOT / "models" / "classic" / "twophase-rm3.toml"


class Ran:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def txncheck(capsys, *args) -> Ran:
    """The command line, in this process."""
    capsys.readouterr()
    rc = main([str(a) for a in args])
    out = capsys.readouterr()
    return Ran(rc, out.out, out.err)


def without_prove(src: Path, dest: Path) -> Path:
    """The model file without the lemmas its [prove] table names (the rest of
    the table, the relation's recorded agreement, stays)."""
    dest.write_text(re.sub(r"(?ms)^lemmas = \[.*?\]\n", "", src.read_text()))
    return dest


@pytest.fixture(scope="module")
def twophase_schema():
    return load_model(TWOPHASE).instantiate().schema


# -- the lemma language -------------------------------------------------------------------------------

TEXTS = [
    'forall R in RM: rmState[R] = "aborted" -> msgs[Abort] | !msgs["Prepared_{R}"]',
    "!(msgs[Commit] & msgs[Abort])",
    'tmState = "init" -> !msgs[Commit] & !msgs[Abort]',
    "forall R, R2 in RM: tmPrepared[R] & tmPrepared[R2] -> R = R2",
    'forall R in RM: (msgs[Commit] <-> tmState = "committed") | tmPrepared[R]',
    "msgs[Commit] -> exists R in RM: tmPrepared[R] & (forall R2 in RM: tmPrepared[R2])",
    'forall R in RM: rmState[R] = "working" | exists R2, R3 in RM: R2 != R3',
]


@pytest.mark.parametrize("text", TEXTS)
def test_lemma_text_round_trips(text, twophase_schema):
    tree = parse(text)
    assert parse(show(tree)) == tree
    compile_text(show(tree), twophase_schema)


BAD = [
    ('forall R in RM: rmState[R] = aborted', "write a string value in quotes"),
    ("msgs[Nope]", "'Nope' is not an element of Msg"),
    ("forall R in Node: true", "unknown sort 'Node'"),
    ("forall R in RM: tmPrepared[R, R]", "takes 1 argument(s), not 2"),
    ('tmState < "init"', "compares integers"),
    ("forall R in RM: msgs[R]", "variable R is of sort RM, where Msg is expected"),
    ('msgs["Prepared_{Q}"]', "{Q} in 'Prepared_{Q}' is not a bound variable"),
    ('__import__("os").system("true")', "expected"),
    ("(" * 60 + "true" + ")" * 60, "nests deeper than"),
    ("msgs[Commit] é", "only printable ASCII"),
    ("true | " * 800 + "true", "longer than"),
    ("forall R, R in RM: true", "bound twice"),
    ("forall A, B, C, D, E, F, G, H, I, J, K, L in RM: true", "expand to over 200,000 instances"),
    ("exists A, B, C, D, E, F, G, H, I, J, K, L in RM: true", "expand to over 200,000 instances"),
    ("forall R in RM: exists R in RM: true", "bound twice"),
    ("exists R in RM: tmPrepared", "takes 1 argument(s)"),
]


def test_exists_is_the_disjunction_of_its_instances(twophase_schema):
    """`exists` over a finite sort: true in a state where one instance holds,
    false where none does (and `forall` the conjunction), checked by Z3 on
    the schema's own cells."""
    import z3
    prepared = twophase_schema.symbols["tmPrepared"]
    r1, r2, r3 = twophase_schema.consts("RM")
    some, every = (compile_text(f"{q} R in RM: tmPrepared[R]", twophase_schema) for q in ("exists", "forall"))
    only_r2 = z3.And(z3.Not(prepared(r1)), prepared(r2), z3.Not(prepared(r3)))
    none = z3.And([z3.Not(prepared(r)) for r in (r1, r2, r3)])
    for state, some_holds, every_holds in ((only_r2, True, False), (none, False, False)):
        for formula, want in ((some, some_holds), (every, every_holds)):
            s = z3.Solver()
            s.add(state, formula if want else z3.Not(formula))
            assert s.check() == z3.sat
            s = z3.Solver()
            s.add(state, z3.Not(formula) if want else formula)
            assert s.check() == z3.unsat


@pytest.mark.parametrize("text,why", BAD)
def test_bad_lemma_text_is_one_clear_error(text, why, twophase_schema):
    with pytest.raises(LemmaSyntaxError, match=None) as e:
        compile_text(text, twophase_schema)
    assert why in str(e.value) and "\n" not in str(e.value)


def test_a_bad_formula_in_a_model_file_is_exit_2_naming_file_line_and_lemma(tmp_path, capsys):
    model = without_prove(TWOPHASE, tmp_path / "m.toml")
    model.write_text(model.read_text() + '\n[prove.formulas]\nGood = "!(msgs[Commit] & msgs[Abort])"\n'
                     "Bad = 'exec(\"import os\")'\n")
    r = txncheck(capsys, "prove", model)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1
    line = model.read_text().splitlines().index("Bad = 'exec(\"import os\")'") + 1
    assert f"{model}:{line}: [prove.formulas] Bad: expected" in r.stderr


@pytest.mark.parametrize("table,why", [
    ('"a b" = "true"', "a lemma's name is letters, digits and underscores"),
    ("A = 3", "[prove.formulas] must be a table of lemma names to lemma text"),
    ("OneDecisionSent = 'true'", "is also the name of a lemma of the relation"),
])
def test_bad_formula_tables_are_refused(table, why, tmp_path, capsys):
    model = without_prove(TWOPHASE, tmp_path / "m.toml")
    model.write_text(model.read_text() + f"\n[prove.formulas]\n{table}\n")
    r = txncheck(capsys, "prove", model)
    assert r.returncode == 2 and why in r.stderr and r.stderr.count("\n") == 1, r.stderr


def test_samples_a_model_file_names_must_be_the_specs_bounds(tmp_path, capsys):
    model = without_prove(TWOPHASE, tmp_path / "m.toml")
    model.write_text(model.read_text() + "\n[prove.infer]\nsamples = [{rm = 2}, {rms = 2}]\n")
    r = txncheck(capsys, "prove", model, "--infer")
    assert r.returncode == 2 and "[prove.infer] samples: unknown bound 'rms'" in r.stderr, r.stderr


def test_formulas_join_the_named_lemmas_and_without_drops_them(tmp_path):
    model = tmp_path / "m.toml"
    shutil.copy(TWOPHASE, model)
    model.write_text(model.read_text() + '\n[prove.formulas]\nNoBoth = "!(msgs[Commit] & msgs[Abort])"\n')
    r = prove_model(model)
    assert r.verdict == "proved" and r.lemmas[-1] == "NoBoth"
    assert prove_model(model, without=["NoBoth", "OneDecisionSent"]).verdict == "not inductive"


# -- writing lemmas back ---------------------------------------------------------------------------------


def test_writing_replaces_the_formulas_table_and_keeps_the_rest():
    text = ('spec = "x"  # a comment\n\n[prove]\nlemmas = ["A"]\n\n[prove.formulas]\nOld = "true"\n'
            "\n[expect]\nverdict = \"ok\"\n")
    out = with_formulas(text, [("New", 'msgs[Commit] -> tmState = "committed"')], "a note")
    assert "Old" not in out and "# a comment" in out and 'lemmas = ["A"]' in out
    assert "[prove.formulas]  # a note\nNew = 'msgs[Commit] -> tmState = \"committed\"'\n\n[expect]" in out
    first = with_formulas('spec = "x"\n[prove]\nlemmas = []\n[expect]\nverdict = "ok"\n', [("A", "true")])
    assert first.index("[prove.formulas]") < first.index("[expect]")
    assert with_formulas('spec = "x"\n', [("A", "it's")]).endswith('A = "it\'s"\n')
    with pytest.raises(ModelError, match="edit them by hand"):
        with_formulas('spec = "x"\n[prove]\nformulas = {A = "true"}\n', [("B", "true")])


# -- what inference samples and quantifies -----------------------------------------------------------


def test_sampled_bounds_are_the_models_then_each_one_smaller():
    m = load_model(TWOPHASE)
    assert bounds_to_sample(m, m.instantiate()) == [{"rm": 3}, {"rm": 2}]
    paxos = load_model(ROOT / "examples" / "paxos_commit" / "paxos_commit.toml")
    got = bounds_to_sample(paxos, paxos.instantiate())
    assert got[1]["rms"] == ("r1",) and got[-1]["ballots"] == 1 and len(got) == 6


def test_sorts_are_index_family_or_ground(twophase_schema):
    s = Sorts(twophase_schema)
    assert s.index == ("RM",)
    assert sorted("".join(p if isinstance(p, str) else "{}" for p in sh.parts) for sh in s.shapes["Msg"]) == \
        ["Abort", "Commit", "Prepared_{}"]


# -- inference ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def twophase_written(tmp_path_factory):
    model = without_prove(TWOPHASE, tmp_path_factory.mktemp("tp") / "twophase.toml")
    before = model.read_text()
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["prove", str(model), "--infer", "--write", "--json"])
    return model, before, Ran(rc, out.getvalue(), err.getvalue())


def test_twophase_is_proved_from_no_lemma_and_the_written_lemmas_prove_plainly(twophase_written):
    model, before, r = twophase_written
    assert r.returncode == 0, r.stdout + r.stderr
    out = json.loads(r.stdout)
    assert out["verdict"] == "proved" and out["written"] == str(model) and out["lemmas"]
    assert model.read_text().startswith(before)
    plain = prove_model(model)
    assert plain.verdict == "proved" and plain.lemmas == [x["name"] for x in out["lemmas"]]


def test_each_inferred_lemma_is_needed(twophase_written):
    """Of the 51 inductive candidates the proof keeps 9 (TLAPS's proof has
    7 lemmas, Endive's 9), and the same 9 in this process, after whatever
    other tests asked Z3 before (the minimisation decides by sat or unsat,
    never by an unsat core); leaving any one out leaves the model not
    proved: a CTI, or, for the lemma deadlock freedom needs (the model has
    `deadlock = true`), a state with no action enabled."""
    model, _, r = twophase_written
    lemmas = json.loads(r.stdout)["lemmas"]
    assert [x["name"] for x in lemmas] == [
        "rmState_msgs", "tmState_msgs", "tmState_msgs_2", "msgs", "rmState_msgs_2", "rmState_msgs_3",
        "rmState_tmState_tmPrepared", "rmState_tmState_msgs", "tmState_msgs_3"]
    for x in lemmas:
        without = prove_model(model, without=[x["name"]])
        assert without.verdict == "not inductive" or without.vacuity.deadlock == "not proved", x


def test_properties_inductive_alone_need_no_lemma():
    r = infer(ROOT / "models" / "classic" / "tcommit-rm3.toml")
    assert r.verdict == "proved" and r.lemmas == [] and not r.samples


def test_when_templates_are_too_small_it_says_not_inductive_with_a_cti():
    """With at most two literals per clause, TwoPhase's candidates cannot
    prove TCConsistent: the answer is a CTI under the strongest inductive set."""
    r = infer(TWOPHASE, levels=((1, 2),), four="off")
    assert r.verdict == "not inductive" and r.exit_code == 3
    assert r.proof.cti is not None and r.strongest
    assert any("more than 2 literals" in h for h in r.hints)
    # the last level again with existential candidates beside its clauses, unless switched off
    assert [lv.exists > 0 for lv in r.levels] == [False, True]
    assert r.levels[1].candidates == r.levels[0].candidates + r.levels[1].exists
    off = infer(TWOPHASE, levels=((1, 2),), exists=False, four="off")
    assert off.verdict == "not inductive" and len(off.levels) == 1


def test_a_level_of_more_literals_than_the_enumeration_has_is_refused():
    """The clause enumeration stops at four literals: a level asking for five
    must say so, not run as four (a (2, 4) level once gave (2, 3)'s clauses)."""
    with pytest.raises(ValueError, match="clauses of 1 to 4 literals are enumerated, not 5"):
        infer(TWOPHASE, levels=((1, 5),))


@pytest.mark.parametrize("line,why", [('exists = "no"', "[prove.infer] exists must be true or false"),
                                      ('four = "some"', "[prove.infer] four must be true (clauses of four")])
def test_exists_and_four_in_the_infer_table_are_checked(line, why, tmp_path, capsys):
    model = tmp_path / "m.toml"
    model.write_text(TWOPHASE.read_text() + f'\n[prove.infer]\n{line}\n')
    r = txncheck(capsys, "prove", model, "--infer")
    assert r.returncode == 2 and why in r.stderr, r.stderr


def test_a_property_a_sample_violates_is_a_violation(capsys):
    r = txncheck(capsys, "prove", ROOT / "models" / "classic" / "diehard.toml", "--infer")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "violates NotSolved in 7 states" in r.stdout and "verdict: violation" in r.stdout


def test_infer_refuses_what_it_does_not_use(capsys):
    assert "drop --bounded" in txncheck(capsys, "prove", TWOPHASE, "--infer", "--bounded", "3").stderr
    r = txncheck(capsys, "prove", TWOPHASE, "--write")
    assert r.returncode == 2 and "give --infer too" in r.stderr


# -- existential candidates ------------------------------------------------------------------------------


def test_existential_candidates_are_those_every_sample_shows():
    """TwoPhase's sampled states (rm=3): a committed TM has prepared RMs, at
    least two of them (`exists` with two distinct elements); an RM the TM
    counts as prepared never has a second one beside it, so that `exists`
    is no candidate, nor one a sample refutes (an unguarded `exists`: the
    initial state has no prepared RM). Sampling TwoPhase is fast (288
    states at rm=3, 56 at rm=2)."""
    from txncheck.checker.symbolic.exists_lemmas import candidates
    from txncheck.checker.symbolic.infer import _values
    from txncheck.checker.symbolic.samples import Codes, sample

    m = load_model(TWOPHASE)
    spec = m.instantiate()
    codes = Codes()
    instances, violated = sample(m, spec, codes)
    assert violated is None
    sorts = Sorts(spec.schema)
    found, tried = candidates(spec.schema, sorts, instances, codes, _values(spec.schema, instances, codes))
    texts = {x.text for x in found}
    assert 'tmState = "committed" -> (exists RE in RM: tmPrepared[RE])' in texts
    assert 'tmState = "committed" -> (exists RE, RE2 in RM: RE != RE2 & tmPrepared[RE] & tmPrepared[RE2])' in texts
    assert "forall R in RM: tmPrepared[R] -> (exists RE, RE2 in RM: RE != RE2 & tmPrepared[RE] & " \
           "tmPrepared[RE2])" not in texts
    assert not any(t.startswith("exists") for t in texts)
    assert 0 < len(found) <= tried
    for x in found:     # each parses and compiles in the lemma language
        compile_text(x.text, spec.schema)


# -- clauses of four literals ----------------------------------------------------------------------------

SWITCHES = """
import z3
from txncheck.spec.api import Spec
from txncheck.spec.schema import Bool

BAD = (True, True, True, False)

class Switches(Spec):
    \"\"\"Four switches, flipped one at a time, never into BAD; an alarm rings in
    BAD, so it never rings. Quiet needs !x1 | !x2 | !x3 | x4: each clause of
    three of those literals is false in a reachable state.\"\"\"
    name = "switches"
    def setup(self):
        sc = self.schema
        for i in range(1, 5):
            sc.var(f"x{i}", Bool())
        self.invariants["Quiet"] = z3.Not(sc.var("alarm", Bool()))
    def init_states(self):
        yield (False,) * 5
    def next(self, s):
        xs, alarm = s[:4], s[4]
        for i in range(4):
            t = xs[:i] + (not xs[i],) + xs[i + 1:]
            if t != BAD:
                yield ("Flip", (("i", i + 1),)), t + (alarm,)
        if xs == BAD:
            yield ("Ring", ()), xs + (True,)
    def observe(self, s):
        return {"x1": s[0], "x2": s[1], "x3": s[2], "x4": s[3], "alarm": s[4]}
"""


@pytest.fixture
def switches(tmp_path):
    (tmp_path / "switches.py").write_text(SWITCHES)
    model = tmp_path / "switches.toml"
    model.write_text('spec = "switches.py:Switches"\nproperties = ["Quiet"]\n\n[prove]\ndead = ["Ring"]\n')
    return model


def test_a_lemma_of_four_literals_joins_when_a_cti_asks_for_it(switches, capsys):
    """No clause of three literals proves Quiet; the last level holds back its
    one clause of four literals until the CTI from x1 x2 x3 !x4 (which it
    rules out) asks, then proves with it; given every clause at once
    (`four = "all"`) it proves the same; without the level it cannot. The
    lemma written back proves plainly."""
    r = infer(switches)
    assert r.verdict == "proved" and [x.text for x in r.lemmas] == ["x1 & x2 & x3 -> x4"]
    last = r.levels[-1]
    assert (last.variables, last.literals, last.held, last.joined, last.verdict) == (2, 4, 1, 1, "inductive")
    assert all(lv.verdict == "property falls" for lv in r.levels[:-1])
    every = infer(switches, four="all")
    assert every.verdict == "proved" and [x.text for x in every.lemmas] == ["x1 & x2 & x3 -> x4"]
    assert every.levels[-1].held == 0
    off = infer(switches, four="off")
    assert off.verdict == "not inductive" and max(lv.literals for lv in off.levels) == 3
    switches.write_text(switches.read_text() + "\n[prove.infer]\nfour = false\n")
    r = txncheck(capsys, "prove", switches, "--infer", "--write", "--quiet")
    assert r.returncode == 3 and "verdict: not inductive" in r.stdout, r.stdout
    switches.write_text(switches.read_text().replace("four = false", "four = true"))
    r = txncheck(capsys, "prove", switches, "--infer", "--write", "--quiet")
    assert r.returncode == 0 and "(1 of four literals held back, 1 joined at CTIs)" in r.stdout, r.stdout
    assert prove_model(switches).verdict == "proved"


def test_four_literal_clauses_are_every_minimal_one():
    """The enumeration of four literals (row masks narrowing the fourth, the
    rows shuffled) against every quadruple, on random tables with
    undefined entries: the clauses that hold on every row, none of whose
    three-literal parts does."""
    import itertools
    import random

    from txncheck.checker.symbolic.candidates import _four

    class Never:
        def covers(self, clause):
            return False

    rng = random.Random(7)
    for _ in range(20):
        atoms, rows = rng.randint(4, 9), rng.randint(5, 60)
        F = [0] * (2 * atoms)
        for a in range(atoms):
            for row in range(rows):
                t = rng.random()
                if t < 0.45:        # atom false on the row: its positive literal is false there
                    F[2 * a] |= 1 << row
                elif t < 0.9:
                    F[2 * a + 1] |= 1 << row
        useful = [lit for lit in range(len(F)) if F[lit] and F[lit ^ 1]]
        got, _ = _four(F, useful, rows, Never())

        def false_together(lits):
            x = -1
            for lit in lits:
                x &= F[lit]
            return x

        want = [q for q in itertools.combinations(useful, 4)
                if not false_together(q) and all(false_together(t) for t in itertools.combinations(q, 3))]
        assert sorted(got) == want


def test_houdini_on_the_cone_agrees_with_houdini():
    """Asking only about the properties' cone (the last level's Houdini)
    gives Houdini's verdict: TwoPhase's 51 inductive candidates stay
    inductive, the cone a part of them that proves; the strongest inductive
    set of its clauses of two literals still lets the properties fall."""
    from txncheck.checker.symbolic.houdini import Induction, houdini, initial_checker

    def both(r, names):
        props = r.model.selected_properties(r.system.relation.spec)
        formulas = {x.name: compile_text(x.text, r.system.relation.spec.schema) for x in names}
        out = []
        for cone in (False, True):
            ind = Induction(r.system, props, formulas, {}, deadlock=r.model.deadlock)
            out.append(houdini(ind, list(formulas), initial_checker(r.system, formulas), cone=cone))
        return out

    full = infer(TWOPHASE)
    whole, cone = both(full, full.inductive)
    assert (whole.verdict, cone.verdict) == ("inductive", "inductive") and len(whole.kept) == 51
    assert cone.kept and set(cone.kept) < set(whole.kept)
    weak = infer(TWOPHASE, levels=((1, 2),), exists=False, four="off")
    whole, cone = both(weak, weak.strongest)
    assert (whole.verdict, cone.verdict) == ("property falls", "property falls")


@pytest.mark.slow
def test_paxos_commit_with_its_messages_observed_is_proved_from_no_lemma(tmp_path, capsys):
    """TCConsistent of PaxosCommit (its messages observed: examples/
    paxos_commit/tcconsistent.toml) needs clauses of four literals over two
    acceptors besides the existentials; --infer finds them and the lemmas
    written back prove plainly (about four CPU minutes)."""
    d = tmp_path / "paxos_commit"
    shutil.copytree(ROOT / "examples" / "paxos_commit", d)
    model = d / "tcconsistent.toml"
    assert "[prove" not in model.read_text()
    r = txncheck(capsys, "prove", model, "--infer", "--write", "--json")
    out = json.loads(r.stdout)
    assert r.returncode == 0 and out["verdict"] == "proved" and out["written"] == str(model)
    *before, last = out["levels"]
    assert all(lv["verdict"] == "property falls" for lv in before)
    assert (last["literals"], last["verdict"]) == (4, "inductive") and last["joined"] > 0
    plain = prove_model(model)
    assert plain.verdict == "proved" and plain.lemmas == [x["name"] for x in out["lemmas"]]
