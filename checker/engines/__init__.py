"""The engines, by name. Each engine is a `run(job: Job) -> Outcome`.

`bfs` is the in-process search (`bfs.py`), or with `--workers N` (N > 1)
the same search with each level expanded by N forked processes
(`parallel/`, ADR 0005); this module chooses, so neither imports the
other. What both share lives below them, in checker/exploration.py.
"""

from __future__ import annotations

import importlib

from ..errors import EngineError  # noqa: F401 - where callers have always found it

ENGINES = {
    "bfs": "bfs",
    "spark": "spark",
    "simulate": "simulate",
}


def get_engine(name: str):
    mod = ENGINES.get(name)
    if mod is None:
        raise EngineError(f"unknown engine {name!r} (known: {', '.join(ENGINES)})")
    try:
        run = importlib.import_module(f"{__name__}.{mod}").run
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith(__name__):
            raise EngineError(f"engine {name!r} is not available in this installation") from None
        if exc.name == "pyspark":
            from ..failures import extra_packages

            raise EngineError(f"engine 'spark' needs pyspark: pip install {' '.join(extra_packages('spark'))}") from None
        raise
    return run_bfs if name == "bfs" else run


def run_bfs(job):
    """The bfs engine: with exact states in process (`bfs.py`), or with
    fingerprints (`--fingerprints`, or --workers N > 1) in `parallel/`, in
    process or in forked workers."""
    if job.options.workers > 1 or job.options.fingerprints:
        from .parallel import run
    else:
        from .bfs import run
    return run(job)
