"""State locations named after schema symbols, read off Z3 formulas, and the
renaming of enum elements that a permutation of a symmetric sort induces.

A location is a tuple `(symbol, *element names)`; `(symbol,)` stands for
every application of the symbol. Partial-order reduction compares them to
decide whether an action is visible to a property, and symmetry reduction
renames formula constants to decide whether a property names specific ids.
"""

from __future__ import annotations

import re

import z3

from ...spec.schema import Schema

_TOKEN = re.compile(r"[0-9A-Za-z]+")


def overlap(a: tuple, b: tuple) -> bool:
    """Two locations overlap when one is a prefix of the other."""
    k = min(len(a), len(b))
    return a[:k] == b[:k]


def read_locations(schema: Schema, formula: z3.ExprRef) -> set[tuple]:
    """Every location the formula reads: symbol applications to constants,
    or the whole symbol where an argument is not a constant."""
    out: set[tuple] = set()
    seen: set[int] = set()
    todo = [formula]
    while todo:
        e = todo.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        args = [e.arg(i) for i in range(e.num_args())] if z3.is_app(e) else []
        if z3.is_app(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED and e.decl().name() in schema.symbols:
            name = e.decl().name()
            if all(a.num_args() == 0 and a.decl().kind() == z3.Z3_OP_DT_CONSTRUCTOR for a in args):
                out.add((name, *(str(a) for a in args)))
            else:
                out.add((name,))
        todo.extend(args)
    return out


def rename(element: str, mapping: dict[str, str]) -> str:
    """An element name with every token that `mapping` renames replaced
    ("Prepared_r1" under r1 -> r2 is "Prepared_r2")."""
    return _TOKEN.sub(lambda m: mapping.get(m.group(), m.group()), element)


def induced_renaming(schema: Schema, sort: str, mapping: dict[str, str]) -> dict[tuple[str, str], str]:
    """{(sort, element): new element} over every enum sort, for a permutation
    `mapping` of `sort`: its own elements, and the elements of other sorts
    named after them. A derived element whose new name is not in its sort
    keeps its name."""
    out: dict[tuple[str, str], str] = {}
    for other, elements in schema.sorts.items():
        names = set(elements)
        for e in elements:
            new = mapping.get(e, e) if other == sort else rename(e, mapping)
            if new != e and new in names:
                out[(other, e)] = new
    return out
