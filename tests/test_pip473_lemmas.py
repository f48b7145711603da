"""PIP-473's lemmas as predicates of the state (spec/pip473/lemmas.py,
`Spec.lemmas`): each holds in every reachable state of small `fixed` models
and on random walks at the standard bounds; they are the lemmas the
hand-written relation states (spec/pip473/symbolic/relation_lemmas.py),
until it goes. test_pip473_derived_guards.py proves a small model with
them from the relation derived from the spec's code (ADR 0011).

docs/pip473.md's lemma table and its counts of lemmas are the model files'
`[prove]` lemmas: the table has a row for each lemma of
models/pip473/fixed-standard.toml, and a row more only for a lemma another
PIP-473 model's `[prove]` table adds; each "<N> lemmas" in the text is the
number the model files give. The doc counts the hand-written relation's
lemmas: the ones only the derived relation needs (their row's last column
says "derived relation") it names apart, as "two that only the derived
relation needs"."""

from __future__ import annotations

import re
import tomllib

import pytest

from txncheck.checker.model import load_model
from txncheck.checker.symbolic.agreement import reachable
from txncheck.checker.symbolic.walks import biased_walks, walk
from txncheck.spec.pip473.spec import Pip473

from .helpers import MODELS, ROOT

PIP473 = MODELS / "pip473"
# two txns: t1's send and t2's cumulative ack on one segment; clients commit, timeouts abort
TWO_TXNS = {"txns": 2, "writes": "t1:0", "acks": "t2:s1:1:cum", "reshape": "none", "crashes": 0, "failovers": 0,
            "decisions": "commit", "client": "stock", "recovery": "steps"}


def spec_of(stem):
    return load_model(PIP473 / f"{stem}.toml").instantiate()


def false_lemmas(spec, states, most=None) -> tuple[int, dict]:
    """(distinct states checked, {lemma: a state where it is false})."""
    seen: set = set()
    bad: dict = {}
    for s in states:
        if s in seen:
            continue
        if most is not None and len(seen) >= most:
            break
        seen.add(s)
        for name, holds in spec.lemmas.items():
            if name not in bad and not holds(s):
                bad[name] = s
    return len(seen), bad


@pytest.mark.parametrize("spec, states", [
    (lambda: spec_of("append-before-op-fixed"), 833),        # a send, a crash and the buffer's recovery
    (lambda: spec_of("acks-across-recovery-fixed"), 3605),   # an ack across a crash and the store's replay
    (lambda: Pip473("fixed", **TWO_TXNS), 5126),
], ids=["append-before-op-fixed", "acks-across-recovery-fixed", "two-txns"])
def test_every_lemma_holds_in_every_reachable_state_of_a_small_fixed_model(spec, states):
    spec = spec()
    n, bad = false_lemmas(spec, reachable(spec))
    assert n == states and not bad, f"false: {sorted(bad)}"


@pytest.mark.parametrize("stem", ["append-before-op-fixed", "fixed-standard", "fixed-standard-unload",
                                  "tb-recovery-publish-fixed", "late-ack-merged", "gc-forced-delete"])
def test_the_spec_states_the_hand_written_relations_lemmas(stem):
    """The same names at the same variant and bounds (a flag's lemma only
    where the flag is on; the derived relation's own two are True there).
    This goes with the hand-written relation."""
    from txncheck.spec.pip473.symbolic.relation import Pip473Relation
    from txncheck.spec.pip473.symbolic.relation_lemmas import lemmas

    spec = spec_of(stem)
    assert set(spec.lemmas) == set(lemmas(Pip473Relation(spec)))


@pytest.mark.slow
@pytest.mark.parametrize("stem", ["fixed-standard", "fixed-standard-unload"])
def test_every_lemma_holds_on_random_walks_at_the_standard_bounds(stem):
    """20,000 distinct states of the standard model's walks (and with its
    unload: ClosedSendsAtAnUnloadedSegment), half uniform, half biased
    toward rare steps (crashes, failovers, GC sweeps)."""
    spec = spec_of(stem)
    for states in (walk(spec, 10**9, seed=473, depth=60), biased_walks(spec, 10**9, seed=473, depth=60)):
        n, bad = false_lemmas(spec, states, most=10_000)
        assert n == 10_000 and not bad, f"false: {sorted(bad)}"


