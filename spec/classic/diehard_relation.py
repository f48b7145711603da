"""DieHard as a symbolic relation: the six jug moves as guarded updates.
Pouring is one update whose new values are case splits, as the spec's one
successor per pour. `txncheck prove models/classic/diehard.toml --bounded 6`
finds the puzzle's 7-state solution, the shortest, as bfs does."""

from __future__ import annotations

import z3

from ..symbolic import Act, Relation


class DieHardRelation(Relation):
    def actions(self) -> list[Act]:
        B, S = self.spec.constants["big_capacity"], self.spec.constants["small_capacity"]
        fill_small, fill_big, empty_small, empty_big, small_to_big, big_to_small = self.spec._names
        yes = z3.BoolVal(True)

        def pour_into_big(f):
            fits = f.big + f.small <= B
            return yes, {f.big: z3.If(fits, f.big + f.small, B), f.small: z3.If(fits, 0, f.small - (B - f.big))}

        def pour_into_small(f):
            fits = f.big + f.small <= S
            return yes, {f.big: z3.If(fits, 0, f.big - (S - f.small)), f.small: z3.If(fits, f.big + f.small, S)}

        return [
            Act(fill_small, lambda f: (yes, {f.small: S})),
            Act(fill_big, lambda f: (yes, {f.big: B})),
            Act(empty_small, lambda f: (yes, {f.small: 0})),
            Act(empty_big, lambda f: (yes, {f.big: 0})),
            Act(small_to_big, pour_into_big),
            Act(big_to_small, pour_into_small),
        ]
