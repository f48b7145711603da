"""The search's own files (spilled chunks, the trail, moved states), written
so that a disk that refuses a write names the file: Python's write errors
carry no file name, and numpy's `tofile` no errno either ("N requested and 0
written"), so a full TMPDIR would read as an unnamed fault. The caller maps
the OSError to exit 3 (checker/failures.py)."""

from __future__ import annotations


def write_file(path: str, parts, mode: str = "wb") -> None:
    """Write the bytes-like `parts` to `path` (`mode` "wb" or "ab"); an
    OSError names `path` and keeps the errno and its text."""
    try:
        with open(path, mode) as f:
            for part in parts:
                f.write(part)
    except OSError as exc:
        if exc.filename is not None:
            raise
        raise OSError(exc.errno, exc.strerror or str(exc), path) from None
