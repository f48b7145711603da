"""The Spark engine's job as plain values: what a Python worker needs to
rebuild the spec and its properties (the registry name, variant, bounds)."""

from __future__ import annotations

from ..errors import EngineError
from ..job import Job
from .spark_worker import WorkerJob


def worker_job(job: Job) -> WorkerJob:
    """The job as plain values a worker can rebuild it from."""
    from ...spec.registry import load_spec_class

    spec = job.spec
    model = job.model
    name = getattr(model, "spec_name", None) or spec.name
    try:
        cls = load_spec_class(name)
    except Exception:
        cls = None
    if cls is not type(spec):
        raise EngineError(f"engine 'spark' runs only registered specs; {type(spec).__name__} is not {name!r} in the registry")
    for n in job.properties:
        if spec.invariants.get(n) is None:
            raise EngineError(f"engine 'spark': property {n!r} is not one of spec {name}'s invariants")
    return WorkerJob(
        spec=name, variant=spec.variant, constants=tuple(sorted(spec.constants.items())),
        properties=tuple(job.properties), witnesses=tuple(job.witnesses),
        deadlock=job.deadlock, z3_eval=job.z3_eval,
    )