# -- docs/pip473.md's lemma table and counts ---------------------------------------------

DOC = ROOT / "docs" / "pip473.md"
HEADER = "| lemma | in the protocol's terms | without it, a CTI breaks |"
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def prove_lemmas(stem: str) -> list[str]:
    return tomllib.loads((MODELS / "pip473" / f"{stem}.toml").read_text()).get("prove", {}).get("lemmas", [])


def lemma_table(text: str) -> dict[str, str]:
    """The table's rows: lemma -> its last column (the CTI without it)."""
    lines = text.splitlines()
    assert lines.count(HEADER) == 1, f"docs/pip473.md has {lines.count(HEADER)} lemma tables"
    rows = {}
    for line in lines[lines.index(HEADER) + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        assert cells[0] not in rows, f"{cells[0]} has two rows"
        rows[cells[0]] = cells[-1]
    return rows


def number(word: str) -> int:
    return int(word) if word.isdigit() else WORDS[word]


# each sentence of docs/pip473.md that counts lemmas; its groups name the numbers it gives:
# `standard` and `unload` the hand-written relation's lemmas of fixed-standard.toml and of
# fixed-standard-unload.toml, `derived` those only the derived relation needs
COUNTS = [
    (r"the (?P<standard>\d+) lemmas the model file's `\[prove\]` table names "
     r"\(and (?P<derived>\w+) that only the derived relation needs"),
    (r"(?P<unload>\d+) lemmas \(the standard (?P<standard>\d+), of which \w+ learnt the closed sends, "
     r"and ClosedSendsAtAnUnloadedSegment\)"),
]


def count_problems(text: str) -> list[str]:
    """Where docs/pip473.md's counts of lemmas are not the model files'."""
    standard, unload = prove_lemmas("fixed-standard"), prove_lemmas("fixed-standard-unload")
    derived = [n for n, cti in lemma_table(text).items() if cti.startswith("derived relation")]
    want = {"standard": len(standard) - len(derived), "unload": len(unload) - len(derived), "derived": len(derived)}
    flat = " ".join(text.split())
    problems, counted = [], set()
    for pattern in COUNTS:
        found = list(re.finditer(pattern, flat))
        if len(found) != 1:
            problems.append(f"{len(found)} sentences match {pattern!r}, not one")
        for m in found:
            counted.update(range(*m.span()))
            problems += [f"{m.group(0)!r}: {k} is {v}, the model files say {want[k]}"
                         for k, v in m.groupdict().items() if number(v) != want[k]]
    problems += [f"{m.group(0)!r} at character {m.start()}: a count of lemmas this test does not check"
                 for m in re.finditer(r"\b\d+ lemmas\b", flat) if m.start() not in counted]
    return problems


def table_problems(text: str) -> list[str]:
    """Where the table's lemmas are not fixed-standard.toml's (and the extras other models add)."""
    rows = lemma_table(text)
    standard = set(prove_lemmas("fixed-standard"))
    others = {n for p in (MODELS / "pip473").glob("*.toml") for n in prove_lemmas(p.stem)} - standard
    problems = [f"{n}: in fixed-standard.toml's [prove] lemmas, no row" for n in sorted(standard - rows.keys())]
    problems += [f"{n}: a row, in no PIP-473 model's [prove] lemmas" for n in sorted(rows.keys() - standard - others)]
    problems += [f"{n}: not a lemma of the standard model, but its row names a CTI there ({rows[n]})"
                 for n in sorted(others & rows.keys()) if not rows[n].startswith("(")]
    return problems


def test_the_lemma_table_names_the_standard_models_lemmas():
    assert table_problems(DOC.read_text()) == []


def test_the_counts_of_lemmas_are_the_model_files():
    assert count_problems(DOC.read_text()) == []


def test_a_row_or_a_count_that_drifts_is_found():
    text = DOC.read_text()
    row = next(line for line in text.splitlines() if line.startswith("| CrashBudget |"))
    assert table_problems(text.replace(row + "\n", "")) == [
        "CrashBudget: in fixed-standard.toml's [prove] lemmas, no row"]
    assert count_problems(text.replace("47 lemmas", "48 lemmas"))[0].endswith("unload is 48, the model files say 47")
    assert count_problems(text + "\nIt needs 12 lemmas.\n")[0].startswith("'12 lemmas'")
