"""Candidate lemmas: every clause of at most K literals over the vocabulary
(vocabulary.py) that holds in every sampled state (samples.py), kept only
when no shorter clause holding everywhere is part of it (the strongest
candidates, as DistAI enumerates them), and none that the cells' types make
true by themselves.

A clause is quantified over its variables: it holds in a state when it
holds under every assignment of the sort's elements to its variables. So
each sampled state gives one row per assignment, each row the truth of
every atom there (true, false, or undefined where a cell the atom names is
not in that search's schema, which counts as no evidence). Rows are kept
once (numpy's unique over packed bits); a literal is then the bitset of
the rows where it is false, and a clause holds when the AND of its
literals' bitsets is empty.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ...spec.schema import Bool, Enum, Int, Schema, Str
from .samples import Codes, Instance
from .vocabulary import Atom, CellT, Shape, Sorts

Clause = tuple          # sorted literal ids; literal 2a is atom a, 2a+1 its negation
MAX_LITERALS = 4        # the enumeration below has a loop per literal, up to four


@dataclass
class Table:
    atoms: list[Atom]
    false_at: list[int]     # per literal: the rows where it is false, as a bitset
    rows: int


def truth_table(atoms: list[Atom], instances: list[Instance], sorts: Sorts, pool: int, schema: Schema,
                codes: Codes) -> Table:
    chunks = []
    for inst in instances:
        isorts = inst.schema.sorts
        slots = [(s, i) for s in sorts.index for i in range(pool)]
        if any(s not in isorts for s, _ in slots):
            continue
        for values in itertools.product(*[isorts[s] for s, _ in slots]):
            sigma = dict(zip(slots, values))
            bits = _rows(atoms, inst, sigma, schema, codes)
            chunks.append(np.unique(np.packbits(bits, axis=1), axis=0))
    if not chunks:
        return Table(atoms, [0] * (2 * len(atoms)), 0)
    packed = np.unique(np.concatenate(chunks), axis=0)
    bits = np.unpackbits(packed, axis=1, count=2 * len(atoms)).astype(bool)
    n = len(atoms)
    false_at = []
    for a in range(n):
        false_at.append(_bitset(bits[:, n + a]))   # atom a (positive literal) is false
        false_at.append(_bitset(bits[:, a]))       # its negation is false where it is true
    return Table(atoms, false_at, len(packed))


def _bitset(column: np.ndarray) -> int:
    return int.from_bytes(np.packbits(column, bitorder="little").tobytes(), "little")


def _rows(atoms: list[Atom], inst: Instance, sigma: dict, schema: Schema, codes: Codes) -> np.ndarray:
    """Columns: each atom true, then each atom false (both off: undefined)."""
    n = inst.matrix.shape[0]
    out = np.zeros((n, 2 * len(atoms)), dtype=bool)
    for j, a in enumerate(atoms):
        t = atom_truth(a, inst, sigma, schema, codes)
        if t is None:
            continue
        out[:, j] = t
        out[:, len(atoms) + j] = ~t
    return out


def cell_column(cell: CellT, inst: Instance, sigma: dict):
    names = []
    for arg in cell.args:
        if isinstance(arg, Shape):
            names.append("".join(p if isinstance(p, str) else sigma[p] for p in arg.parts))
        elif isinstance(arg, tuple):
            names.append(sigma[arg])
        else:
            names.append(arg)
    j = inst.columns.get((cell.symbol, tuple(names)))
    return None if j is None else inst.matrix[:, j]


def atom_truth(a: Atom, inst: Instance, sigma: dict, schema: Schema, codes: Codes):
    n = inst.matrix.shape[0]
    if a.kind == "same":
        return np.full(n, sigma[a.cell] == sigma[a.other])
    col = cell_column(a.cell, inst, sigma)
    if col is None:
        return None
    if a.kind == "bool":
        return col == 1
    if a.kind == "is":
        return col == codes.code(sigma[a.other])
    if a.kind == "cmp":
        other = cell_column(a.other, inst, sigma)
        if other is None:
            return None
        return col < other if a.op == "<" else col == other
    typ = schema.symbols[a.cell.symbol].type
    k = a.other if isinstance(typ, Int) else codes.code(str(a.other))
    return col == k if a.kind == "eq" else col <= k


# -- the strongest clauses that hold on every row ----------------------------------------------


def clauses(table: Table, schema: Schema, codes: Codes, values: dict, max_literals: int,
            limit: int = 2_000_000) -> tuple[list[Clause], int]:
    """(the minimal clauses of at most `max_literals` literals that hold on
    every row and are not true by the types alone; how many clauses were
    tried). `limit` bounds the clauses of three literals tried (past it,
    no clause of four is tried). Clauses of up to four literals are
    enumerated: asking for more is an error, not a silent four."""
    if not 1 <= max_literals <= MAX_LITERALS:
        raise ValueError(f"clauses of 1 to {MAX_LITERALS} literals are enumerated, not {max_literals}")
    F = table.false_at
    # a literal never false is a clause by itself; one never true adds nothing to a clause
    useful = [lit for lit in range(len(F)) if F[lit] and F[lit ^ 1]]
    trivial = _Trivial(table.atoms, schema, codes, values)
    out: list[Clause] = [(lit,) for lit in range(len(F)) if F[lit] == 0 and not trivial.unit(lit)]
    valid_pairs: set = set()
    tried = 0
    if max_literals >= 2:
        for i, l1 in enumerate(useful):
            f1 = F[l1]
            for l2 in useful[i + 1:]:
                tried += 1
                if l2 == l1 ^ 1 or f1 & F[l2]:
                    continue
                valid_pairs.add((l1, l2))
                if not trivial.pair(l1, l2):
                    out.append((l1, l2))
    if max_literals >= 3:
        for i, l1 in enumerate(useful):
            f1 = F[l1]
            for j in range(i + 1, len(useful)):
                l2 = useful[j]
                f12 = f1 & F[l2]
                if not f12 or l2 == l1 ^ 1:
                    continue
                for l3 in useful[j + 1:]:
                    tried += 1
                    if f12 & F[l3] or l3 == l1 ^ 1 or l3 == l2 ^ 1:
                        continue
                    if (l1, l3) in valid_pairs or (l2, l3) in valid_pairs:
                        continue
                    if not trivial.triple(l1, l2, l3):
                        out.append((l1, l2, l3))
                if tried > limit:
                    return out, tried
    if max_literals >= 4:
        four, tried4 = _four(F, useful, table.rows, trivial)
        out += four
        tried += tried4
    return out, tried


PROBES = 2                  # rows of a triple's whose literal masks narrow its fourth literals
TRIPLES = 5_000_000         # triples that take a fourth literal, at most (PaxosCommit's: 1.1 million, 14 s)


def _four(F: list[int], useful: list[int], rows: int, trivial: "_Trivial") -> tuple[list[Clause], int]:
    """The minimal clauses of four literals. A triple of literals false
    together on some row (so no clause of three or fewer of them holds)
    takes as its fourth each literal not false on any of those rows, and
    false together with each pair of the triple somewhere (else a clause
    of three holds). The fourth must be not false on a few of the triple's
    rows: the masks of those rows (the literals not false there) narrow it
    before a bitset is compared. The rows are shuffled first (np.unique
    sorts them, so that neighbours are alike and narrow less). Counted as
    tried: the fourth literals compared with the triple's rows. Past
    TRIPLES triples, the clauses found so far (as `limit` cuts three)."""
    n = len(useful)
    G, not_false = _shuffled(F, useful, rows)
    out: list[Clause] = []
    tried = triples = 0
    for i in range(n):
        f1 = G[i]
        for j in range(i + 1, n):
            f2 = G[j]
            f12 = f1 & f2
            if not f12:
                continue
            for k in range(j + 1, n):
                f3 = G[k]
                f123 = f12 & f3
                if not f123:
                    continue
                triples += 1
                if triples > TRIPLES:
                    return out, tried
                mask, rest = -(1 << (k + 1)), f123        # the positions after k
                for _ in range(PROBES):
                    low = rest & -rest
                    mask &= not_false[low.bit_length() - 1]
                    rest ^= low
                    if not mask or not rest:
                        break
                if not mask:
                    continue
                f13, f23 = f1 & f3, f2 & f3
                while mask:
                    low = mask & -mask
                    mask ^= low
                    tried += 1
                    p = low.bit_length() - 1
                    f4 = G[p]
                    if f123 & f4 or not (f12 & f4 and f13 & f4 and f23 & f4):
                        continue
                    clause = (useful[i], useful[j], useful[k], useful[p])
                    if not trivial.covers(clause):
                        out.append(clause)
    return out, tried


def _shuffled(F: list[int], useful: list[int], rows: int) -> tuple[list[int], list[int]]:
    """(per useful literal, its rows false as a bitset, the rows in a fixed
    shuffled order; per row in that order, the positions in `useful` of the
    literals not false there, as a bitset)."""
    size = (rows + 7) // 8
    false = np.array([np.unpackbits(np.frombuffer(F[lit].to_bytes(size, "little"), dtype=np.uint8),
                                    bitorder="little")[:rows] for lit in useful], dtype=bool).reshape(len(useful), rows)
    false = false[:, np.random.default_rng(0).permutation(rows)]
    by_literal = [_bitset(col) for col in false]
    by_row = [_bitset(row) for row in ~false.T]
    return by_literal, by_row


class _Trivial:
    """Clauses the types make true: literals on one cell that cover every
    value the cell can take (a Bool cell and its negation; `c = a | c = b`
    over an enum of two elements; `c <= 1 | c > 0`)."""

    def __init__(self, atoms: list[Atom], schema: Schema, codes: Codes, values: dict) -> None:
        self.atoms, self.schema, self.codes, self.values = atoms, schema, codes, values

    def _domain(self, cell: CellT) -> list:
        typ = self.schema.symbols[cell.symbol].type
        seen = self.values.get(cell.symbol, [])
        if isinstance(typ, Bool):
            return [0, 1]
        if isinstance(typ, Int):
            if typ.lo is not None and typ.hi is not None and typ.hi - typ.lo <= 64:
                return list(range(typ.lo, typ.hi + 1))
            return sorted(set(seen) | {min(seen, default=0) - 1, max(seen, default=0) + 1})
        if isinstance(typ, Enum):
            return [self.codes.code(e) for e in self.schema.elements(typ.sort)]
        assert isinstance(typ, Str)
        return [self.codes.code(str(v)) for v in seen] + [-1]     # -1: any other string

    def _holds(self, lit: int, v) -> bool:
        a = self.atoms[lit >> 1]
        typ = self.schema.symbols[a.cell.symbol].type
        k = a.other if isinstance(typ, (Int, Bool)) else self.codes.code(str(a.other)) if a.other is not None else 0
        t = v == 1 if a.kind == "bool" else v == k if a.kind == "eq" else v <= k
        return t != bool(lit & 1)

    def covers(self, lits) -> bool:
        cells = {self.atoms[lit >> 1].cell for lit in lits}
        kinds = {self.atoms[lit >> 1].kind for lit in lits}
        if len(cells) != 1 or not kinds <= {"bool", "eq", "le"}:
            return False
        return all(any(self._holds(lit, v) for lit in lits) for v in self._domain(next(iter(cells))))

    def unit(self, lit: int) -> bool:
        return self.covers((lit,))

    def pair(self, l1: int, l2: int) -> bool:
        return self.covers((l1, l2))

    def triple(self, l1: int, l2: int, l3: int) -> bool:
        return self.covers((l1, l2, l3))
