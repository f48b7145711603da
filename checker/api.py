"""The Python API: check a model file, get a `Report`. The CLI, the CI gate and
the pytest plugin are thin layers over `check_model`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..spec.api import Spec
from .engines import get_engine
from .errors import EngineError, explained
from .failures import budget_alarm
from .invariants import check_sanity
from .itf import write_trace
from .job import Job, Outcome
from .liveness.check import check_temporal
from .liveness.check import resolve as resolve_temporal
from .model import Model, load_model
from .options import Options


@dataclass
class Report:
    model: Model
    spec: Spec
    outcome: Outcome

    @property
    def verdict(self) -> str:
        return self.outcome.verdict

    def to_json(self) -> dict[str, Any]:
        o = self.outcome
        return {
            "model": str(self.model.path),
            "spec": self.spec.name,
            "variant": self.spec.variant,
            "bounds": dict(self.spec.constants),
            "engine": o.engine,
            "verdict": o.verdict,
            "distinct_states": o.distinct_states,
            "states_generated": o.states_generated,
            "depth": o.depth,
            "seconds": round(o.seconds, 3),
            "states_per_second": round(o.states_per_second),
            "peak_memory_mb": round(o.peak_memory_mb, 1),
            "violations": [
                {"property": v.property, "kind": v.kind, "trace": v.trace_file, "length": v.length}
                for v in o.violations
            ],
            "witnesses": o.witnesses_found,
            "incomplete_reason": o.incomplete_reason,
            "checked_depth": o.checked_depth,
            "coverage": o.coverage,
            **o.extra,
        }


def check_model(
    model: str | Path | Model,
    *,
    engine: str | None = None,
    z3_eval: bool = False,
    max_states: int | None = None,
    max_seconds: float | None = None,
    max_depth: int | None = None,
    out_dir: str | Path | None = None,
    progress=None,
    keep_graph: bool = True,
    options: Options | dict | None = None,
) -> Report:
    """Load, validate and check one model. Raises ModelError / PropertyError /
    EngineError on bad input; writes a trace per violation when `out_dir` is set.
    `options` are the engine's (checker/options.py), or a dict of the same names."""
    m = model if isinstance(model, Model) else load_model(model)
    options = Options.of(m.reductions(Options.of(options).asked()))  # the model file's reductions, then these
    engine = engine or m.raw.get("engine") or "bfs"
    spec = m.instantiate()
    props = m.selected_properties(spec)
    witnesses = {w: spec.witnesses[w] for w in m.witnesses}
    check_sanity(spec.schema, {**props, **witnesses}, accept_vacuous=m.raw.get("vacuous", ()))
    if m.temporal:
        resolve_temporal(m, spec)
    options.validate(m, engine, keep_graph=keep_graph)  # before exploring; liveness needs the whole bfs graph
    if max_depth is not None and engine != "bfs":
        raise EngineError(f"--max-depth bounds the bfs engine only, not {engine!r}")
    if max_depth is None and engine == "bfs":  # a model file's max_depth bounds bfs; other engines have their own
        max_depth = m.raw.get("max_depth")
    run = get_engine(engine)
    job = Job(
        spec=spec,
        properties=props,
        witnesses=witnesses,
        deadlock=m.deadlock,
        z3_eval=z3_eval,
        max_states=max_states if max_states is not None else m.raw.get("max_states"),
        max_seconds=max_seconds if max_seconds is not None else m.raw.get("max_seconds"),
        max_depth=max_depth,
        keep_graph=keep_graph,
        progress=progress,
        options=options,
        model=m,
    )
    with budget_alarm(job.max_seconds if engine != "spark" else None) as expired:  # Spark runs specs elsewhere
        try:
            outcome = run(job)
        except Exception as exc:  # a user spec's bug that made the engine fail: its guard names it
            why = explained(spec, exc)
            if why is exc:
                raise
            raise why from exc
    if expired and outcome.incomplete_reason == "interrupted":  # the budget stopped code that did not return
        outcome.incomplete_reason = f"max-seconds {job.max_seconds:g} reached"
    if options.resume:
        _check_resumed_paths(spec, outcome, options.resume)
    check_temporal(m, spec, outcome)
    if out_dir is not None:
        write_traces(m, spec, outcome, out_dir)
    return Report(m, spec, outcome)


def _check_resumed_paths(spec: Spec, outcome: Outcome, where) -> None:
    """A resumed run's counterexamples are rebuilt from the checkpoint's
    parent pointers, which a crafted checkpoint can forge: each one must be a
    real run of the spec (an initial state, then successors by `next`), or
    the checkpoint is refused. Its counts cannot be checked this way; the
    README says a checkpoint must come from a trusted run."""
    from .engines.checkpoint import CheckpointError

    for v in outcome.violations:
        if not v.path:
            continue
        (_, first), *steps = v.path
        ok = first in set(spec.init_states())
        prev = first
        for action, state in steps if ok else ():
            if not any(a == action and t == state for a, t in spec.next(prev)):
                ok = False
                break
            prev = state
        if not ok:
            raise CheckpointError(f"{where}: the counterexample of {v.property} rebuilt from this checkpoint is "
                                  f"not a run of {spec.describe()}: the checkpoint is damaged or forged")


def write_traces(m: Model, spec: Spec, outcome: Outcome, out_dir: str | Path) -> None:
    """Write each violation's trace; an OSError reaches the caller (`check`
    prints the verdict first, then the failed write in one line)."""
    out = Path(out_dir)
    many = sum(1 for v in outcome.violations if v.path) > 1
    for v in outcome.violations:
        if not v.path:
            continue
        name = f"{m.name}.{v.property}" if many else m.name
        dest = out / f"{name}.itf.json"
        try:
            v.trace_file = str(write_trace(
                dest, spec, v.path, loop=v.loop,
                meta={"model": str(m.path), "property": v.property, "kind": v.kind, "engine": outcome.engine,
                      **getattr(v, "trace_meta", {})},
            ))
        except OSError as exc:  # name the trace, not the temp file the write failed on
            raise OSError(exc.errno, exc.strerror or str(exc), str(dest)) from None
