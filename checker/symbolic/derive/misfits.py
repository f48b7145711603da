"""Where a successor does not fit the state's shape, and how the shape
widens (cells.fit reports each place; relation.py widens and runs again).

A concrete value outside its place widens the place. A symbolic int is
widened by two rules, each a switch of the derivation:

- `copies`: a term that only moves values (intjoin.copied: a cell, a
  numeral, an If of them) widens its place to the term's range; no
  arithmetic, so it settles (PIP-473's hold, the ledger's length at a
  recovery).
- `guarded`: an int computed with arithmetic (`rd + 1`) whose interval
  leaves its place is bounded by Z3 under the path condition that yields
  it and the cells' declared ranges (the dispatcher reads only while
  `rd <= len(ledger)`, so `rd + 1` is at most the ledger's capacity plus
  one), and the place widens to that range. A counter no guard bounds
  would widen every round: a place that would widen so more than
  GUARDED_ROUNDS times goes back to the range it had before the rule
  touched it (the rule changes nothing there), and the proof's
  DeclaredBounds says whether a reachable state leaves it.

Either way the ranges are claims the proof checks (Types), never
assumptions: a rule only makes a range wide enough more often.
"""

from __future__ import annotations

from typing import Callable

import z3

from .intjoin import copied

GUARDED_ROUNDS = 2        # rounds one place widens by the `guarded` rule before it counts as a counter


class Guarded:
    """The `guarded` rule's memory across the derivation's rounds: per
    place, how often it widened and its shape before the first time."""

    def __init__(self) -> None:
        self.count: dict[tuple, int] = {}
        self.before: dict[tuple, object] = {}
        self.capped: set[tuple] = set()      # would widen once more: back to `before`, the rule off there
        self.undone: set[tuple] = set()

    def undo(self) -> list[tuple[tuple, object]]:
        """The places capped since the last call, with their shapes before."""
        new = sorted(self.capped - self.undone)
        self.undone.update(new)
        return [(p, self.before[p]) for p in new]


class Misfits:
    """What `fit` does with a value its place cannot hold: it notes the place
    and the value (the derivation widens the shape there and runs again).
    A sequence longer than its capacity is the exception unless `grow_seqs`:
    the capacity is what states of the model show, and the successor's
    length cell goes past it, which `Types` forbids, so a proof shows that no
    reachable state overflows. Widening instead never settles for a tuple
    appended to under a symbolic guard (ADR 0011)."""

    def __init__(self, grow_seqs: bool = False, copies: bool = True, guarded: Guarded | None = None) -> None:
        self.grow_seqs = grow_seqs
        self.copies = copies
        self.guarded = guarded    # None: the `guarded` rule is off
        self.places: list = []
        self.pending: list = []   # (place, its shape, SInt) of the successor being fitted
        self.widened: set = set() # places the `guarded` rule widened this round (once each, for its count)

    def __call__(self, path: tuple, v) -> None:
        self.places.append((path, v))

    def symbolic(self, path: tuple, shape, v) -> None:
        """A symbolic int whose interval is not known to lie in its place."""
        if self.copies and copied(v.t) and v.lo is not None and v.hi is not None:
            self(path, v)
        elif self.guarded is not None and path not in self.guarded.capped:
            self.pending.append((path, shape, v))

    def settle(self, bounds: Callable[[z3.ArithRef, int, int], tuple[int, int] | None]) -> None:
        """The pending ints of one successor, each bounded by `bounds` (Z3
        under its path condition; None where it stays within the range
        given): widen the places they leave."""
        g = self.guarded
        assert g is not None, "an int is pending only where the rule is on"
        for path, shape, v in self.pending:
            if path in g.capped:
                continue
            got = bounds(v.t, shape.lo, shape.hi)
            if got is None or shape.lo <= got[0] <= got[1] <= shape.hi:
                continue
            if path not in self.widened:
                if g.count.get(path, 0) >= GUARDED_ROUNDS:
                    g.capped.add(path)
                    continue
                g.count[path] = g.count.get(path, 0) + 1
                self.widened.add(path)
            g.before.setdefault(path, shape)
            self.places += [(path, got[0]), (path, got[1])]
        self.pending = []
