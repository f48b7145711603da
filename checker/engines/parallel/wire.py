"""The messages between the coordinator and a worker (`Remote`, the
coordinator's end): a JSON header, then raw arrays of integers. States do
not travel here (moved ones go through a file: `moves.py`); nothing is
pickled (ADR 0005)."""

from __future__ import annotations

import json
from array import array

from ...errors import EngineError


def send(conn, head: dict, arrays=()) -> None:
    conn.send_bytes(json.dumps({**head, "arrays": [a.typecode for a in arrays]}).encode())
    for a in arrays:
        conn.send_bytes(memoryview(a))


def recv(conn) -> tuple[dict, list]:
    head = json.loads(conn.recv_bytes())
    arrays = []
    for code in head.pop("arrays"):
        a = array(code)
        a.frombytes(conn.recv_bytes())
        arrays.append(a)
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

    def recv(self) -> dict:
        try:
            head, _ = recv(self.conn)
        except (EOFError, OSError):
            self.proc.join(1)
            raise EngineError(f"--workers: worker {self.w} died (exit code {self.proc.exitcode})") from None
        if "error" in head:
            raise EngineError(f"--workers: worker {self.w} failed: {head['error']}")
        return head

    def ask(self, head: dict) -> dict:
        send(self.conn, head)
        return self.recv()

    def close(self, idle: bool) -> float:
        """Stop the worker: ask it to quit if it is `idle` (waiting between
        levels), else terminate it. Its peak memory in MiB (0 if unknown)."""
        peak = 0.0
        if idle and self.proc.is_alive():
            try:
                send(self.conn, {"cmd": "quit"})
                if self.conn.poll(10):
                    peak = recv(self.conn)[0].get("peak_memory_mb", 0.0)
            except (EOFError, OSError):
                pass
            self.proc.join(5)
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join()
        self.conn.close()
        return peak
