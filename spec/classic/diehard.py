"""DieHard: the water-jug puzzle (DieHard.tla, tlaplus/Examples).

With a 5-gallon and a 3-gallon jug, get exactly 4 gallons into the big one.
The invariant NotSolved (big # 4) is meant to fail: its shortest
counterexample is the puzzle's solution.
"""

from __future__ import annotations

from typing import NamedTuple

import z3

from ..api import Bound, Spec
from ..schema import Int


class Jugs(NamedTuple):
    big: int
    small: int


class DieHard(Spec):
    name = "diehard"
    bounds = {
        "big_capacity": Bound(5, "capacity of the big jug", lo=1, hi=50),
        "small_capacity": Bound(3, "capacity of the small jug", lo=1, hi=50),
        "goal": Bound(4, "gallons wanted in the big jug", lo=0, hi=50),
    }

    def setup(self) -> None:
        B, S = self.constants["big_capacity"], self.constants["small_capacity"]
        big = self.schema.var("big", Int())
        small = self.schema.var("small", Int())
        self.invariants["TypeOK"] = z3.And(small >= 0, small <= S, big >= 0, big <= B)
        self.invariants["NotSolved"] = big != self.constants["goal"]
        self.witnesses["BothFull"] = z3.And(big == B, small == S)
        self._names = [(n, ()) for n in (
            "FillSmallJug", "FillBigJug", "EmptySmallJug", "EmptyBigJug", "SmallToBig", "BigToSmall")]

    def init_states(self):
        yield Jugs(0, 0)

    def next(self, s: Jugs):
        B, S = self.constants["big_capacity"], self.constants["small_capacity"]
        big, small = s
        fill_small, fill_big, empty_small, empty_big, small_to_big, big_to_small = self._names
        yield fill_small, Jugs(big, S)
        yield fill_big, Jugs(B, small)
        yield empty_small, Jugs(big, 0)
        yield empty_big, Jugs(0, small)
        if big + small <= B:
            yield small_to_big, Jugs(big + small, 0)
        else:
            yield small_to_big, Jugs(B, small - (B - big))
        if big + small <= S:
            yield big_to_small, Jugs(0, big + small)
        else:
            yield big_to_small, Jugs(big - (S - small), S)

    def observe(self, s: Jugs):
        return {"big": s.big, "small": s.small}
