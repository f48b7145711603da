"""Standard output and error as the command line uses them.

* `guarded`: a stream whose reader went away (`| head`, a closed stdout, a
  full disk) drops what is written to it instead of raising, so the command
  finishes its run, writes its `--junit` and `--sarif` files and exits with
  its verdict's code. Its file descriptor is pointed at /dev/null, so what
  was buffered, and what a child process writes, goes nowhere quietly.
* `stdout_to_stderr`: while a `--json` run executes a spec's code, whatever
  that code prints goes to stderr, so stdout holds exactly one JSON object.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager


class _Guarded:
    def __init__(self, stream) -> None:
        self._stream = stream
        self.lost = stream is None  # a descriptor closed when Python started: sys.stdout is None

    def _lose(self) -> None:
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
            except (OSError, ValueError):
                self._lose()
        return len(text)

    def flush(self) -> None:
        if not self.lost:
            try:
                self._stream.flush()
            except (OSError, ValueError):
                self._lose()

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
