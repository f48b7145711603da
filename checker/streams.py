"""Standard output and error as the command line uses them.

* `guarded`: a stream whose reader went away (`| head`, a closed stdout)
  or whose disk refuses it (full) drops what is written to it instead of
  raising, so the command finishes its run, writes its `--junit` and
  `--sarif` files and exits with its verdict's code. Its file descriptor is
  pointed at /dev/null, so what was buffered, and what a child process
  writes, goes nowhere quietly. A reader that left wanted nothing more; a
  write that failed otherwise lost a report someone wanted, so the stream
  remembers why (`failed`), and the command ends with one line and exit 3
  (1 for a violation, whose code is still its report).
* `stdout_to_stderr`: while a `--json` run executes a spec's code, whatever
  that code prints goes to stderr, so stdout holds exactly one JSON object.
"""

from __future__ import annotations

import errno
import os
import sys
from contextlib import contextmanager


# A reader that went away: the output is not wanted any more. Any other
# error (a full disk, an I/O error) lost output someone wanted: `failed`.
_GONE = {errno.EPIPE, errno.EBADF, errno.ECONNRESET}


class _Guarded:
    def __init__(self, stream) -> None:
        self._stream = stream
        self.lost = stream is None  # a descriptor closed when Python started: sys.stdout is None
        self.failed: str | None = None  # why output was lost, when its reader was still there

    def _lose(self, exc: BaseException | None = None) -> None:
        if isinstance(exc, OSError) and exc.errno not in _GONE and self.failed is None:
            self.failed = exc.strerror or str(exc)
        self.lost = True
        try:
            fd = self._stream.fileno()
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, fd)
            os.close(null)
            self._stream.flush()  # what was buffered goes to /dev/null
        except (OSError, ValueError, AttributeError):
            pass

    def write(self, text: str) -> int:
        if not self.lost:
            try:
                return self._stream.write(text)
            except (OSError, ValueError) as exc:
                self._lose(exc)
        return len(text)

    def flush(self) -> None:
        if not self.lost:
            try:
                self._stream.flush()
            except (OSError, ValueError) as exc:
                self._lose(exc)

    def __getattr__(self, name):
        if self._stream is None:
            raise AttributeError(name)
        return getattr(self._stream, name)


def guarded(stream):
    """`stream`, made to drop output once its reader is gone (itself if it is already)."""
    return stream if isinstance(stream, _Guarded) else _Guarded(stream)


@contextmanager
def stdout_to_stderr():
    """Send what is printed to stdout (Python's `print` and file descriptor 1,
    so native code and forked workers too) to stderr until the block ends."""
    py_stdout = sys.stdout
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    try:
        saved = os.dup(1)
    except OSError:  # a closed descriptor: nothing to redirect
        saved = None
    if saved is not None:
        try:
            os.dup2(2, 1)
        except OSError:
            os.close(saved)
            saved = None
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        try:
            sys.stdout.flush()
        except (OSError, ValueError, AttributeError):
            pass
        sys.stdout = py_stdout
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)
