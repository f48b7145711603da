"""Clauses of four literals held back until a CTI asks for them (`txncheck
prove --infer`, its last level).

The minimal clauses of four literals true in every sample are many
(PaxosCommit with its messages observed: 16,268 classes at two variables
per sort, against 1,437 clauses of up to three) and most of them are true
invariants, so Houdini keeps them and pays for each in every query (tens
of seconds per CTI there, and over two minutes before the first). So the
level starts with the shorter clauses and the existentials, and holds the
four-literal ones back. When a step breaks only the properties, the CTI's
first state is one the lemmas must rule out: the held-back clauses false
in that state (under some assignment of their variables) join Houdini,
which goes on; a clause true there cannot rule it out. When none is false
there, the properties fall as before.

A clause that joins late may miss a CTI that, had it been there, would
have kept another candidate that Houdini dropped meanwhile; so the set
Houdini ends with can be smaller than with every clause from the start,
never unsound (the final check is `prove`'s). `[prove.infer] four = "all"`
gives Houdini every clause at once, to compare.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import z3

from ...spec.schema import Bool, Int, Schema
from ...spec.symbolic import domain_keys
from .candidates import Clause, truth_table
from .clause_lemmas import Lemma, Writer
from .samples import Codes, Instance
from .vocabulary import Atom, Sorts


class Held:
    """The four-literal clauses not yet given to Houdini, and how they join."""

    def __init__(self, clauses: list[Clause], atoms: list[Atom], sorts: Sorts, pool: int, schema: Schema,
                 codes: Codes, writer: Writer, compile_lemma: Callable[[Lemma], z3.BoolRef]) -> None:
        self.left = list(clauses)
        self.atoms, self.sorts, self.pool, self.schema, self.codes = atoms, sorts, pool, schema, codes
        self.writer, self.compile_lemma = writer, compile_lemma
        self.keys = [(name, key) for name, sym in schema.symbols.items() for key in domain_keys(schema, sym)]
        self.joined: list[Lemma] = []

    def falsified(self, state: dict) -> list[Clause]:
        """The held-back clauses false in `state` (cell key -> value, as the
        samples hold them) under some assignment of their variables."""
        row = np.array([[self._code(k, v) for k, v in state.items()]], dtype=np.int32)
        inst = Instance({}, self.schema, 1, True, 0.0, {k: j for j, k in enumerate(state)}, row)
        false_at = truth_table(self.atoms, [inst], self.sorts, self.pool, self.schema, self.codes).false_at
        out = []
        for c in self.left:
            rows = false_at[c[0]]
            for lit in c[1:]:
                rows &= false_at[lit]
            if rows:
                out.append(c)
        return out

    def grow(self, stater, model: z3.ModelRef) -> dict[str, z3.BoolRef]:
        """Houdini's `grow`: the held-back clauses false in the step's first
        state (the cells read through `stater`, the relation's observation
        of that frame), as lemmas (name -> formula); they are held no more."""
        state = {k: _value(model.eval(stater(_term(self.schema, k)), model_completion=True)) for k in self.keys}
        join = self.falsified(state)
        gone = set(join)
        self.left = [c for c in self.left if c not in gone]
        out = {}
        for c in join:
            lemma = self.writer.lemma(c)
            self.joined.append(lemma)
            out[lemma.name] = self.compile_lemma(lemma)
        return out

    def _code(self, key, v) -> int:
        typ = self.schema.symbols[key[0]].type
        return int(v) if isinstance(typ, (Bool, Int)) else self.codes.code(str(v))


def _term(schema: Schema, key) -> z3.ExprRef:
    name, args = key
    sym = schema.symbols[name]
    if not sym.domain:
        return sym.ref
    return sym(*[schema.const(d, e) for d, e in zip(sym.domain, args)])


def _value(v: z3.ExprRef):
    if z3.is_bool(v):
        return z3.is_true(v)
    if z3.is_int_value(v):
        return v.as_long()
    if z3.is_string_value(v):
        return v.as_string()
    return str(v)       # an element of an enum sort: its name
