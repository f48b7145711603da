"""What an engine is asked to do, and what it reports back.

Every engine takes a `Job` and returns an `Outcome`; the CLI, the CI gate and
the Python API only ever see these two types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Callable, Mapping

import z3

from ..spec.api import Action, Spec, State
from .invariants import Z3Evaluator, compile_checker
from .options import Options

# A path is the initial state followed by (action, state) steps.
Path = list[tuple[Action | None, State]]


@dataclass
class Job:
    spec: Spec
    properties: Mapping[str, z3.BoolRef]
    witnesses: Mapping[str, z3.BoolRef] = field(default_factory=dict)
    deadlock: bool = False
    z3_eval: bool = False
    max_states: int | None = None
    max_seconds: float | None = None
    max_depth: int | None = None  # bfs: stop once every state to this depth is found and checked
    keep_graph: bool = True
    progress: Any = None  # checker.progress.Progress or None
    options: Options = field(default_factory=Options)  # a dict of the same names is read into one
    model: Any = None  # the checker.model.Model the job comes from, if any

    def __post_init__(self) -> None:
        self.options = Options.of(self.options)

    def validate(self, engine: str) -> None:
        """Fail with one line if the options do not go with this engine or model."""
        self.options.validate(self.model, engine, keep_graph=self.keep_graph)

    def depth_reached(self, depth: int) -> str | None:
        """The incomplete reason once a bfs has found and checked every state of
        level `depth` and that is `max_depth`; None to go on."""
        if self.max_depth is not None and depth >= self.max_depth:
            return f"max-depth {self.max_depth} reached"
        return None

    def invariant_checker(self) -> Callable[[Mapping], str | None]:
        """obs -> name of the first violated property, or None."""
        if not self.properties:
            return lambda o: None
        if self.z3_eval:
            return Z3Evaluator(self.spec.schema, self.properties).first_violation
        return compile_checker(self.spec.schema, self.properties)

    def witness_checker(self, names) -> Callable[[Mapping], list[str]]:
        """obs -> the names among `names` whose witness holds."""
        names = list(names)
        if self.z3_eval:
            ev = Z3Evaluator(self.spec.schema, {n: self.witnesses[n] for n in names})
            return lambda o: [n for n in names if ev.evaluate(self.witnesses[n], o)]
        from .invariants import compile_predicate

        preds = [(n, compile_predicate(self.spec.schema, self.witnesses[n])) for n in names]
        return lambda o: [n for n, p in preds if p(o)]


class Verdict(StrEnum):
    """An outcome's verdict; each is its value as a str, so JSON and text output read the same."""

    OK = "ok"
    VIOLATION = "violation"
    INCOMPLETE = "incomplete"


class ViolationKind(StrEnum):
    INVARIANT = "invariant"  # a reachable state violates a property
    DEADLOCK = "deadlock"  # a reachable state has no successor (models with deadlock = true)
    WITNESS = "witness"  # no reachable state satisfies a witness ("sometimes")
    LIVENESS = "liveness"  # a fair lasso violates a temporal property


@dataclass
class Violation:
    property: str
    kind: ViolationKind
    path: Path | None = None  # shortest path to the bad state (None for a missing witness)
    loop: int | None = None   # for lassos: index in path where the cycle starts
    trace_file: str | None = None

    @property  # type: ignore[operator]  # the field `property` above is no name at run time
    def length(self) -> int:
        return len(self.path) if self.path else 0


@dataclass
class Outcome:
    engine: str
    verdict: Verdict
    distinct_states: int
    states_generated: int
    depth: int
    seconds: float
    violations: list[Violation] = field(default_factory=list)
    coverage: dict[str, dict[str, int]] = field(default_factory=dict)
    peak_memory_mb: float = 0.0
    incomplete_reason: str | None = None
    witnesses_found: dict[str, bool] = field(default_factory=dict)
    exploration: Any = None  # engine-specific handle (bfs: the Exploration with the graph)
    extra: dict = field(default_factory=dict)

    @property
    def checked_depth(self) -> int | None:
        """The depth to which every state was found and checked: all of them when
        the run finished; for an incomplete bfs run, the level it was expanding (or
        stopped at, for max_depth), since bfs checks a state when it finds it; for
        spark, the levels it expanded, since it checks a level's states then. None
        when unknown: a violation, another engine, or --por (whose paths may be
        longer than the shortest). Deadlock is checked when a state is expanded,
        so only below this depth in an incomplete run."""
        if self.verdict == Verdict.OK:
            return self.depth
        if self.verdict == Verdict.INCOMPLETE and self.engine == "bfs" and self.depth \
                and "por" not in (self.extra.get("reductions") or {}):
            return self.depth
        if self.verdict == Verdict.INCOMPLETE and self.engine == "spark":   # the levels it expanded
            return (self.extra.get("spark") or {}).get("checked_depth") or None
        return None

    def checked_depth_text(self) -> str:
        """What `checked_depth` establishes, in words (for an incomplete run)."""
        d = self.checked_depth
        assert d is not None, "asked of a run that checked some depth"
        return (f"every state up to depth {d} was checked: no violation within "
                f"{d - 1} step{'' if d == 2 else 's'} of an initial state")

    @property
    def states_per_second(self) -> float:
        return self.states_generated / self.seconds if self.seconds > 0 else 0.0
