"""The hook through which symbolic values ask for a branch.

While the deriver runs a spec's code (explore.py), `current` is the
exploration: a symbolic condition that Python needs as a `bool` asks it to
`decide`, and a symbolic value that must become a Python value (a dict key,
an index, a string) asks it to `choose` among its cases. Outside a run,
either is an error: a symbolic value never escapes the deriver.
"""

from __future__ import annotations

from typing import Any, Sequence

import z3

current: list = [None]


class OutsideSubset(BaseException):
    """The spec's code does something the deriver cannot follow; the
    message names the construct (explore.py adds the file and line)."""


def decide(cond: z3.BoolRef, iterating: bool = False) -> bool:
    run = current[0]
    if run is None:
        raise OutsideSubset("a symbolic value was used outside the derivation")
    return run.decide(cond, iterating)


def choose(cases: Sequence[tuple[z3.BoolRef, Any]], what: str) -> Any:
    """The value of the first case whose condition holds; the cases cover
    every value the symbolic one can take (the last is taken when every
    other is false)."""
    if not cases:
        raise OutsideSubset(f"{what}: no value is possible")
    for cond, value in cases[:-1]:
        if decide(cond):
            return value
    return cases[-1][1]
