"""`txncheck prove MODEL --infer`: the model's properties proved with lemmas
inferred, not written.

1. If the properties are inductive alone, that is the proof (no lemma).
2. Sample reachable states: the bfs engine's search of the model and of
   smaller bounds (samples.py).
3. By levels, DistAI's order (variables per quantified sort, literals per
   clause: LEVELS): enumerate the strongest clauses true in every sample
   (vocabulary.py, candidates.py), write each as a lemma (clause_lemmas.py)
   and compile it back from its text (so the lemma proved is the one
   printed), run Houdini (houdini.py). Then the last level's clauses with
   the existential candidates (exists_lemmas.py); then FOUR: clauses of up
   to four literals and the existentials, those of four held back until a
   CTI asks for them (held_clauses.py), Houdini asked about the
   properties' cone only.
4. When a level's set is inductive: keep only the lemmas the proof needs,
   and prove the properties with them as `prove` would (the final check).
5. When no level gives a proof: the strongest inductive set of candidates
   without assuming the properties, the properties' CTI under it, and what
   the vocabulary did not cover.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ...spec.schema import Bool, Int
from ..errors import ModelError
from ..invariants import check_sanity
from ..model import Model, load_model
from .candidates import MAX_LITERALS, clauses, truth_table
from .clause_lemmas import Lemma, Writer, canonical, renamed
from .exists_lemmas import candidates as existential_candidates
from .held_clauses import Held
from .houdini import Induction, houdini, initial_checker, needed
from .induction import Proof, prove
from .lemma_z3 import compile_text
from .load import relation_for
from .run import prove_model
from .samples import PER_INSTANCE, TOTAL, Codes, Instance, Violated, sample
from .system import System
from .vocabulary import Sorts, atoms

LEVELS = ((1, 2), (1, 3), (2, 3), (3, 3))    # (variables per quantified sort, literals per clause)
FOUR = (2, 4)           # the last level: clauses of four literals, with the existentials (held_clauses.py)
FOURS = ("ctis", "all", "off")     # its clauses of four literals: joined when a CTI asks, all at once, none


@dataclass
class Level:
    variables: int
    literals: int
    atoms: int = 0
    tried: int = 0
    candidates: int = 0          # clauses true in every sample, up to renaming
    kept: int = 0                # after Houdini
    ctis: int = 0
    exists: int = 0              # existential candidates among them (exists_lemmas.py; the last two levels)
    held: int = 0                # clauses of four literals held back until a CTI asks (held_clauses.py)
    joined: int = 0              # ... of which a CTI asked for
    verdict: str = ""
    cti: tuple | None = None     # the step that broke only the properties: (clause, action)
    seconds: float = 0.0


@dataclass
class Inference:
    model: Model
    system: System
    properties: list[str]
    verdict: str = "unknown"     # prove's: "proved", "not proved", "not inductive", "violation", "unknown"
    lemmas: list[Lemma] = field(default_factory=list)
    given: list[str] = field(default_factory=list)           # the given lemmas the proof still needs
    inductive: list[Lemma] = field(default_factory=list)     # the level's whole inductive set
    levels: list[Level] = field(default_factory=list)
    samples: list[Instance] = field(default_factory=list)
    sorts: Sorts | None = None
    skipped: list[str] = field(default_factory=list)
    violated: Violated | None = None
    proof: Proof | None = None   # the final check's induction (or, failing, the CTI under the strongest set)
    report: Any = None           # the final check: `prove`'s report (checker/symbolic/run.py)
    strongest: list[Lemma] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)
    unknown: str = ""
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return {"proved": 0, "violation": 1}.get(self.verdict, 3)


def infer(path: str | Path | Model, *, timeout_ms: int = 0, levels=LEVELS, per_instance: int = PER_INSTANCE,
          total: int = TOTAL, given: dict | None = None, explain: bool = True, exists: bool = True,
          four: str = "ctis", minimise: bool = True, say: Callable[[str], None] = lambda _: None) -> Inference:
    """`given`: the relation's lemmas (name -> formula over its state schema)
    assumed while inferring, then kept only where the inferred ones cannot
    replace them. `explain`: when no level proves, look for the strongest
    inductive set and the properties' CTI under it (one more Houdini).
    `exists`: when no level proves, one more with the last level's clauses
    and the existential candidates (exists_lemmas.py). `four`: when still
    none proves, one more (FOUR) with clauses of up to four literals and
    the existentials, those of four held back until a CTI asks ("ctis",
    held_clauses.py) or all given at once ("all"), or none ("off")."""
    if any(not 1 <= k <= MAX_LITERALS for _, k in levels):
        raise ValueError(f"clauses of 1 to {MAX_LITERALS} literals are enumerated, not {max(k for _, k in levels)}")
    m = path if isinstance(path, Model) else load_model(path)
    spec = m.instantiate()
    props = m.selected_properties(spec)
    check_sanity(spec.schema, props, accept_vacuous=m.raw.get("vacuous", ()))
    system = System(relation_for(spec))
    schema = spec.schema          # the lemmas' vocabulary: the properties'
    out = Inference(m, system, list(props))
    given = dict(given or {})
    clock = _Clock(out.seconds)

    with clock("prove"):
        alone = prove(system, props, given, timeout_ms)
    if alone.verdict in ("violation", "unknown"):
        out.verdict, out.proof, out.unknown = alone.verdict, alone, alone.unknown
        say(f"the properties alone: {alone.verdict}")
        return out
    if alone.verdict == "proved" and not given:
        say("the properties are inductive alone")
        with clock("prove"):
            _final(out, m, [], timeout_ms)
        return out
    if alone.cti is not None:
        say(f"the properties alone are not inductive ({alone.cti.clause} at {alone.cti.action[0]}): inferring lemmas")

    codes = Codes()
    with clock("sample"):
        out.samples, out.violated = sample(m, spec, codes, per_instance=per_instance, total=total, say=say)
    if out.violated is not None:
        out.verdict = "violation"
        return out
    out.sorts = sorts = Sorts(schema, _asked_sorts(m, schema))
    out.skipped = sorts.skipped(schema)
    values = _values(schema, out.samples, codes)
    formulas_of: dict = {}
    asked = m.raw.get("prove", {}).get("infer", {})
    exists = exists and asked.get("exists", True)
    if four not in FOURS:
        raise ValueError(f"four is one of {', '.join(FOURS)}, not {four!r}")
    if four != "off" and asked.get("four", True) is not True:      # the model file's, over the default
        four = "off" if asked["four"] is False else "all"
    plan = [(v, k, "clauses") for v, k in levels] + [(*levels[-1], "exists")] * bool(exists and levels) \
        + [(*FOUR, "four")] * (four != "off")
    lemmas: list[Lemma] = []
    found_ex: list[Lemma] = []
    tables: dict = {}
    held = None
    for variables, literals, kind in plan:
        lv = Level(variables, literals)
        out.levels.append(lv)
        t0 = time.process_time()
        if kind == "exists":     # the last level's clauses and the existential candidates (exists_lemmas.py)
            with clock("enumerate"):
                found_ex, tried = existential_candidates(schema, sorts, out.samples, codes, values)
            if not found_ex:
                out.levels.pop()
                continue
            lemmas = lemmas + found_ex
            lv.atoms, lv.tried, lv.exists = out.levels[-2].atoms, tried, len(found_ex)
            lv.candidates = len(lemmas)
            say(f"level {len(out.levels)} (level {len(out.levels) - 1}'s clauses and existentials): "
                f"{tried:,} guarded existentials tried, {len(found_ex):,} hold in every sample")
        else:
            with clock("enumerate"):
                vocab = atoms(schema, sorts, variables, values)
                if variables not in tables:
                    tables[variables] = truth_table(vocab, out.samples, sorts, variables, schema, codes)
                table = tables[variables]
                found, lv.tried = clauses(table, schema, codes, values, literals)
                found = canonical(found, vocab, sorts, variables)
                writer = Writer(schema, sorts, vocab)
                hold = kind == "four" and four == "ctis"
                lemmas = [writer.lemma(c) for c in found if not hold or len(c) < 4]
                if kind == "four":
                    lemmas += found_ex
                    lv.exists = len(found_ex)
                    if hold:
                        held = Held([c for c in found if len(c) == 4], vocab, sorts, variables, schema, codes,
                                    writer, lambda x: compile_text(x.text, schema))
                        lv.held = len(held.left)
            lv.atoms, lv.candidates = len(vocab), len(lemmas) + lv.held
            say(f"level {len(out.levels)} ({variables} variable{'s' if variables > 1 else ''} per sort, "
                f"{literals} literals{', and existentials' if lv.exists else ''}): {len(vocab)} atoms, "
                f"{lv.tried:,} clauses tried, {lv.candidates:,} hold in every sample ({table.rows:,} distinct "
                f"rows){f'; {lv.held:,} of four literals held back until a CTI asks' if lv.held else ''}")
        with clock("compile"):
            formulas = {x.name: compile_text(x.text, schema) for x in lemmas}
        formulas_of = {x.name: (x, formulas[x.name]) for x in lemmas}
        with clock("houdini"):
            ind = Induction(system, props, formulas, given, timeout_ms, deadlock=m.deadlock)
            grow = None if held is None else _joining(held, ind, formulas, formulas_of)
            h = houdini(ind, list(formulas), initial_checker(system, formulas, timeout_ms), say, grow,
                        cone=kind == "four")
        lv.kept, lv.ctis, lv.verdict, lv.joined = len(h.kept), h.ctis, h.verdict, h.joined
        lv.cti = (h.cti.clause, h.cti.action[0]) if h.cti is not None else None
        lv.seconds = time.process_time() - t0
        if h.verdict == "unknown":
            out.verdict, out.unknown = "unknown", h.unknown
            return out
        if h.verdict == "inductive":
            _keep_needed(out, formulas_of, h.kept, given, props, timeout_ms, clock, say, minimise)
            return out
    out.verdict = "not inductive"
    if explain:
        with clock("houdini"):
            _explain_failure(out, formulas_of, props, timeout_ms, values, say)
    return out


def _joining(held: Held, ind: Induction, formulas: dict, formulas_of: dict):
    """Houdini's `grow` for the held-back clauses: those that join are
    candidates like the others from then on (the initial-state check, the
    minimisation, the strongest set of a failure)."""
    def grow(model):
        more = held.grow(ind.at_f, model)
        formulas.update(more)
        formulas_of.update({x.name: (x, more[x.name]) for x in held.joined[len(held.joined) - len(more):]})
        return more
    return grow


def _keep_needed(out: Inference, formulas_of: dict, kept: list[str], given: dict, props, timeout_ms: int,
                 clock, say, minimise: bool = True) -> None:
    """The fewest of the inductive set the proof needs (the given lemmas
    tried without first), or with `minimise=False` all of it, proved as
    `prove` proves a model file's lemmas: from their text."""
    system = out.system
    say(f"{len(kept)} candidates{' with the given lemmas' if given else ''} and the properties are inductive")
    keep = [*given, *kept]
    if minimise:
        with clock("minimise"):
            ind = Induction(system, props, {n: formulas_of[n][1] for n in kept}, given, timeout_ms,
                            deadlock=out.model.deadlock)
            if given:       # the given lemmas become candidates to drop, tried first
                ind.fixed = [n for n in ind.fixed if n not in given]
            keep = needed(ind, keep, say, first=tuple(given))
    out.inductive = [formulas_of[n][0] for n in kept]
    out.lemmas = renamed([formulas_of[n][0] for n in keep if n in formulas_of])
    out.given = [n for n in keep if n in given]
    with clock("prove"):
        _final(out, out.model, out.given, timeout_ms)
    assert out.proof is not None, "_final proves"
    if out.proof.verdict != "proved":   # Houdini and prove disagree: a bug, never a verdict
        raise RuntimeError(f"the inferred lemmas are inductive to Houdini, but prove says {out.proof.verdict}")


