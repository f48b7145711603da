"""A counterexample to induction in the spec's own terms: its two states
decoded from the cells into the spec's state, printed field by field as
`txncheck show` prints a trace, and written as an ITF trace of two states
that `show` reads (the first state need not be reachable: the file's
`#meta` says it is a CTI, with the clause it breaks)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..itf import write_trace
from ..render.table import changed_fields, fmt_value


def decoder(relation) -> Any:
    """The relation's map from cells to the spec's state, or None (a
    hand-written relation's cells are its own)."""
    return getattr(relation, "state_of", None)


def render(relation, cells: dict, only: set | None = None, before: dict | None = None) -> list[str]:
    """`field = value` lines of the state the cells stand for; with `before`,
    only what changed from it, down to the entry or field that changed."""
    spec = relation.spec
    now = spec.state_vars(relation.state_of(cells))
    if before is None:
        return [f"{k} = {fmt_value(v)}" for k, v in now.items()]
    prev = spec.state_vars(relation.state_of(before))
    out: list[str] = []
    for k, v in now.items():
        if prev.get(k) != v:
            _diff(k, prev.get(k), v, out)
    return out


def _diff(name: str, old, new, out: list) -> None:
    """What changed, down to the tuple item, set element or map entry."""
    if isinstance(old, frozenset) and isinstance(new, frozenset):
        if new - old:
            out.append(f"{name} + {fmt_value(frozenset(new - old))}")
        if old - new:
            out.append(f"{name} - {fmt_value(frozenset(old - new))}")
    elif isinstance(old, tuple) and isinstance(new, tuple) and len(old) == len(new) and type(old) is type(new):
        fields = getattr(new, "_fields", None)
        for i, (a, b) in enumerate(zip(old, new)):
            if a != b:
                _diff(f"{name}.{fields[i]}" if fields else f"{name}[{i}]", a, b, out)
    elif isinstance(old, dict) and isinstance(new, dict):
        out.extend(f"{n} = {v}" for n, v in changed_fields({name: old}, {name: new}))
    else:
        out.append(f"{name} = {fmt_value(new)}")


def write_cti(report, out_dir: str | Path) -> str | None:
    """The report's CTI as an ITF trace (two states); None if there is none
    or the relation's cells are not the spec's state."""
    p = report.proof
    rel = report.system.relation
    if p is None or p.cti is None or decoder(rel) is None:
        return None
    cti = p.cti
    path = [(None, rel.state_of(cti.before)), (cti.action, rel.state_of(cti.after))]
    dest = Path(out_dir) / f"{report.model.name}.cti.itf.json"
    try:
        return str(write_trace(dest, rel.spec, path, meta={
            "model": str(report.model.path), "property": cti.clause, "kind": "counterexample to induction",
            "engine": "induction", "failing": cti.failing,
            "note": "state 0 satisfies every clause of the invariant but need not be reachable"}))
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), str(dest)) from None
