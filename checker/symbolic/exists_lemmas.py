"""Existential candidate lemmas (`txncheck prove --infer`), in the style of
DuoAI (OSDI'22): a universal guard, then "some element makes a membership
true", the shape of Paxos's "some majority voted". Two templates:

    forall X: G -> exists Y: c[...]                                    (one)
    forall X: G -> exists Y, Y2 in S, Z: Y != Y2 & c[..Y..] & c[..Y2..]  (two)

X: one variable per index sort (vocabulary.py); G: a literal of the
one-variable vocabulary (an atom or its negation), or nothing; c: a set
membership (a Bool symbol with arguments), each argument a universal
variable (index sorts), an existential variable, or an element (ground
sorts); at least one argument existential. In (two), Y and Y2 are two
existential variables of one index sort at one argument, the other
arguments shared: "at least two elements of S", which is "some majority"
when the majorities are those of three acceptors.

A candidate is kept when it holds in every sampled state under every
assignment of X, its guard holds in some sample (else the universal
clause `!G` says more) and, when it holds without its guard, only the
unguarded one. The candidates of one model are at most MAX_CANDIDATES,
the first in template order.
"""

from __future__ import annotations

import itertools

import numpy as np

from ...spec.schema import Bool, Schema
from .candidates import atom_truth, cell_column
from .clause_lemmas import Lemma, Writer
from .lemma_text import KEYWORDS, NEGATED, Binary, Cmp, Exists, Expr, Forall, Name, Nary, Not, Truth, show
from .samples import Codes, Instance
from .vocabulary import Atom, CellT, Sorts, atoms

MAX_CANDIDATES = 2_000


def cell_bodies(schema: Schema, sorts: Sorts) -> list[tuple[CellT, tuple | None]]:
    """(the cell, the existential slot a second copy varies, or None) for
    each body: `c[...]` alone, and `Y != Y2 & c[..Y..] & c[..Y2..]`. Slots:
    (sort, 0) universal, (sort, "e") existential, (sort, "e2") its copy."""
    out: list[tuple[CellT, tuple | None]] = []
    for sym in schema.symbols.values():
        if not isinstance(sym.type, Bool) or not sym.domain:
            continue
        options: list[list] = []
        for d in sym.domain:
            if d in sorts.index:
                options.append([(d, 0), (d, "e")])
            elif d in sorts.ground:
                options.append([*sorts.ground[d], (d, "e")])
            else:
                break     # a family sort: its shapes are the universal templates' business
        if len(options) < len(sym.domain):   # it broke off at a family sort
            continue
        for args in itertools.product(*options):
            ex = [a for a in args if isinstance(a, tuple) and a[1] == "e"]
            if not ex or len(set(ex)) < len(ex):    # one existential variable per sort and argument
                continue
            cell = CellT(sym.name, args)
            out.append((cell, None))
            out += [(cell, a) for a in dict.fromkeys(ex) if a[0] in sorts.index]
    return out


def _body_truth(cell: CellT, twin, inst: Instance, sigma: dict, isorts: dict):
    """Per row: some assignment of the existential slots makes the body true
    (None where a cell is not in this instance's schema)."""
    ex = sorted({a for a in cell.args if isinstance(a, tuple) and a[1] == "e"})
    n = inst.matrix.shape[0]
    out = np.zeros(n, dtype=bool)
    for values in itertools.product(*[isorts[s] for s, _ in ex]):
        env = {**sigma, **dict(zip(ex, values))}
        first = cell_column(cell, inst, env)
        if first is None:
            return None
        if twin is None:
            out |= first == 1
            continue
        for other in isorts[twin[0]]:
            if other == env[twin]:
                continue
            second = cell_column(cell, inst, {**env, twin: other})
            if second is None:
                return None
            out |= (first == 1) & (second == 1)
    return out


