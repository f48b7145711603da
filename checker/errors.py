"""The errors the checker raises for bad input, below every other module so
that any of them can raise one without importing the module that owns it.

`EngineError` is bad input to an engine (an option it lacks, two options
that exclude each other, a damaged checkpoint): one line, exit 2
(checker/failures.py). `checker.engines` re-exports it, where callers have
always found it.
"""

from __future__ import annotations


class EngineError(ValueError):
    """An engine refuses the job: one line, exit 2."""


class ModelError(ValueError):
    """A bad model file, or options that cannot check it; the message names the file."""


class ReductionError(EngineError):
    """A reduction cannot apply to this spec or these options."""


class EnvironmentFault(Exception):
    """The machine, not the input: a missing Java, a JVM that does not start (exit 3)."""
