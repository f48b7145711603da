"""Replacing a file atomically, the one way txncheck writes a file a reader
may look at while it is written (a report, a trace, a checkpoint, a Spark
level, a model file's recorded figures): the content goes to a temporary
file in the same folder, made with mkstemp (O_EXCL: a link planted in the
folder cannot redirect the write), which is then renamed over the target.
A reader sees the old file or the new one, never half of one; a write that
fails leaves no temporary file behind.

mkstemp makes the file private (0600); an ordinary output (a report, a
trace) is given the usual permissions (0666 less the umask), a checkpoint's
files stay private. `fsync` makes the content durable before the rename."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable


def replace_atomically(path: str | Path, write: Callable[[str], object], *, private: bool = False,
                       fsync: bool = False) -> Path:
    """`write(tmp)` fills a temporary file beside `path`, which then replaces `path`."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".tmp-{path.name}-", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        if fsync:
            with open(tmp, "rb") as f:
                os.fsync(f.fileno())
        if not private:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def write_bytes_atomic(path: str | Path, data: bytes, **kw) -> Path:
    return replace_atomically(path, lambda tmp: Path(tmp).write_bytes(data), **kw)


def write_text_atomic(path: str | Path, text: str, **kw) -> Path:
    return replace_atomically(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"), **kw)
