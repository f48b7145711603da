"""Writing a report file: atomically (temp file + rename), so CI never uploads half a report."""

from __future__ import annotations

from pathlib import Path

from .. import atomic
from ..errors import CheckerError


class ReportError(CheckerError, ValueError):
    """A report that cannot be written; one line naming the file."""


def write_text_atomic(path: str | Path, text: str) -> Path:
    """A report file, written atomically (checker/atomic.py); a failure is one line naming it."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return atomic.write_text_atomic(path, text)
    except OSError as exc:
        raise ReportError(f"{path}: cannot write report ({exc.strerror})") from None
