"""The messages between the coordinator and a worker (`Remote`, the
coordinator's end): a JSON header, then raw arrays of integers. Every
command and reply is declared below (PROTOCOL); tests/test_parallel.py
holds a real run's messages to the declarations. States do
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
from typing import Any, Literal, TypedDict, Union, cast, overload

from ...errors import EngineError, EnvironmentFault


# -- the protocol: every command the coordinator sends, and every reply --------------------
# A level: `expand` (the worker answers with a Batch per batch of states it expanded, the
# last one `done`; a `stop` sent meanwhile makes the next Batch the last), then `accept`
# (each worker in turn keeps its share of the proposals: worker.share), then maybe
# `give`/`take` (moves.py evens out the next level's parts), then `drop` (the level's
# tables close). `quit` ends the worker. Any command may be answered with a Failure
# instead. Fingerprints and numbers travel as JSON ints; a table is [path, log2].

Table = list   # [path of a shared fingerprint table, its log2 size]
Counts = dict[Any, int]   # action id -> a count: the sender's keys are ints, JSON delivers them as strs


class Expand(TypedDict):
    cmd: Literal["expand"]
    visited: Table             # the visited set of the levels before, shared


class Stop(TypedDict):
    cmd: Literal["stop"]       # another worker found a violation: finish this batch and stop


class Accept(TypedDict):
    cmd: Literal["accept"]
    later: list[Table]         # the later workers' proposal tables
    taken: list[Table]         # what the earlier workers kept of what a later one proposed too
    quota: int | None          # how many of those this worker keeps (None: the last worker, all)


class Give(TypedDict):
    cmd: Literal["give"]
    count: int                 # states to move off the end of this worker's next level
    path: str                  # the file they go to


class Take(TypedDict):
    cmd: Literal["take"]
    path: str                  # the file a Give wrote


class Drop(TypedDict):
    cmd: Literal["drop"]


class Quit(TypedDict):
    cmd: Literal["quit"]


class Cut(TypedDict):
    """What bfs has counted when it stops at a batch's violation or deadlock."""
    generated: int
    coverage: Counts
    proposed: int
    new_by_action: Counts


class Batch(TypedDict, total=False):
    """A batch of a level expanded (or, `done`, the level's end)."""
    generated: int                     # successors generated, duplicates included
    coverage: Counts                   # action id -> successors generated
    left: int                          # states of the level still to expand
    done: bool
    violation: list | None             # [fingerprint, parent's, action id, property, order]
    deadlock: list | None              # [parent's fingerprint, order]
    witnesses: list[str]               # witnesses first satisfied in this batch
    proposed: int                      # new states proposed for the next level
    new_by_action: Counts
    cut: Cut                           # with a violation or deadlock: the counts up to it
    actions: list                      # action labels this worker numbered since its last batch
    table: Table                       # done: this worker's proposals
    cpu: float                         # done: CPU seconds of the level
    expanded: int                      # done: states expanded


class Accepted(TypedDict):
    kept: int
    kept_by_action: Counts
    fields: int                        # distinct field values numbered so far
    disk: int                          # bytes this level and its proposals took
    claimed: Table | None              # what it kept of what later workers proposed too


class Given(TypedDict):
    given: int


class Taken(TypedDict):
    taken: int
    cpu: float
    fields: int


class Done(TypedDict, total=False):
    peak_memory_mb: float              # quit's answer (drop's is empty)


class Failure(TypedDict):
    error: str                         # failures.classify's one line
    exit: int                          # and its exit code


Command = Union[Expand, Stop, Accept, Give, Take, Drop, Quit]
Reply = Union[Batch, Accepted, Given, Taken, Done, Failure]
# each command and the replies it may get (a Failure is a reply to any)
PROTOCOL: dict[str, tuple[type, tuple[type, ...]]] = {
    "expand": (Expand, (Batch,)), "stop": (Stop, ()), "accept": (Accept, (Accepted,)),
    "give": (Give, (Given,)), "take": (Take, (Taken,)), "drop": (Drop, (Done,)), "quit": (Quit, (Done,)),
}
Message = dict[str, Any]


class Closed(Exception):
    """The other end of the pipe is gone."""


def send(conn, head: Command | Reply, arrays=()) -> None:
    try:
        conn.send_bytes(json.dumps({**head, "arrays": [a.typecode for a in arrays]}).encode())
        for a in arrays:
            conn.send_bytes(memoryview(a))
    except OSError:  # EPIPE, or a closed handle
        raise Closed from None


def recv(conn) -> tuple[Message, list]:
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

    def send(self, head: Command) -> None:
        try:
            send(self.conn, head)
        except Closed:
            raise self._lost() from None

    def recv(self) -> Message:
        try:
            head, _ = recv(self.conn)
        except Closed:
            raise self._lost() from None
        if "error" in head:  # the worker's one line, with failures.classify's exit code
            if head.get("exit") == 2:
                raise EngineError(f"--workers: worker {self.w} failed: {head['error']}")
            raise EnvironmentFault(f"--workers: worker {self.w}: {head['error']}")
        return head

    # A command answered at once, and its reply as PROTOCOL declares it (an
    # expand's Batches and an accept's Accepted come by `recv`; the
    # coordinator casts them to their declared type).
    @overload
    def ask(self, head: Give) -> Given: ...
    @overload
    def ask(self, head: Take) -> Taken: ...
    @overload
    def ask(self, head: Drop) -> Done: ...
    def ask(self, head: Command) -> Any:
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
                    peak = cast(Done, recv(self.conn)[0]).get("peak_memory_mb", 0.0)
            except Closed:
                pass
            self.proc.join(5)
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join()
        self.conn.close()
        return peak
