"""Executable specifications. Each protocol is a `Spec` (see `api.py`)."""

from .api import Action, Bound, Spec, SpecError, State
from .registry import SPECS, load_spec_class

__all__ = ["Action", "Bound", "Spec", "SpecError", "State", "SPECS", "load_spec_class"]
