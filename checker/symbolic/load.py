"""Where a spec's relation comes from: its own code (derive/, ADR 0011).

`relation_for(spec)` derives the symbolic relation from the spec's `next`,
`init_states` and `observe`; the relation of an equal spec (same class,
code, variant and bounds) is derived once per process.

A spec may still come with a hand-written relation, a class
`<SpecClass>Relation` (a subclass of spec/symbolic.py's `Relation`) in a
module beside the spec's, named for it, or in its package's `relation.py`
or `symbolic/relation.py`:

    spec/pip473/spec.py (a package)  -> spec/pip473/symbolic/relation.py: Pip473Relation
    examples/x/x.py (a spec file)    -> examples/x/x_relation.py

Then that one is used (and `prove` wants its agreement with the spec
recorded: agreement_run.py), unless `derived=True` asks for the derivation.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

from ...spec.api import Spec
from ...spec.registry import _import_file
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
    """The spec's hand-written relation class, or None."""
    want = f"{spec_cls.__name__}Relation"
    for mod in _candidates(spec_cls):
        cls = getattr(mod, want, None)
        if isinstance(cls, type) and issubclass(cls, Relation):
            return cls
    return None


def _module_file(spec_cls) -> Path:
    mod = sys.modules.get(spec_cls.__module__)
    return Path(getattr(mod, "__file__", "") or spec_cls.__module__)


def _candidates(spec_cls):
    name = spec_cls.__module__
    path = _module_file(spec_cls)
    if name.startswith("txncheck_user_spec_"):   # a spec file (spec/registry.py)
        sibling = path.with_name(f"{path.stem}_relation.py")
        if sibling.is_file():
            yield _import_file(sibling.resolve(), f"{sibling}")
        return
    package = name.rpartition(".")[0]
    for mod in (f"{name}_relation", *((f"{package}.relation", f"{package}.symbolic.relation") if package else ())):
        try:
            yield importlib.import_module(mod)
        except ModuleNotFoundError as exc:   # not there (it or its folder), or a missing import of its own
            if exc.name != mod and not mod.startswith(f"{exc.name}."):
                raise
