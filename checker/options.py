"""Every option of a run, in one typed, immutable object, with every rule
about which options go together in one place (`Options.validate`), as
Stateright's `CheckerBuilder` and Hypothesis's `settings` keep them.

An engine receives the job's `Options` and never changes them: a run that
needs different options (the parallel coordinator keeps fingerprints; the
gate runs a liveness model in one process) derives new ones with
`dataclasses.replace`. The messages are the command line's, one line each,
and their exit code is 2 (checker/failures.py).
"""

from __future__ import annotations

import multiprocessing
import os
from dataclasses import dataclass, fields, replace
from typing import Any, Mapping

from .errors import EngineError, ModelError, ReductionError

# The options each engine accepts (by field name). `workers` above 1 makes
# bfs run engines/parallel/.
ENGINE_OPTIONS: dict[str, frozenset[str]] = {
    "bfs": frozenset({"workers", "checkpoint", "resume", "checkpoint_interval",
                      "symmetry", "por", "fingerprints", "exact", "compact"}),
    # spark's visited set is always 64-bit fingerprints and simulate's is always
    # exact, so each accepts the flag that says so (a model file's
    # `fingerprints = true` runs on spark; `--exact` turns it off for simulate).
    "spark": frozenset({"master", "checkpoint", "resume", "stop_after_level", "fingerprints"}),
    "simulate": frozenset({"seed", "walks", "walk_depth", "exact"}),
}

# What `--workers N` (N > 1) refuses, with the reason (ADR 0005).
REFUSED_BY_WORKERS = {
    "exact": "--workers keeps 64-bit fingerprints, so it excludes --exact",
    "compact": "--workers keeps fingerprints, not states, so --compact has nothing to share",
    "por": "--por's cycle proviso needs the whole visited set in one process; drop --workers",
    "checkpoint": "--workers does not write checkpoints; drop one of them",
    "resume": "--workers does not resume checkpoints; drop one of them",
}

# The most `--workers`: each is a forked process holding its own part of a
# level and its own numbering of field values, and at each level's end the
# workers keep their shares in turn, each looking its proposals up in every
# later worker's table (parallel/worker.py: `share`, `quotas`), so memory
# grows with N and that end with N squared; past the machine's cores (64 is
# a large machine) more workers only cost. A fixed number, not a multiple of
# this machine's cores, so that a command line means the same on every
# machine (tests run 3 workers on 2 cores).
MAX_WORKERS = 64

# The command-line switch that turns off a reduction a model file switches on.
OFF_SWITCH = {"fingerprints": "--exact", "symmetry": "--no-symmetry", "por": "--no-por"}

# What the liveness check needs the complete, exact bfs graph for (checker/liveness/).
REFUSED_BY_TEMPORAL = ("symmetry", "por", "fingerprints", "workers")


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


@dataclass(frozen=True, kw_only=True)
class Options:
    """The engine options of one run. `symmetry` and `por` are None when not
    given, and False for an explicit --no-symmetry / --no-por, which turns a
    model file's key off (`Model.reductions`)."""

    # bfs
    workers: int = 1
    checkpoint: str | None = None
    resume: str | None = None
    checkpoint_interval: float | None = None
    symmetry: bool | None = None
    por: bool | None = None
    fingerprints: bool = False
    exact: bool = False
    compact: bool = False
    # spark
    master: str | None = None
    stop_after_level: int | None = None  # the Python API only: stop, incomplete, after that level
    # simulate
    seed: int | None = None
    walks: int | None = None
    walk_depth: int | None = None

    @classmethod
    def of(cls, given: Options | Mapping[str, Any] | None) -> Options:
        """Options from the Python API's dict (names as the fields), or as given."""
        if given is None:
            return cls()
        if isinstance(given, Options):
            return given
        known = {f.name for f in fields(cls)}
        for name in sorted(given):
            if name not in known:
                raise EngineError(f"no engine supports {flag(name)}")
        return cls(**{k: v for k, v in given.items() if v is not None})

    def asked(self) -> dict[str, Any]:
        """The options given a value other than the default, by name."""
        return {f.name: v for f in fields(self) if (v := getattr(self, f.name)) != f.default}

    def validate(self, model=None, engine: str = "bfs", *, keep_graph: bool = True) -> None:
        """Refuse, before any exploring, options that do not go together, or
        with this model (its temporal properties) or this engine. `model` is a
        checker.model.Model, or None for a job built without a model file."""
        temporal = model is not None and bool(getattr(model, "temporal", None))
        if temporal:  # the liveness check runs on the complete bfs graph
            if engine != "bfs":
                raise ModelError(f"{model.path}: temporal properties are checked by the bfs engine only, not {engine!r}")
            if not keep_graph:
                raise ModelError(f"{model.path}: temporal properties need the state graph; drop --no-graph")
            for name in REFUSED_BY_TEMPORAL:
                if self._on(name) or model.raw.get(name):
                    raise ModelError(f"{model.path}: temporal properties cannot be checked with {flag(name)}")
        supported = ENGINE_OPTIONS.get(engine)
        if supported is None:
            return  # an unknown engine: checker.engines.get_engine says so
        for name in sorted(self.asked()):
            if name not in supported and self._on(name):
                hint = ""
                if model is not None and model.raw.get(name) and name in OFF_SWITCH:
                    hint = f" ({model.path.name} switches it on; {OFF_SWITCH[name]} turns it off)"
                raise EngineError(f"engine {engine!r} does not support {flag(name)}{hint}")
        if engine == "bfs":
            self._validate_bfs(temporal)
        elif engine == "spark":
            ckpt, resume = self.checkpoint, self.resume
            if ckpt and resume and str(ckpt).rstrip("/") != str(resume).rstrip("/"):
                raise EngineError("--resume continues in its own directory: drop --checkpoint or give the same DIR")

    def _validate_bfs(self, temporal: bool) -> None:
        n = self.workers
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise EngineError(f"--workers {n!r}: give a whole number from 1 to {MAX_WORKERS}")
        if n > MAX_WORKERS:
            cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
            raise EngineError(f"--workers {n}: at most {MAX_WORKERS} (one per core is the most that helps; "
                              f"this machine has {cores})")
        if self.workers > 1:
            for name, why in REFUSED_BY_WORKERS.items():
                if getattr(self, name):
                    raise EngineError(why)
            if "fork" not in multiprocessing.get_all_start_methods():
                raise EngineError("--workers needs the fork start method, which this platform lacks")
        if self.fingerprints and self.exact:
            raise ReductionError("--exact and --fingerprints exclude each other")
        if self.fingerprints and self.compact:
            raise ReductionError("--compact shares the parts of stored states, and --fingerprints stores none; "
                                 "use one or the other")
        if self.fingerprints and (self.checkpoint or self.resume):
            raise ReductionError("--fingerprints does not keep the states a checkpoint needs; use one or the other")
        if (self.por or self.symmetry) and temporal:
            name = "--por" if self.por else "--symmetry"
            raise ReductionError(f"{name} preserves safety properties only, and this model has [temporal] properties")

    def for_gate(self, model) -> tuple[Options, str | None]:
        """The options the CI gate checks `model` with, and a note when they
        differ from these: --workers only changes how the search runs, so the
        gate does not fail a liveness model over it, but runs it in one process."""
        if getattr(model, "temporal", None) and self.workers > 1:
            return (replace(self, workers=1),
                    "in one process: --workers cannot keep the state graph that temporal properties need")
        return self, None

    def _on(self, name: str) -> bool:
        v = getattr(self, name)
        return v > 1 if name == "workers" else bool(v)

