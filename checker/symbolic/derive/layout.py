"""A shape made a schema of cells, and the symbolic state over a frame of it.

`Layout(shape)` declares one scalar symbol per cell (shape order) and the
Atom sort; `base` is the frame the deriver builds every formula over (tag
"d"), and `state` the spec's state over it: NamedTuples and tuples of
symbolic values (cells.py). `Renamer` moves a formula over the base frame
to another frame with one Z3 call.
"""

from __future__ import annotations

from typing import Iterable

import z3

from ....spec.schema import Bool, Schema
from ....spec.symbolic import Frame
from .cells import constraints, declare, decode, encode, symbolic
from .shapes import Atoms, atoms_of

RAISED = "next raises"
RAISES = "raises"   # the label of an action that makes `next` raise (it sets RAISED)


class Layout:
    def __init__(self, shape, raised: bool = False, extra: Iterable = ()) -> None:
        self.shape = shape
        found: set = {(type(v), v) for v in extra}   # atoms no cell holds (observation.observed_atoms)
        atoms_of(shape, found)
        self.atoms = Atoms(tuple(v for _, v in sorted(found, key=lambda k: (k[0].__name__, repr(k[1])))))
        self.schema = Schema()
        self.atoms.declare(self.schema)
        decls: list = []
        declare(shape, "", decls)
        self.names = [n[1:] if n.startswith(".") else n for n, _ in decls]
        for name, (_, typ) in zip(self.names, decls):
            self.schema.var(name, typ)
        self.raised = raised
        if raised:
            self.schema.var(RAISED, Bool())
        self.base = Frame(self.schema, "d")
        self.terms = [self.base[n, ()] for n in self.names]
        self.state, _ = symbolic(shape, self.terms, 0, self.atoms)

    def cells(self, s) -> dict:
        vals: list = []
        encode(self.shape, s, self.atoms, vals)
        out = {(n, ()): v for n, v in zip(self.names, vals)}
        if self.raised:
            out[RAISED, ()] = False
        return out

    def state_of(self, cells: dict):
        vals = [cells[n, ()] for n in self.names]
        return decode(self.shape, vals, 0, self.atoms)[0]

    def types(self, f: Frame) -> list[z3.BoolRef]:
        out: list = []
        constraints(self.shape, [f[n, ()] for n in self.names], 0, self.atoms, out)
        if self.raised:
            out.append(z3.Not(f[RAISED, ()]))
        return out


class Renamer:
    """z3.substitute from the base frame's constants to another frame's,
    with the pairs fixed once (z3.substitute checks each pair per call)."""

    def __init__(self, base: Frame, f: Frame) -> None:
        keys = base.keys
        self.n = len(keys)
        self.ctx = base[keys[0]].ctx if keys else z3.main_ctx()
        # the arrays hold raw pointers: keep the terms they point to alive as long as they are
        self._keep = ([base[k] for k in keys], [f[k] for k in keys])
        self.frm = (z3.Ast * self.n)(*[t.as_ast() for t in self._keep[0]])
        self.to = (z3.Ast * self.n)(*[t.as_ast() for t in self._keep[1]])

    def __call__(self, e: z3.ExprRef) -> z3.ExprRef:
        if not self.n:
            return e
        r = z3.Z3_substitute(self.ctx.ref(), e.as_ast(), self.n, self.frm, self.to)
        return z3.z3._to_expr_ref(r, self.ctx)


class DerivedFrame(Frame):
    """A frame whose types are the shape's claims (Types, proved)."""

    def __init__(self, layout: Layout, tag: str) -> None:
        super().__init__(layout.schema, tag)
        self._layout = layout

    def types(self) -> list[z3.BoolRef]:
        return self._layout.types(self)
