"""The engines, by name. Each module has `run(job: Job) -> Outcome`."""

from __future__ import annotations

import importlib

ENGINES = {
    "bfs": "bfs",
    "spark": "spark",
    "simulate": "simulate",
}


class EngineError(ValueError):
    pass


def get_engine(name: str):
    mod = ENGINES.get(name)
    if mod is None:
        raise EngineError(f"unknown engine {name!r} (known: {', '.join(ENGINES)})")
    try:
        return importlib.import_module(f"{__name__}.{mod}").run
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith(__name__):
            raise EngineError(f"engine {name!r} is not available in this installation") from None
        if exc.name == "pyspark":
            raise EngineError("engine 'spark' needs pyspark: pip install 'txncheck[spark]'") from None
        raise
