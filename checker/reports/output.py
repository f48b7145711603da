"""Writing a report file: atomically (temp file + rename), so CI never uploads half a report."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..errors import CheckerError


class ReportError(CheckerError, ValueError):
    """A report that cannot be written; one line naming the file."""


def write_text_atomic(path: str | Path, text: str) -> Path:
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes it private; a report is an ordinary file
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None:  # never leave the temp file behind (a folder or a full disk as the target)
            try:
                os.unlink(tmp)
            except OSError:
                pass
        raise ReportError(f"{path}: cannot write report ({exc.strerror})") from None
    return path
