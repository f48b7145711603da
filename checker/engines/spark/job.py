"""The Spark engine's job as plain values: what a Python worker needs to
rebuild the spec and its properties (where its code comes from, variant,
bounds, property names)."""

from __future__ import annotations

from ...errors import EngineError
from ...job import Job
from . import ship as spark_ship
from .worker import WorkerJob


def worker_job(job: Job) -> WorkerJob:
    """The job as plain values a worker can rebuild it from."""
    spec = job.spec
    name = getattr(job.model, "spec_name", None) or spec.name
    for n in job.properties:
        if spec.invariants.get(n) is None:
            raise EngineError(f"engine 'spark': property {n!r} is not one of spec {name}'s invariants")
    source = spec_source(type(spec), name, getattr(job.model, "path", None))
    spark_ship.register(source, type(spec))
    return WorkerJob(
        spec=name, variant=spec.variant, constants=tuple(sorted(spec.constants.items())),
        properties=tuple(job.properties), witnesses=tuple(job.witnesses),
        deadlock=job.deadlock, z3_eval=job.z3_eval, source=source,
    )


def spec_source(cls: type, ref: str, model_path) -> spark_ship.SpecSource:
    """A spec a name imports on an executor (a built-in, an entry point, a
    module) goes by that name; any other, its files (spark_ship.shipped)."""
    from ....spec.registry import origin, resolve

    try:
        where = origin(ref, model_path.parent if model_path is not None else None)
    except Exception:
        where = None
    if where is not None and not where.startswith("file "):
        try:
            same = resolve(ref).cls is cls
        except Exception:
            same = False
        if same:
            return spark_ship.by_name(ref)
    if cls.__module__.startswith("txncheck."):
        return spark_ship.by_name(f"{cls.__module__}:{cls.__qualname__}")
    return spark_ship.shipped(cls)
