"""Where a spec's relation comes from: its own code (derive/, ADR 0011).

`relation_for(spec)` derives the symbolic relation from the spec's `next`,
`init_states` and `observe`; the relation of an equal spec (same class,
code, variant and bounds) is derived once per process. A spec that still
has a hand-written relation (a class `<SpecClass>Relation` in `relation.py`
of its package, until its derived one replaces it) gets that one unless
`derived=True` asks for the derivation.
"""

from __future__ import annotations

import importlib
import json

from ...spec.api import Spec
from ...spec.source import code_files, file_digest
from ...spec.symbolic import Relation
from .derive import derive

_DERIVED: dict[tuple, Relation] = {}


def relation_for(spec: Spec, derived: bool = False) -> Relation:
    if not derived:
        cls = hand_written(type(spec))
        if cls is not None:
            return cls(spec)
    code = tuple((str(p), file_digest(str(p))) for p in code_files(type(spec)))
    key = (type(spec), code, spec.variant, json.dumps(spec.constants, sort_keys=True, default=str))
    rel = _DERIVED.get(key)
    if rel is None:
        rel = _DERIVED[key] = derive(spec)
    return rel


def hand_written(spec_cls: type[Spec]) -> type[Relation] | None:
    want = f"{spec_cls.__name__}Relation"
    package = spec_cls.__module__.rpartition(".")[0]
    if not package or spec_cls.__module__.startswith("txncheck_user_spec_"):
        return None
    try:
        mod = importlib.import_module(f"{package}.relation")
    except ModuleNotFoundError as exc:
        if exc.name != f"{package}.relation":
            raise
        return None
    cls = getattr(mod, want, None)
    return cls if isinstance(cls, type) and issubclass(cls, Relation) else None
