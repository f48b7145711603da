"""The symbolic transition relation derived from a spec's own Python code
(docs/adr/0011-the-relation-is-derived-from-the-spec.md): `derive(spec)`
returns a `Relation` (spec/symbolic.py) for `System` to use."""

from .relation import DerivedRelation, derive

__all__ = ["DerivedRelation", "derive"]
