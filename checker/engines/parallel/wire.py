"""The messages between the coordinator and a worker (`Remote`, the
coordinator's end): a JSON header, then raw arrays of integers. States do
not travel here (moved ones go through a file: `moves.py`); nothing is
pickled (ADR 0005).

A pipe whose other end is gone raises `Closed`, never an OSError, so that a
worker tells its coordinator's end (it stops) from a disk that refuses a
write (it reports it). A worker reports a failure as the one line and exit
code that checker/failures.py gives it; a worker that ends without
reporting one (killed, or code it ran called `os._exit`) is exit 3, as a
`txncheck` process that does (checker/supervisor.py)."""

from __future__ import annotations

import json
import signal
from array import array

from ...errors import EngineError, EnvironmentFault


class Closed(Exception):
    """The other end of the pipe is gone."""


def send(conn, head: dict, arrays=()) -> None:
    try:
        conn.send_bytes(json.dumps({**head, "arrays": [a.typecode for a in arrays]}).encode())
        for a in arrays:
            conn.send_bytes(memoryview(a))
    except OSError:  # EPIPE, or a closed handle
        raise Closed from None


def recv(conn) -> tuple[dict, list]:
    try:
        head = json.loads(conn.recv_bytes())
        arrays = []
        for code in head.pop("arrays"):
            a = array(code)
            a.frombytes(conn.recv_bytes())
            arrays.append(a)
    except (EOFError, OSError):
        raise Closed from None
    return head, arrays


class Remote:
    """A forked worker process running `target(conn, part)`, and the
    coordinator's end of its pipe."""

    def __init__(self, w: int, target, part, ctx) -> None:
        self.w = w
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=target, args=(child, part), daemon=True, name=f"txncheck-worker-{w}")
        self.proc.start()
        child.close()

    def send(self, head: dict) -> None:
        try:
            send(self.conn, head)
        except Closed:
            raise self._lost() from None

    def recv(self) -> dict:
        try:
            head, _ = recv(self.conn)
        except Closed:
            raise self._lost() from None
        if "error" in head:  # the worker's one line, with failures.classify's exit code
            if head.get("exit") == 2:
                raise EngineError(f"--workers: worker {self.w} failed: {head['error']}")
            raise EnvironmentFault(f"--workers: worker {self.w}: {head['error']}")
        return head

    def ask(self, head: dict) -> dict:
        self.send(head)
        return self.recv()

    def _lost(self) -> EnvironmentFault:
        """How the worker ended, as the one line of a run that is incomplete."""
        self.proc.join(5)
        code = self.proc.exitcode
        if code is None:
            self.proc.terminate()
            how = "closed its pipe and stopped answering"
        elif code < 0:
            name = signal.Signals(-code).name if -code in signal.valid_signals() else f"signal {-code}"
            how = f"was killed by {name}" + (" (out of memory?)" if name == "SIGKILL" else "")
        else:
            how = f"exited with status {code}: code it ran ended it (os._exit in a spec?)"
        return EnvironmentFault(f"--workers: worker {self.w} {how} before the search ended; the run is incomplete")

    def close(self, idle: bool) -> float:
        """Stop the worker: ask it to quit if it is `idle` (waiting between
        levels), else terminate it. Its peak memory in MiB (0 if unknown)."""
        peak = 0.0
        if idle and self.proc.is_alive():
            try:
                send(self.conn, {"cmd": "quit"})
                if self.conn.poll(10):
                    peak = recv(self.conn)[0].get("peak_memory_mb", 0.0)
            except Closed:
                pass
            self.proc.join(5)
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join()
        self.conn.close()
        return peak