def _final(out: Inference, m: Model, given: list[str], timeout_ms: int) -> None:
    """The model proved as `txncheck prove` proves it, with the inferred
    lemmas as its [prove.formulas] (from their text) and `given` (names of
    the relation's lemmas) as its lemmas, in place of those the file names:
    so `--infer`'s verdict means what `prove`'s does (the invariant proved,
    and everything else the model asks decided), and the lemmas it prints
    prove as they will once written."""
    table = {k: v for k, v in m.raw.get("prove", {}).items() if k not in ("lemmas", "lemmas_from", "without")}
    table.update(lemmas=list(given), formulas={x.name: x.text for x in out.lemmas})
    out.report = prove_model(replace(m, raw={**m.raw, "prove": table}), timeout_ms=timeout_ms)
    out.proof, out.verdict = out.report.proof, out.report.verdict


def _explain_failure(out: Inference, formulas_of: dict, props, timeout_ms: int, values: dict, say) -> None:
    """The strongest inductive set of the last level's candidates (the
    properties not assumed), and the properties' CTI under it."""
    system = out.system
    formulas = {n: f for n, (_, f) in formulas_of.items()}
    ind = Induction(system, {}, formulas, {}, timeout_ms)
    h = houdini(ind, list(formulas), initial_checker(system, formulas, timeout_ms), say)
    kept = h.kept if h.verdict == "inductive" else []
    out.strongest = [formulas_of[n][0] for n in kept]
    out.proof = prove(system, {**props, **{n: formulas[n] for n in kept}}, {}, timeout_ms)
    out.verdict = "not inductive" if out.proof.verdict == "not inductive" else out.proof.verdict
    cti = out.proof.cti
    most = max(lv.literals for lv in out.levels)
    wide, at_most = max(lv.variables for lv in out.levels), max(lv.variables for lv in out.levels
                                                                if lv.literals == most)
    also = f", or of {most} over more than {at_most}" if at_most < wide else ""
    out.hints.append(f"a lemma of more than {most} literals or {wide} variables per sort{also} (the largest "
                     f"templates tried), or an existential beyond the two templates (docs/guide.md, "
                     f"\"Existentials\")")
    if out.skipped:
        out.hints.append(f"a lemma about {', '.join(out.skipped)}, which the templates leave out "
                         f"(an argument of a sort of more than 16 elements)")
    if cti is not None:
        novel = [f"{n}[{','.join(k)}] = {v}" if k else f"{n} = {v}"
                 for (n, k), v in cti.before.items() if _novel(system, n, v, values)]
        if novel:
            out.hints.append("state 1 has values no sampled state shows: " + ", ".join(novel[:6])
                             + (" ..." if len(novel) > 6 else "") + " (a lemma that rules them out)")
    idx = ", ".join(out.sorts.index) if out.sorts else ""
    out.hints.append(f"quantified sorts: {idx or 'none'}; name others in the model file's "
                     f"[prove.infer] sorts")


