"""Reading the files a user names (model files, traces): untrusted input.

Only regular files are read, and never more than a cap, so a FIFO, a device
such as /dev/zero or a huge file ends in one line instead of a hang or
memory exhaustion; a name the system refuses (too long, a loop of links) is
one line too.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class InputError(ValueError):
    """An input file that cannot be read as one; the message is one line."""


def read_regular(path: Path, what: str, limit: int) -> bytes:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError(f"{path}: no such {what}") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{path}: is a directory, not a {what}")
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{path}: is not a regular file (a pipe, socket or device); a {what} must be one")
    if st.st_size > limit:
        raise InputError(f"{path}: {what} is too large ({st.st_size} bytes; limit {limit})")
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    if len(data) > limit:
        raise InputError(f"{path}: {what} is too large (over {limit} bytes)")
    return data
