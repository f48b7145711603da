"""Reachable states to learn candidate lemmas from (`prove --infer`): the
explicit bfs engine's exhaustive search of the model and of smaller bounds
of the same spec, each state as the cells of the spec's schema (its
observation: the properties' vocabulary, which the lemmas are written in).

Which bounds: the model's own, each integer bound one smaller and each
array bound one element shorter (one at a time, then all together), or the
model file's `[prove.infer] samples` (tables of constants laid over the
model's). Bounds the spec refuses (a quorum system without an acceptor
it names) are skipped. A search that reaches its state budget stops there:
its states are still reachable, so its lemmas are still candidates, only
weaker evidence; the report says which searches were complete. When the
model's own search stops short, seeded random walks at its bounds add
states deeper than breadth-first search reaches (reachable too: they only
remove candidates that are false).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np

from ...spec.api import Spec, SpecError
from ...spec.schema import Bool, Int, Schema
from ...spec.symbolic import Key, valuation
from ..errors import ModelError
from ..model import Model
from .agreement import walk

PER_INSTANCE = 20_000     # states explored per set of bounds
TOTAL = 100_000           # states over all of them
WALKS = 20_000            # states of random walks at the model's bounds, when its search stops short
WALK_DEPTH = 200


@dataclass
class Instance:
    constants: dict[str, Any]
    schema: Schema                # the spec's, at these bounds
    states: int
    complete: bool
    seconds: float
    columns: dict[Key, int]       # cell -> column of `matrix`
    matrix: np.ndarray            # one row per state, one column per cell (see `Codes`)
    how: str = "bfs"              # or "walks"


@dataclass
class Violated:
    """A property a sampled search found false: inference stops there."""
    constants: dict[str, Any]
    prop: str
    length: int


class Codes:
    """Cell values as integers: a Bool as 0/1, an integer as itself, a string
    or an enum element by its number here (shared by every instance, so
    that one value has one code)."""

    def __init__(self) -> None:
        self.of: dict[str, int] = {}

    def code(self, v: str) -> int:
        c = self.of.get(v)
        if c is None:
            c = self.of[v] = len(self.of)
        return c

    def value(self, c: int) -> str:
        return next(k for k, x in self.of.items() if x == c)


def bounds_to_sample(model: Model, spec: Spec) -> list[dict[str, Any]]:
    """The constants of each search, the model's first."""
    own = dict(spec.constants)
    asked = model.raw.get("prove", {}).get("infer", {}).get("samples")
    if asked is not None:
        if not isinstance(asked, list) or not all(isinstance(x, dict) for x in asked):
            raise ModelError(f"{model.path}: [prove.infer] samples must be an array of tables of constants")
        return [{**own, **x} for x in asked]
    shrunk: dict[str, Any] = {}   # bound -> one step smaller (an int, or a tuple less its last)
    for name, b in spec.bounds.items():
        v = own[name]
        if isinstance(v, bool) or b.reduction:
            continue
        if isinstance(v, int) and v - 1 >= (b.lo if b.lo is not None else 1):
            shrunk[name] = v - 1
        elif isinstance(v, tuple) and len(v) > 1:
            shrunk[name] = v[:-1]
    out = [own] + [{**own, name: v} for name, v in shrunk.items()]
    if len(shrunk) > 1:
        out.append({**own, **shrunk})
    return out


def sample(model: Model, spec: Spec, codes: Codes, *, per_instance: int = PER_INSTANCE, total: int = TOTAL,
           walks: int = WALKS, say: Callable[[str], None] = lambda _: None) -> tuple[list[Instance], Violated | None]:
    from ..api import check_model

    out: list[Instance] = []
    left = total
    asked = "samples" in model.raw.get("prove", {}).get("infer", {})
    for constants in bounds_to_sample(model, spec):
        if left <= 0:
            break
        # a property over two elements is vacuous where a sort has one: no matter for sampling
        m = replace(model, constants=constants, raw={**model.raw, "vacuous": list(spec.invariants)})
        try:
            m.instantiate()
        except (ModelError, SpecError) as exc:
            if asked:       # bounds the model file names must be bounds of the spec
                raise ModelError(f"{model.path}: [prove.infer] samples: {str(exc).removeprefix(f'{model.path}: ')}")
            continue
        t0 = time.process_time()
        report = check_model(m, engine="bfs", max_states=min(per_instance, left), keep_graph=False,
                             options={"exact": True, "symmetry": False, "por": False})
        o = report.outcome
        if o.violations:
            v = o.violations[0]
            return out, Violated(constants, v.property, v.length)
        states = o.exploration.states
        inst = _encode(constants, report.spec, states, codes)
        inst.complete = o.verdict.value == "ok"
        inst.seconds = time.process_time() - t0
        out.append(inst)
        left -= len(states)
        say(f"sampled {show_bounds(constants, spec.constants)}: {len(states):,} states"
            f"{'' if inst.complete else ' (budget reached: not every reachable state)'}")
        if constants == dict(spec.constants) and not inst.complete and walks:
            t0 = time.process_time()
            seen = list(dict.fromkeys(walk(report.spec, walks, seed=0, depth=WALK_DEPTH)))
            more = _encode(constants, report.spec, seen, codes)
            more.how, more.seconds = "walks", time.process_time() - t0
            out.append(more)
            say(f"random walks at the model's bounds: {len(seen):,} distinct states")
    return out, None


def _encode(constants, spec: Spec, states: list, codes: Codes) -> Instance:
    schema = spec.schema
    first = valuation(schema, spec.observe(states[0]))
    columns = {k: i for i, k in enumerate(first)}
    types = [schema.symbols[k[0]].type for k in first]
    conv = [(lambda v: int(v)) if isinstance(t, (Bool, Int)) else (lambda v: codes.code(str(v))) for t in types]
    matrix = np.empty((len(states), len(columns)), dtype=np.int32)
    for i, s in enumerate(states):
        cells = valuation(schema, spec.observe(s))
        matrix[i] = [f(cells[k]) for f, k in zip(conv, columns)]
    return Instance(constants, schema, len(states), False, 0.0, columns, matrix)


def show_bounds(constants: dict, own: dict) -> str:
    """The bounds that differ from `own`, as `rm=2`."""
    diff = {k: v for k, v in constants.items() if own.get(k) != v}
    if not diff:
        return "the model's bounds"
    return ", ".join(f"{k}={_short(v)}" for k, v in diff.items())


def _short(v) -> str:
    if isinstance(v, tuple):
        return "[" + ", ".join(_short(x) for x in v) + "]"
    return str(v)
