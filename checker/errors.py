"""The checker's errors: one base class, `CheckerError`, below every other
module, so that any of them can raise one without importing the module that
reports it.

Each is one line for the user. Bad input (a model file, a trace, an option,
a property) exits 2; a fault of the machine (`EnvironmentFault`) or a report
that cannot be written exits 3 (checker/failures.py maps them). The errors
of one module's input live with that module and subclass `CheckerError`
(`EncodingError`, `PropertyError`, `TraceError`, `TemporalSyntaxError`,
`ReportError`, `CheckpointError`); the ones raised across layers live here.
`checker.engines` and `checker.model` re-export theirs, where callers have
always found them.
"""

from __future__ import annotations

import difflib


def did_you_mean(word: str, known) -> str:
    """`; did you mean 'x'?` for the known name nearest a misspelt one, else ''."""
    near = difflib.get_close_matches(word, sorted(known), n=1)
    return f"; did you mean {near[0]!r}?" if near else ""


class CheckerError(Exception):
    """Any error of the checker: its message is one line for the user."""


class EngineError(CheckerError, ValueError):
    """An engine refuses the job: one line, exit 2."""


class ModelError(CheckerError, ValueError):
    """A bad model file, or options that cannot check it; the message names the file."""


class ReductionError(EngineError):
    """A reduction cannot apply to this spec or these options."""


class EnvironmentFault(CheckerError):
    """The machine, not the input: a missing Java, a JVM that does not start (exit 3)."""


class UsageError(CheckerError, ValueError):
    """Bad command-line use (options that do not go together): one line, exit 2."""


def explained(spec, exc: BaseException) -> BaseException:
    """`exc`, or the bug in the spec's own code that caused it. A spec loaded
    from outside txncheck is guarded (checker/spec_errors.py) without checking
    each successor: one that holds a list fails in the engine, which cannot
    hash it, and the guard then names the action and the value."""
    explain = getattr(spec, "explain_failure", None)
    return exc if explain is None else explain(exc)
