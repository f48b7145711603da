"""Bounded symbolic checking: the relation unrolled step by step, asking Z3
at each depth k whether some state k steps from an initial state violates a
property (or, with `deadlock`, has no successor). The first depth that
answers yes gives a shortest violation, as bfs's is; its Z3 model is read
back as actions and cells, then replayed through the spec's own `next`, so
the trace is made of the spec's states and `show` and `replay` take it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import z3

from ..invariants import compile_checker
from .induction import solver
from .system import SymbolicError, System, show_action


@dataclass
class Bounded:
    verdict: str                 # "violation", "none" (no violation within `depth` steps), "unknown"
    depth: int                   # steps checked completely
    violated: str | None = None   # the property (or "Deadlock")
    kind: str = "invariant"
    path: list = field(default_factory=list)   # [(action | None, state), ...]
    seconds: float = 0.0
    unknown: str = ""

    @property
    def length(self) -> int:
        return len(self.path)


def bounded(system: System, properties: Mapping[str, z3.BoolRef], max_depth: int, deadlock: bool = False,
            timeout_ms: int = 0, on_depth: Callable[[int, float], Any] | None = None) -> Bounded:
    t0 = time.process_time()
    sv = solver(timeout_ms)
    frames = [system.frame(0)]
    acts: list = []
    sv.add(system.init(frames[0]))
    for k in range(max_depth + 1):
        fk = frames[k]
        bad = [z3.Not(p) for p in system.clauses(fk, properties).values()]
        if deadlock:
            bad.append(z3.Not(system.enabled(fk)))
        lit = z3.Bool(f"bad@{k}")
        sv.add(z3.Implies(lit, z3.Or(bad)))
        r = sv.check(lit)
        if on_depth:
            on_depth(k, time.process_time() - t0)
        if r == z3.sat:
            m = sv.model()
            cells = [f.read(m) for f in frames]
            labels = [system.label(m, a) for a in acts]
            path = replay(system, cells, labels)
            prop, kind = _which(system, properties, path[-1][1], deadlock)
            return Bounded("violation", k, prop, kind, path, time.process_time() - t0)
        if r != z3.unsat:
            return Bounded("unknown", k - 1, seconds=time.process_time() - t0,
                           unknown=f"depth {k}: {sv.reason_unknown()}")
        if k < max_depth:
            frames.append(system.frame(k + 1))
            acts.append(system.act(k))
            sv.add(system.step(fk, frames[k + 1], acts[k]))
    return Bounded("none", max_depth, seconds=time.process_time() - t0)


def replay(system: System, cells: list[dict], labels: list) -> list:
    """The spec's states along Z3's path: each step the successor `next`
    yields under Z3's label whose cells are Z3's. A step it cannot follow
    means the relation and the spec disagree (the agreement test's job)."""
    rel = system.relation
    spec = rel.spec
    s = next((s0 for s0 in spec.init_states() if rel.cells(s0) == cells[0]), None)
    if s is None:
        raise SymbolicError(f"the relation of {spec.name} starts from a state the spec does not: "
                            "the relation and the spec disagree")
    path = [(None, s)]
    for i, label in enumerate(labels):
        t = next((t for a, t in spec.next(s) if a == label and rel.cells(t) == cells[i + 1]), None)
        if t is None:
            raise SymbolicError(f"step {i + 1} of the symbolic trace, {show_action(label)}, is not a step of "
                                f"{spec.describe()}: the relation and the spec disagree")
        path.append((label, t))
        s = t
    return path


def _which(system: System, properties, s, deadlock: bool) -> tuple[str, str]:
    spec = system.relation.spec
    bad = compile_checker(spec.schema, properties)(spec.observe(s)) if properties else None
    if bad is not None:
        return bad, "invariant"
    if deadlock and not any(True for _ in spec.next(s)):
        return "Deadlock", "deadlock"
    raise SymbolicError(f"Z3 found a violation in a state where the spec's properties hold: the relation's "
                        f"observation and {spec.name}'s disagree")
