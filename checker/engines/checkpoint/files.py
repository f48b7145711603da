"""The files of a checkpoint folder (`store.py` lays them out): atomic
writes, untrusted reads, and the lock that keeps one run per folder."""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from hashlib import blake2b
from pathlib import Path

from ...atomic import write_bytes_atomic
from .codec import CheckpointError, CheckpointWriteError

MAX_MANIFEST_BYTES = 64 * 1024 * 1024
MAX_SEGMENT_BYTES = 4 * 1024 * 1024 * 1024  # a segment is what one interval explored


def read_file(path: Path, limit: int, kind: str, binary: bool = False):
    """An untrusted checkpoint file: a regular file (not a link, a FIFO or a
    device), at most `limit` bytes. ValueError with one line otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        what = "a symbolic link" if exc.errno == errno.ELOOP else exc.strerror
        raise ValueError(f"cannot read the {kind} ({what})") from None
    st = os.fstat(fd)  # before fdopen, which refuses a folder naming the descriptor ("5: Is a directory")
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        what = " but a folder" if stat.S_ISDIR(st.st_mode) else ""
        raise ValueError(f"the {kind} is not a regular file{what}")
    with os.fdopen(fd, "rb") as f:
        if st.st_size > limit:
            raise ValueError(f"the {kind} is too large ({st.st_size} bytes; expected at most {limit})")
        try:
            data = f.read(limit + 1)
        except OSError as exc:
            raise ValueError(f"cannot read the {kind} ({exc.strerror})") from None
    if len(data) > limit:
        raise ValueError(f"the {kind} is too large (over {limit} bytes)")
    return data if binary else data.decode("utf-8")


def read_segment(path: Path, seg: dict) -> bytes:
    """A segment's bytes: a regular file of the size its manifest entry `seg`
    gives (at most MAX_SEGMENT_BYTES), with its digest; a link to /dev/zero or
    a FIFO is refused, not read until memory runs out or waited on."""
    try:
        data = read_file(path, min(seg["bytes"], MAX_SEGMENT_BYTES), "segment", binary=True)
    except ValueError as exc:
        raise CheckpointError(f"{path}: {exc}") from None
    if len(data) != seg["bytes"] or blake2b(data, digest_size=16).hexdigest() != seg["blake2b"]:
        raise CheckpointError(f"{path}: segment does not match the manifest (size or blake2b digest)")
    return data


def lock_folder(folder: Path):
    """Hold the folder (an `flock` on the folder itself: no file is made) for
    as long as the returned descriptor is open: a second run on the same
    folder is refused while the first holds it. The kernel drops the lock of
    a process that dies, even by SIGKILL, so a killed run leaves nothing that
    blocks the next one."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise CheckpointError(f"{folder}: cannot open the checkpoint folder ({exc.strerror})") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise CheckpointError(f"{folder}: another txncheck run is using this checkpoint folder; "
                              "wait for it to end, or use another folder") from None
    return _Held(fd)


class _Held:
    """A folder's lock, released when this is closed or collected (with the Checkpointer that holds it)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    __del__ = close


def _write_atomic(path: Path, data: bytes) -> None:
    """A checkpoint file, durable before it replaces the old one, and private (checker/atomic.py)."""
    try:
        write_bytes_atomic(path, data, private=True, fsync=True)
    except OSError as exc:
        raise CheckpointWriteError(f"{path}: cannot write checkpoint ({exc.strerror})") from None
