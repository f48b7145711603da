"""`prove_model`: a model file's invariant proved by induction, or checked
to a depth; what `txncheck prove` prints and returns."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ModelError
from ..invariants import check_sanity
from ..itf import write_trace
from ..model import Model, load_model
from .bounded import Bounded, bounded
from .induction import Proof, prove
from .load import relation_for
from .model_lemmas import written_lemmas
from .system import System


@dataclass
class ProveReport:
    model: Model
    system: System
    properties: list[str]
    lemmas: list[str]
    proof: Proof | None = None
    bounded: Bounded | None = None
    trace_file: str | None = None

    @property
    def verdict(self) -> str:
        if self.proof is not None:
            return self.proof.verdict
        return self.bounded.verdict

    @property
    def exit_code(self) -> int:
        return {"proved": 0, "violation": 1}.get(self.verdict, 3)

    def to_json(self) -> dict[str, Any]:
        spec = self.system.relation.spec
        out: dict[str, Any] = {"model": str(self.model.path), "spec": spec.name, "variant": spec.variant,
                               "bounds": dict(spec.constants), "properties": self.properties,
                               "lemmas": self.lemmas, "verdict": self.verdict}
        p, b = self.proof, self.bounded
        if p is not None:
            out.update(mode="induction", queries=p.queries, base_seconds=round(p.base_seconds, 3),
                       step_seconds=round(p.step_seconds, 3), unknown=p.unknown or None)
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


def prove_model(path: str | Path | Model, *, depth: int | None = None, without: list[str] = (),
                timeout_ms: int = 0, on_depth=None) -> ProveReport:
    """Prove the model's properties inductive (with its [prove] lemmas and
    [prove.formulas], less those `without` names), or with `depth`, check them to that depth."""
    m = path if isinstance(path, Model) else load_model(path)
    spec = m.instantiate()
    props = m.selected_properties(spec)
    check_sanity(spec.schema, props, accept_vacuous=m.raw.get("vacuous", ()))
    system = System(relation_for(spec))
    written = written_lemmas(m, spec.schema, taken=system.relation.lemmas)   # over the properties' vocabulary
    known = system.relation.lemmas
    asked = list(m.raw.get("prove", {}).get("lemmas", []))
    for name in [*asked, *without]:
        if name not in known and name not in written:
            raise ModelError(f"{m.path}: unknown lemma {name!r} for spec {spec.name} "
                             f"(known: {', '.join([*known, *written]) or 'none'})")
    lemmas = {n: known[n] for n in asked if n not in without}
    texts = {n: f for n, f in written.items() if n not in without}
    report = ProveReport(m, system, list(props), [*lemmas, *texts])
    if depth is None:
        report.proof = prove(system, {**props, **texts}, lemmas, timeout_ms)
    else:
        report.bounded = bounded(system, props, depth, deadlock=m.deadlock, timeout_ms=timeout_ms,
                                 on_depth=on_depth)
    return report


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
