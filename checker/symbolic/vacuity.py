"""What an inductive invariant alone does not show: that the proof is about
the protocol's steps, and that no reachable state is stuck.

* Dead actions: one satisfiability query per action label, the invariant and
  the label's guard. An action no state of the invariant enables can never
  fire, so a proof says nothing about it: a relation with an action dropped
  by mistake (or a guard made false) "proves" anything the other actions
  preserve. A model names the actions that are dead by design (`[prove]
  dead`, e.g. the clock's with `ticks = 0`); any other is a reason the proof
  is not claimed.
* Deadlock freedom (`deadlock = true`): no state of the invariant has every
  guard false. The invariant over-approximates the reachable states, so an
  unsat query proves that no reachable state is stuck; a sat one is not a
  deadlock, only a state the invariant does not rule out.
"""

from __future__ import annotations

import fnmatch
import time
from dataclasses import dataclass, field
from typing import Mapping

import z3

from ...spec.api import Action
from .derive.layout import RAISES
from .induction import invariant, solver
from .system import System, show_action


@dataclass
class Vacuity:
    dead: list[Action] = field(default_factory=list)      # labels no state of the invariant enables
    unknown: str = ""                                     # a query Z3 could not answer
    deadlock: str | None = None                           # None (not asked), "proved", "not proved"
    stuck: dict | None = None                             # a state of the invariant with no action enabled
    queries: int = 0
    seconds: float = 0.0


def check_vacuity(system: System, properties: Mapping[str, z3.BoolRef], lemmas: Mapping[str, z3.BoolRef],
                  deadlock: bool, timeout_ms: int = 0) -> Vacuity:
    """Under the invariant (which the caller has proved inductive): the
    action labels that can never fire and, if asked, whether a state can
    have none enabled."""
    t0 = time.process_time()
    out = Vacuity()
    f = system.frame("s")
    sv = solver(timeout_ms)
    sv.add(*invariant(system, f, properties, lemmas).values())
    guards: dict[Action, list[z3.BoolRef]] = {}
    for label, (guard, _) in zip(system.labels, system.updates(f)):
        guards.setdefault(label, []).append(guard)
    for label, gs in guards.items():
        if label[0] == RAISES:    # a path on which `next` raises: the proof itself shows it never fires
            continue
        out.queries += 1
        r = sv.check(z3.Or(gs))
        if r == z3.unsat:
            out.dead.append(label)
        elif r != z3.sat:
            out.unknown = f"whether {show_action(label)} can fire: {sv.reason_unknown()}"
            break
    if deadlock and not out.unknown:
        out.queries += 1
        r = sv.check(z3.Not(system.enabled(f)))
        if r == z3.unsat:
            out.deadlock = "proved"
        elif r == z3.sat:
            out.deadlock, out.stuck = "not proved", f.read(sv.model())
        else:
            out.unknown = f"deadlock freedom: {sv.reason_unknown()}"
    out.seconds = time.process_time() - t0
    return out


def matches(label: Action, names: list[str]) -> bool:
    """Does a model's `dead` list name this label: by action name (every
    instance), as `show_action` prints it (one instance), or by a shell
    pattern over that text (`*(seg=s2*`: every instance of a segment)?"""
    shown = show_action(label)
    return label[0] in names or shown in names or any(
        is_pattern(n) and fnmatch.fnmatchcase(shown, n) for n in names)


def is_pattern(name: str) -> bool:
    """A `dead` entry with a shell wildcard (`*`, `?`, `[`)."""
    return any(c in name for c in "*?[")
