"""Clauses over the vocabulary as lemmas a user reads: one per class of
clauses equal up to renaming their variables, named after the symbols it
relates, written in the lemma language (lemma_text.py) as an implication:

    forall R in RM: rmState[R] = "aborted" -> msgs[Abort] | !msgs["Prepared_{R}"]

The negated literals are its premises, the others its conclusion.
Variables are capitals (R, R2 for sort RM), never named like an element or
a symbol of the schema.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from ...spec.schema import Int, Schema, Str
from .lemma_text import KEYWORDS, NEGATED, Binary, Cell, Cmp, Const, Expr, Forall, Name, Nary, Not, Quoted, Truth, show
from .vocabulary import Atom, CellT, Shape, Sorts


@dataclass(frozen=True)
class Lemma:
    name: str
    text: str
    literals: int
    variables: int


def canonical(clauses: list[tuple], atoms: list[Atom], sorts: Sorts, pool: int) -> list[tuple]:
    """One clause per class of clauses equal up to renaming variables, its
    variables of each sort numbered from 0 without gaps."""
    index = {a: i for i, a in enumerate(atoms)}
    perms = []
    for choice in itertools.product(*[itertools.permutations(range(pool)) for _ in sorts.index]):
        perm = {(s, i): (s, p[i]) for s, p in zip(sorts.index, choice) for i in range(pool)}
        perms.append([index.get(a.renamed(perm)) for a in atoms])
    seen, out = set(), []
    for c in clauses:
        images = []
        for ren in perms:
            if any(ren[lit >> 1] is None for lit in c):
                continue
            image = tuple(sorted(ren[lit >> 1] * 2 + (lit & 1) for lit in c))
            images.append(image)
        key = min(images)
        if key in seen:
            continue
        seen.add(key)
        gap_free = [im for im in images if _gap_free(im, atoms)]
        out.append(min(gap_free) if gap_free else c)
    return out


def _gap_free(clause: tuple, atoms: list[Atom]) -> bool:
    used: dict[str, set] = {}
    for lit in clause:
        for s, i in atoms[lit >> 1].slots:
            used.setdefault(s, set()).add(i)
    return all(u == set(range(len(u))) for u in used.values())


class Writer:
    """Clauses as named lemmas of one schema."""

    def __init__(self, schema: Schema, sorts: Sorts, atoms: list[Atom]) -> None:
        self.schema, self.sorts, self.atoms = schema, sorts, atoms
        taken = set(KEYWORDS) | set(schema.symbols) | set(schema.sorts)
        for els in schema.sorts.values():
            taken |= set(els)
        self.var_names: dict[tuple, str] = {}
        bases: set[str] = set()
        for s in sorts.index:
            base = s[:1].upper()
            if base in bases:
                base = s.upper()
            bases.add(base)
            for i in range(8):
                name = base if i == 0 else f"{base}{i + 1}"
                while name in taken:
                    name += "_"
                taken.add(name)
                self.var_names[s, i] = name
        self.names: dict[str, int] = {}

    def lemma(self, clause: tuple) -> Lemma:
        atoms = [self.atoms[lit >> 1] for lit in clause]
        premises = [self.atom(a) for a, lit in zip(atoms, clause) if lit & 1]
        conclusion = [self.atom(a) for a, lit in zip(atoms, clause) if not lit & 1]
        cmps = [i for i, x in enumerate(premises) if isinstance(x, Cmp)]
        if not conclusion and len(premises) > 1 and cmps:
            last = premises.pop(cmps[-1])     # `p -> c != v` reads better than `!(p & c = v)`
            conclusion = [Cmp(NEGATED[last.op], last.left, last.right)]
        body: Expr
        if not conclusion:
            body = Not(_and(premises))
        elif not premises:
            body = _or(conclusion)
        else:
            body = Binary("->", _and(premises), _or(conclusion))
        slots = sorted({s for a in atoms for s in a.slots},
                       key=lambda s: (self.sorts.index.index(s[0]), s[1]))
        if slots:
            body = Forall(tuple((self.var_names[s], s[0]) for s in slots), body)
        symbols = list(dict.fromkeys(a.cell.symbol for a in atoms if isinstance(a.cell, CellT)))
        symbols += [a.other.symbol for a in atoms if isinstance(a.other, CellT) and a.other.symbol not in symbols]
        return Lemma(self._name(symbols), show(body), len(clause), len(slots))

    def _name(self, symbols: list[str]) -> str:
        base = ("_".join(symbols) if symbols else "distinct")[:48]
        n = self.names.get(base, 0) + 1
        self.names[base] = n
        return f"{base}_{n}"


    def atom(self, a: Atom):
        if a.kind == "same":
            return Cmp("=", Name(self.var_names[a.cell]), Name(self.var_names[a.other]))
        cell = self.cell(a.cell)
        if a.kind == "bool":
            return Truth(cell)
        if a.kind == "is":
            return Cmp("=", cell, Name(self.var_names[a.other]))
        if a.kind == "cmp":
            return Cmp(a.op, cell, self.cell(a.other))
        if a.kind == "le":
            return Cmp("<=", cell, Const(a.other))
        typ = self.schema.symbols[a.cell.symbol].type
        value: Expr
        if isinstance(typ, Int):
            value = Const(a.other)
        elif isinstance(typ, Str):
            value = Quoted(str(a.other))
        else:
            plain = a.other.isidentifier() and a.other not in KEYWORDS and a.other not in self.schema.symbols
            value = Name(a.other) if plain else Quoted(a.other)
        return Cmp("=", cell, value)

    def cell(self, c: CellT):
        if not c.args:
            return Name(c.symbol)
        args: list[Expr] = []
        for a in c.args:
            if isinstance(a, Shape):
                args.append(Quoted("".join(p if isinstance(p, str) else "{" + self.var_names[p] + "}"
                                           for p in a.parts)))
            elif isinstance(a, tuple):
                args.append(Name(self.var_names[a]))
            else:
                args.append(Quoted(a))
        return Cell(c.symbol, tuple(args))


def _and(xs):
    return xs[0] if len(xs) == 1 else Nary("&", tuple(xs))


def _or(xs):
    return xs[0] if len(xs) == 1 else Nary("|", tuple(xs))


def renamed(lemmas: list[Lemma]) -> list[Lemma]:
    """The lemmas named after the symbols they relate, numbered only where
    two relate the same ones (`rmState_msgs`, `rmState_msgs_2`)."""
    bases = [x.name.rpartition("_")[0] for x in lemmas]
    count: dict[str, int] = {}
    out = []
    for x, base in zip(lemmas, bases):
        count[base] = count.get(base, 0) + 1
        n = count[base]
        name = base if n == 1 else f"{base}_{n}"
        out.append(Lemma(name, x.text, x.literals, x.variables))
    return out