def _novel(system: System, name: str, v, values: dict) -> bool:
    seen = values.get(name)
    sym = system.relation.spec.schema.symbols.get(name)
    if seen is None or sym is None or isinstance(sym.type, Bool):
        return False
    return v not in seen


def _asked_sorts(m: Model, schema) -> tuple[str, ...] | None:
    asked = m.raw.get("prove", {}).get("infer", {}).get("sorts")
    if asked is None:
        return None
    if not isinstance(asked, list) or not all(isinstance(s, str) for s in asked):
        raise ModelError(f"{m.path}: [prove.infer] sorts must be a list of sort names")
    for s in asked:
        if s not in schema.sorts:
            raise ModelError(f"{m.path}: [prove.infer] sorts: no sort {s!r} in the spec's schema "
                             f"(sorts: {', '.join(schema.sorts)})")
    return tuple(asked)


def _values(schema, instances: list[Instance], codes: Codes) -> dict[str, list]:
    """Per symbol, the values its cells take in the samples, sorted."""
    out: dict[str, set] = {}
    for inst in instances:
        by_symbol: dict[str, list[int]] = {}
        for (name, _), j in inst.columns.items():
            by_symbol.setdefault(name, []).append(j)
        for name, cols in by_symbol.items():
            seen = np.unique(inst.matrix[:, cols])
            out.setdefault(name, set()).update(int(x) for x in seen)
    result = {}
    decode = {c: v for v, c in codes.of.items()}
    for name, vs in out.items():
        typ = schema.symbols[name].type if name in schema.symbols else None
        if isinstance(typ, (Int, Bool)):
            result[name] = sorted(vs)
        else:
            result[name] = sorted(decode[c] for c in vs)
    return result


class _Clock:
    """CPU seconds per phase, summed into a dict."""

    def __init__(self, into: dict) -> None:
        self.into = into

    @contextmanager
    def __call__(self, phase: str):
        t0 = time.process_time()
        try:
            yield
        finally:
            self.into[phase] = self.into.get(phase, 0.0) + time.process_time() - t0

