"""`prove_model`: a model file's properties proved by induction, or checked
to a depth; what `txncheck prove` prints and returns.

"proved" (exit 0) means every property the model asks for was decided
true at its bounds: its invariants are inductive with the lemmas; no action
is dead under that invariant but those the model names dead by design;
with `deadlock = true`, no state of the invariant is stuck; each witness
is reached by a path of the spec's own steps; and a hand-written relation
has a recorded, current agreement with the spec (agreement_run.py).
Anything else the model asks that is not decided (a [temporal] property,
an empty property list) leaves the verdict "not proved" (exit 3), naming
it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import z3

from ...spec.api import Spec
from ..errors import ModelError
from ..invariants import check_sanity, compile_predicate
from ..itf import write_trace
from ..model import Model, load_model
from .agreement_run import agreement_digest, derived
from .bounded import Bounded, bounded
from .induction import Proof, prove
from .load import relation_for
from .model_lemmas import written_lemmas
from .system import System, show_action
from .vacuity import Vacuity, check_vacuity, is_pattern, matches
from .walks import biased_walks

WITNESS_WALK_STATES = 20_000   # states of biased walks spent looking for the model's witnesses,
WITNESS_DEPTH = 30             # then the steps of bounded symbolic search for those the walks missed


@dataclass
class ProveReport:
    model: Model
    system: System
    properties: list[str]
    lemmas: list[str]
    strengthening: list[str] = field(default_factory=list)   # other properties proved as further clauses
    proof: Proof | None = None
    bounded: Bounded | None = None
    trace_file: str | None = None
    cti_file: str | None = None   # where `prove` wrote the counterexample to induction, if anywhere
    vacuity: Vacuity | None = None
    witnesses: dict[str, str | None] = field(default_factory=dict)   # name -> how it was reached, or None
    unproved: list[str] = field(default_factory=list)               # what the model asks that was not decided

    @property
    def verdict(self) -> str:
        if self.proof is None:
            assert self.bounded is not None, "a report holds a proof or a bounded check"
            return self.bounded.verdict
        if self.proof.verdict != "proved":
            return self.proof.verdict
        return "not proved" if self.unproved else "proved"

    @property
    def exit_code(self) -> int:
        return {"proved": 0, "violation": 1}.get(self.verdict, 3)

    def to_json(self) -> dict[str, Any]:
        spec = self.system.relation.spec
        out: dict[str, Any] = {"model": str(self.model.path), "spec": spec.name, "variant": spec.variant,
                               "bounds": dict(spec.constants), "properties": self.properties,
                               "lemmas": self.lemmas, "strengthening": self.strengthening,
                               "verdict": self.verdict, "exit_code": self.exit_code}
        p, b, v = self.proof, self.bounded, self.vacuity
        if p is not None:
            out.update(mode="induction", clauses=len(p.clauses), queries=p.queries + (v.queries if v else 0),
                       base_seconds=round(p.base_seconds, 3), step_seconds=round(p.step_seconds, 3),
                       unknown=p.unknown or None, not_proved=self.unproved)
            if v is not None:
                out.update(dead_actions=[show_action(a) for a in v.dead], deadlock=v.deadlock,
                           vacuity_seconds=round(v.seconds, 3))
            if self.witnesses:
                out["witnesses"] = self.witnesses
            if p.cti is not None:
                out["cti"] = {"clause": p.cti.clause, "action": p.cti.action[0],
                              "params": dict(p.cti.action[1]), "failing": p.cti.failing}
            if p.initial is not None:
                out["failing"] = p.failing
        if b is not None:
            out.update(mode="bounded", depth=b.depth, seconds=round(b.seconds, 3), unknown=b.unknown or None)
            if b.verdict == "violation":
                out["violation"] = {"property": b.violated, "kind": b.kind, "length": b.length,
                                    "trace": self.trace_file}
        return out


def model_lemmas(m: Model) -> tuple[list[str], list[str] | None]:
    """(lemma names, strengthening properties) a model's [prove] table asks
    for: those of the model file `lemmas_from` names (a sibling's stem: its
    lemmas, and its properties as further clauses), then its own `lemmas`,
    less those its `without` names."""
    table = m.raw.get("prove", {})
    names: list[str] = []
    props: list[str] | None = []
    source = table.get("lemmas_from")
    if source is not None:
        other = m.path.parent / f"{source}.toml"
        if not other.is_file():
            raise ModelError(f"{m.path}: [prove] lemmas_from names {source!r}, but there is no {other}")
        theirs = load_model(other)
        if "lemmas_from" in theirs.raw.get("prove", {}):
            raise ModelError(f"{m.path}: [prove] lemmas_from names {source!r}, which takes its lemmas from "
                             "another model itself (one step only)")
        if theirs.spec_name != m.spec_name:
            raise ModelError(f"{m.path}: [prove] lemmas_from names {source!r}, a model of another spec")
        names += theirs.raw.get("prove", {}).get("lemmas", [])
        props = theirs.properties   # None: all of the spec's
    names += [n for n in table.get("lemmas", []) if n not in names]
    return [n for n in names if n not in table.get("without", [])], props


def prove_model(path: str | Path | Model, *, depth: int | None = None, without: Sequence[str] = (),
                timeout_ms: int = 0, on_depth=None, derived: bool = False, per_action: bool | None = None) -> ProveReport:
    """Prove the model's properties (with its [prove] lemmas and
    [prove.formulas], less those `without` names), or with `depth`, check them to that depth.
    `derived` proves from the relation derived from the spec's code where the
    spec still has a hand-written one (load.py); `per_action=False` asks the
    inductive step of all actions at once (induction.py), to compare."""
    m = path if isinstance(path, Model) else load_model(path)
    spec = m.instantiate()
    props = m.selected_properties(spec)
    check_sanity(spec.schema, props, accept_vacuous=m.raw.get("vacuous", ()))
    system = System(relation_for(spec, derived=derived))
    written = written_lemmas(m, spec.schema, taken=system.relation.lemmas)   # [prove.formulas], over the properties' vocabulary
    known = system.relation.lemmas
    asked, more = model_lemmas(m)
    more = list(spec.invariants) if more is None else more
    for name in [*asked, *without]:
        if name not in known and name not in written:
            raise ModelError(f"{m.path}: unknown lemma {name!r} for spec {spec.name} "
                             f"(known: {', '.join([*known, *written]) or 'none'})")
    for name in more:
        if name not in spec.invariants:
            raise ModelError(f"{m.path}: [prove] lemmas_from brings property {name!r}, which {spec.name} lacks")
    lemmas = {n: known[n] for n in asked if n not in without and n in known}
    dropped = {*without, *m.raw.get("prove", {}).get("without", [])}
    texts = {n: f for n, f in written.items() if n not in dropped}   # stated like the properties
    report = ProveReport(m, system, list(props), [*lemmas, *texts],
                         strengthening=[n for n in more if n not in props])
    if depth is not None:
        report.bounded = bounded(system, props, depth, deadlock=m.deadlock, timeout_ms=timeout_ms,
                                 on_depth=on_depth)
        return report
    clauses = {**props, **{n: spec.invariants[n] for n in report.strengthening}, **texts}
    report.proof = prove(system, clauses, lemmas, timeout_ms, per_action=per_action)
    if report.proof.verdict != "proved":
        return report
    report.vacuity = check_vacuity(system, clauses, lemmas, m.deadlock, timeout_ms)
    report.witnesses = reach_witnesses(m, spec, system, timeout_ms)
    report.unproved = undecided(m, report)
    return report


def reach_witnesses(m: Model, spec: Spec, system: System, timeout_ms: int = 0) -> dict[str, str | None]:
    """How each witness of the model was reached, or None: first by biased
    walks of the spec (WITNESS_WALK_STATES states), then, for those the
    walks missed, by bounded symbolic search up to WITNESS_DEPTH steps.
    Either way the path is one of the spec's own steps (bounded.py replays
    Z3's path through `next`), so a witness reached is reachable."""
    preds = {w: compile_predicate(spec.schema, spec.witnesses[w]) for w in m.witnesses}
    found: dict[str, str | None] = dict.fromkeys(preds)
    if not preds:
        return found
    for n, s in enumerate(biased_walks(spec, WITNESS_WALK_STATES, seed=0), 1):
        obs = spec.observe(s)
        for w, p in preds.items():
            if found[w] is None and p(obs):
                found[w] = f"a random walk, {n:,} states in"
        if all(v is not None for v in found.values()):
            return found
    for w in [w for w, v in found.items() if v is None]:
        b = bounded(system, {w: z3.Not(spec.witnesses[w])}, WITNESS_DEPTH, timeout_ms=timeout_ms)
        if b.verdict == "violation":
            found[w] = f"a path of {b.length - 1} steps (bounded search)"
    return found


