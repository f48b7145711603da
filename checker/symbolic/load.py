"""Where a spec's relation comes from: a module beside the spec's, named for
it, that defines `<SpecClass>Relation`:

    spec/classic/twophase.py        -> spec/classic/twophase_relation.py: TwoPhaseRelation
    spec/pip473/spec.py (a package)  -> spec/pip473/relation.py: Pip473Relation
    examples/x/x.py (a spec file)    -> examples/x/x_relation.py

A spec without one cannot be proved or checked symbolically (exit 2)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from ...spec.api import Spec, SpecError
from ...spec.registry import _import_file
from ...spec.symbolic import Relation


def relation_class(spec_cls: type[Spec]) -> type[Relation]:
    want = f"{spec_cls.__name__}Relation"
    for mod in _candidates(spec_cls):
        cls = getattr(mod, want, None)
        if isinstance(cls, type) and issubclass(cls, Relation):
            return cls
    raise SpecError(f"spec {spec_cls.name} has no symbolic relation (a class {want} in a module "
                    f"{_module_file(spec_cls).stem}_relation.py beside the spec's, or relation.py in its package)")


def relation_for(spec: Spec) -> Relation:
    return relation_class(type(spec))(spec)


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
    for mod in (f"{name}_relation", f"{package}.relation" if package else None):
        if mod is None:
            continue
        try:
            yield importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name != mod:
                raise
