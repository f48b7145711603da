"""The specs a model file can name, imported lazily by name."""

from __future__ import annotations

import importlib

from .api import Spec, SpecError

# model-file name -> "module:Class" under txncheck.spec
SPECS: dict[str, str] = {
    "tcommit": "classic.tcommit:TCommit",
    "twophase": "classic.twophase:TwoPhase",
    "diehard": "classic.diehard:DieHard",
    "pip473": "pip473.spec:Pip473",
    "legacy_v4": "legacy_v4.spec:LegacyV4",
    "pip196": "pip196.spec:Pip196",
    "kip868": "kip868.spec:Kip868",
}


def load_spec_class(name: str) -> type[Spec]:
    target = SPECS.get(name)
    if target is None:
        raise SpecError(f"unknown spec {name!r} (known: {', '.join(sorted(SPECS))})")
    module, cls = target.split(":")
    try:
        mod = importlib.import_module(f"txncheck.spec.{module}")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("txncheck.spec"):
            raise SpecError(f"spec {name!r} is not available in this installation") from None
        raise
    return getattr(mod, cls)