def undecided(m: Model, r: ProveReport) -> list[str]:
    """What the model asks that this proof did not decide, one line each."""
    out = []
    if not r.properties:
        out.append("the model names no invariant (properties = []): there is nothing to prove")
    for name in m.temporal or {}:
        out.append(f"{name}: a temporal property (prove decides invariants only; txncheck check decides it)")
    v = r.vacuity
    table = m.raw.get("prove", {})
    dead_ok = list(table.get("dead", []))
    if derived(r.system.relation):   # steps only the derived relation has (its spec keeps a hand-written one)
        dead_ok += table.get("derived_dead", [])
    if v is not None:
        if v.unknown:
            out.append(f"unknown: {v.unknown}")
        dead = [show_action(label) for label in v.dead if not matches(label, dead_ok)]
        if dead:
            out.append(f"action{'s' if len(dead) > 1 else ''} that can never fire under the invariant, so the "
                       "proof says nothing of them (a relation with a step dropped proves too much; name those "
                       f"dead by design at these bounds in [prove] dead): {', '.join(dead)}")
        labels = r.system.labels
        for name in dead_ok:
            if any(matches(label, [name]) for label in labels):
                if not any(matches(label, [name]) for label in v.dead):
                    out.append(f"[prove] dead names {name}, but it can fire under the invariant")
            elif not derived(r.system.relation) and not is_pattern(name):
                # a derived relation has a label for each action the code yields at these bounds: one
                # named here without a label is dead in the code itself (a clock with ticks = 0); a
                # pattern names a set of instances, which a hand-written relation may leave out
                out.append(f"[prove] dead names {name}, but the relation has no such action")
        if v.deadlock == "not proved":
            out.append("deadlock freedom (deadlock = true): a state of the invariant has no action enabled "
                       "(add a lemma that rules it out, or look for a deadlock with --bounded K)")
    for w, how in r.witnesses.items():
        if how is None:
            out.append(f"witness {w}: reached neither by {WITNESS_WALK_STATES:,} states of random walks nor by a "
                       f"path of up to {WITNESS_DEPTH} steps (txncheck check decides it)")
    rel = r.system.relation
    if not derived(rel):
        recorded = table.get("agreement")
        if recorded is None:
            out.append("the relation is hand-written and the model file records no agreement of it with the "
                       f"spec: run txncheck prove {m.path} --agreement --record")
        elif recorded != agreement_digest(rel):
            out.append("the relation's recorded agreement is of other code or bounds (the spec or the relation "
                       f"changed since): run txncheck prove {m.path} --agreement --record")
    return out


def write_bounded_trace(report: ProveReport, out_dir: str | Path) -> None:
    b = report.bounded
    if b is None or b.verdict != "violation":
        return
    spec = report.system.relation.spec
    dest = Path(out_dir) / f"{report.model.name}.itf.json"
    try:
        report.trace_file = str(write_trace(dest, spec, b.path, meta={
            "model": str(report.model.path), "property": b.violated, "kind": b.kind, "engine": "bounded"}))
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), str(dest)) from None
