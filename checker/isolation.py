"""A computation in a forked child that can send back only JSON.

A model file runs the code it names, and that code can end the process
(`os._exit(0)`) or leave it in any state. `run_isolated(fn, *args)` runs
`fn(*args)` in a forked child, which sends one JSON document on a pipe and
leaves with `os._exit` (no interpreter teardown: a large state graph is not
freed object by object); the parent gets `(value, None)`, or `(None, why)`
when the child ended without a value (what it raised, or how it ended).

Ctrl-C in the parent: with `grace`, the child (which the terminal's signal
reached too) is sent SIGINT and given `grace` seconds of its own time
(checker/grace.py) to report what it had done before it is killed, and the parent gets `(value or None,
INTERRUPTED)`; without, the child is killed and the interrupt re-raised.
Importing this module is cheap (the pytest plugin uses it).
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys

from .grace import Grace

INTERRUPTED = "interrupted"


def run_isolated(fn, *args, grace: float = 0.0, in_child=None):
    """(fn(*args), None), or (None, why it gave nothing); see the module doc.
    `in_child()` runs first in the child (e.g. to own the signal handlers)."""
    if not hasattr(os, "fork"):
        return fn(*args), None
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        _child(r, w, fn, args, in_child)
    os.close(w)
    chunks: list[bytes] = []
    try:
        _read_all(r, chunks, None)
        status = os.waitpid(pid, 0)[1]
    except BaseException:   # Ctrl-C (or SIGTERM): what the child had done, within the grace
        if grace:
            _signal(pid, signal.SIGINT)
            _read_all(r, chunks, Grace(pid, grace))
        _signal(pid, signal.SIGKILL)
        _reap(pid)
        os.close(r)
        if not grace:
            raise
        doc = _doc(b"".join(chunks))
        return (doc.get("value") if doc else None), INTERRUPTED
    os.close(r)
    doc = _doc(b"".join(chunks))
    if doc is None:
        how = (f"was ended by signal {signal.Signals(os.WTERMSIG(status)).name}" if os.WIFSIGNALED(status)
               else f"exited with status {os.WEXITSTATUS(status)}")
        return None, (f"the check {how} before it reported a result: code it ran ended the process "
                      "(os._exit in a spec?)")
    if "error" in doc:
        return None, doc["error"]
    return doc["value"], None


def _child(r: int, w: int, fn, args, in_child) -> None:
    code = 0
    try:
        os.close(r)
        try:
            if in_child is not None:
                in_child()
            doc = {"value": fn(*args)}
        except BaseException as exc:  # noqa: BLE001 - reported by the parent
            doc = {"error": f"{type(exc).__name__}: {exc}".splitlines()[0]}
        data = json.dumps(doc).encode()
        with os.fdopen(w, "wb") as f:
            f.write(data)
    except BaseException:  # noqa: BLE001
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001
                pass
        os._exit(code)


def _read_all(r: int, chunks: list[bytes], grace: Grace | None) -> None:
    """Read the pipe to its end, or until the grace is over (None: no grace, no end)."""
    while True:
        if grace is not None:
            left = grace.left()
            if left <= 0:
                return
            if not select.select([r], [], [], min(left, 0.1))[0]:
                continue
        try:
            data = os.read(r, 1 << 16)
        except InterruptedError:
            continue
        if not data:
            return
        chunks.append(data)


def _doc(data: bytes):
    try:
        doc = json.loads(data)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def _signal(pid: int, sig) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