def candidates(schema: Schema, sorts: Sorts, instances: list[Instance], codes: Codes,
               values: dict) -> tuple[list[Lemma], int]:
    """(the existential lemmas true in every sample, the strongest as the
    module says; how many (guard, body) pairs were tried)."""
    bodies = cell_bodies(schema, sorts)
    if not bodies:
        return [], 0
    guards = atoms(schema, sorts, 1, values)
    n_lit = 2 * len(guards) + 1          # literal 2a: atom a; 2a + 1: its negation; the last: no guard
    broken = np.zeros((len(bodies), n_lit), dtype=bool)      # some row where the guard holds, the body not
    seen = np.zeros(n_lit, dtype=bool)                       # the guard holds somewhere
    for inst in instances:
        isorts = inst.schema.sorts
        if any(s not in isorts for s in sorts.index):
            continue
        for point in itertools.product(*[isorts[s] for s in sorts.index]):
            sigma = {(s, 0): e for s, e in zip(sorts.index, point)}
            g = np.zeros((inst.matrix.shape[0], n_lit), dtype=bool)
            for a, atom in enumerate(guards):
                t = atom_truth(atom, inst, sigma, schema, codes)
                if t is not None:
                    g[:, 2 * a], g[:, 2 * a + 1] = t, ~t
            g[:, -1] = True
            seen |= g.any(axis=0)
            for b, (cell, twin) in enumerate(bodies):
                t = _body_truth(cell, twin, inst, sigma, isorts)
                if t is not None:
                    broken[b] |= g[~t].any(axis=0)
    tried = len(bodies) * n_lit
    w = _Writer(schema, sorts, guards)
    out = []
    for b, (cell, twin) in enumerate(bodies):
        if not broken[b, -1]:
            out.append(w.exists_lemma(None, cell, twin))
            continue
        for lit in range(n_lit - 1):
            if seen[lit] and not broken[b, lit] and guards[lit >> 1].kind != "same":
                out.append(w.exists_lemma(lit, cell, twin))
    return out[:MAX_CANDIDATES], tried


class _Writer(Writer):
    """Existential lemmas as text: universal variables named as the clause
    lemmas name them, existential ones after them."""

    def __init__(self, schema: Schema, sorts: Sorts, guards: list[Atom]) -> None:
        super().__init__(schema, sorts, guards)
        taken = set(KEYWORDS) | set(schema.symbols) | set(schema.sorts) | set(self.var_names.values())
        for els in schema.sorts.values():
            taken |= set(els)
        for s in schema.sorts:
            for tag in ("e", "e2"):
                name = s[:1].upper() + ("E" if tag == "e" else "E2")
                while name in taken:
                    name += "_"
                taken.add(name)
                self.var_names[s, tag] = name

    def exists_lemma(self, lit: int | None, cell: CellT, twin) -> Lemma:
        first = Truth(self.cell(cell))
        ex = sorted({a for a in cell.args if isinstance(a, tuple) and a[1] == "e"}, key=str)
        binds = [(self.var_names[a], a[0]) for a in ex]
        body: Expr
        if twin is None:
            body = Exists(tuple(binds), first)
        else:
            copy = (twin[0], "e2")
            second = Truth(self.cell(CellT(cell.symbol, tuple(copy if a == twin else a for a in cell.args))))
            binds.insert(ex.index(twin) + 1, (self.var_names[copy], copy[0]))    # Y, Y2 side by side
            distinct = Cmp("!=", Name(self.var_names[twin]), Name(self.var_names[copy]))
            body = Exists(tuple(binds), Nary("&", (distinct, first, second)))
        slots = {a for a in cell.args if isinstance(a, tuple) and a[1] == 0}
        symbols = [cell.symbol]
        if lit is not None:
            atom = self.atoms[lit >> 1]
            guard = self.atom(atom)
            if lit & 1:
                guard = Cmp(NEGATED[guard.op], guard.left, guard.right) if isinstance(guard, Cmp) else Not(guard)
            body = Binary("->", guard, body)
            slots |= set(atom.slots)
            if isinstance(atom.cell, CellT) and atom.cell.symbol != cell.symbol:
                symbols.insert(0, atom.cell.symbol)
        order = sorted(slots, key=lambda s: self.sorts.index.index(s[0]))
        if order:
            body = Forall(tuple((self.var_names[s], s[0]) for s in order), body)
        return Lemma(self._name(symbols + ["exists"]), show(body), 1 + (lit is not None), len(order))
