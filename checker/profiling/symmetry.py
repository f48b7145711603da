"""What symmetry could buy, measured on the complete levels of the prefix
with the spec's own `permute`.

For each symmetric sort the spec declares, every permutation of its
elements (transpositions of neighbours past 6 elements) is applied to each
state of the complete levels. A permutation preserves depth, so if it is a
symmetry of the state space every image is in those levels: `closed` is the
fraction that is. The orbit factor is the number of states over the number
of orbits, under the whole sort and under the spec's declared classes
(`symmetry_classes`, which is what `--symmetry` uses): the first says what
symmetry would buy if the elements were interchangeable, the second what it
buys as the spec declares them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...spec.api import Spec


@dataclass
class SortSymmetry:
    sort: str
    elements: tuple
    classes: tuple
    states: int             # the states of the complete levels looked at
    closed: float | None    # images under the whole sort that are reachable states
    factor: float | None    # states / orbits under the whole sort
    class_factor: float | None  # states / orbits under the declared classes
    error: str | None = None


def _perms(elements: tuple) -> list[tuple]:
    if len(elements) <= 6:
        return list(itertools.permutations(elements))
    out = [elements]
    for i in range(len(elements) - 1):
        p = list(elements)
        p[i], p[i + 1] = p[i + 1], p[i]
        out.append(tuple(p))
    return out


def _class_perms(classes: tuple) -> list[dict]:
    out = []
    for combo in itertools.product(*[_perms(tuple(c)) for c in classes]):
        m: dict[str, str] = {}
        for c, p in zip(classes, combo):
            m.update(zip(c, p))
        out.append(m)
    return out


def symmetry(spec: Spec, states: list) -> list[SortSymmetry]:
    """Per symmetric sort, and for all of them together when there are
    several (what --symmetry explores). `states`: whole levels from the
    first (a set that any symmetry maps onto itself)."""
    sorts = tuple(getattr(spec, "symmetric_sorts", ()) or ())
    out = []
    seen = set(states)
    for group in [(s,) for s in sorts] + ([sorts] if len(sorts) > 1 else []):
        try:
            elements = {o: tuple(spec.schema.elements(o)) for o in sorts}
            classes = {o: tuple(tuple(c) for c in spec.symmetry_classes(o)) for o in sorts}
            whole = _mappings(sorts, {o: [dict(zip(elements[o], p)) for p in _perms(elements[o])] for o in group},
                              elements)
            declared = _mappings(sorts, {o: _class_perms(classes[o]) for o in group}, elements)
            out.append(_measure(spec, states, seen, " x ".join(group),
                                tuple(e for o in group for e in elements[o]),
                                tuple(c for o in group for c in classes[o]), whole, declared))
        except Exception as exc:  # permute not implemented, or failing on these states
            out.append(SortSymmetry(" x ".join(group), (), (), 0, None, None, None,
                                    f"{type(exc).__name__}: {exc}".splitlines()[0]))
    return out


def _mappings(sorts: tuple, perms: dict, elements: dict) -> list[dict]:
    """Every combination of the sorts' permutations, as permute's mapping
    (the identity on the sorts not permuted)."""
    identity = {o: {e: e for e in elements[o]} for o in sorts}
    names = list(perms)
    return [{**identity, **dict(zip(names, combo))} for combo in itertools.product(*(perms[o] for o in names))]


def _measure(spec: Spec, states, seen, name, elements, classes, whole, declared) -> SortSymmetry:
    hits = tries = 0
    orbits, class_orbits = set(), set()
    for s in states:
        images = set()
        for m in whole:
            t = spec.permute(s, m)
            images.add(t)
            if t != s:
                tries += 1
                hits += t in seen
        orbits.add(frozenset(images))
        class_orbits.add(frozenset(spec.permute(s, m) for m in declared))
    n = len(states)
    return SortSymmetry(name, elements, classes, n, hits / tries if tries else 1.0,
                        n / len(orbits) if n else None, n / len(class_orbits) if n else None)
