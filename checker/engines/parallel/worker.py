"""A worker's side of `bfs --workers N`: its `Part` of a level, which it
expands in batches and whose accepted successors it keeps and checks, and
the loop (`serve`) a forked worker process runs."""

from __future__ import annotations

import signal
from array import array
from collections import Counter

from ... import reductions
from ...encoding import Fingerprinter
from ...errors import explained
from ...errors import explained
from ...exploration import peak_memory_mb
from ...job import Job
from ...verdicts import Verdicts
from .wire import recv, send

BATCH = 2048  # states a worker expands between messages


class Part:
    """One worker's part of a level: expands it, and keeps the accepted
    successors as its part of the next level."""

    def __init__(self, job: Job, spec) -> None:
        self.job, self.spec = job, spec
        self.successors, self.canonical = reductions.representatives(spec)
        self.frontier, self.ids, self.pos = [], range(0), 0  # this level: states, their ids, next to expand
        self.recent: dict = {}  # the states held: this level's (-1), the proposed successors (their index)
        self.proposed: list = []
        self.mult = array("L")  # per proposed successor: how many of this part's steps lead to it
        self.fingerprint = Fingerprinter()
        self.action_ids: dict = {}
        self.new_actions: list[str] = []
        self.pending = set(job.witnesses)
        witness_check = job.witness_checker(self.pending) if self.pending else None
        self.verdicts = Verdicts(spec, job.invariant_checker(), witness_check, self.pending)

    def split(self, w: int, n: int) -> "Part":
        """The w-th of n contiguous slices of this part, with the same action
        table, compiled checks and pending witnesses."""
        part = object.__new__(Part)
        part.__dict__.update(self.__dict__)
        k = -(-len(self.frontier) // n)  # contiguous slices keep siblings together
        part.frontier, part.ids, part.pos = self.frontier[w * k:(w + 1) * k], self.ids[w * k:(w + 1) * k], 0
        part.recent, part.proposed, part.new_actions = dict.fromkeys(part.frontier, -1), [], []
        part.mult = array("L")
        part.fingerprint = Fingerprinter()
        part.action_ids, part.pending = dict(self.action_ids), set(self.pending)
        part.verdicts = Verdicts(self.spec, self.verdicts.check, self.verdicts.witness_check, part.pending)
        return part

    def expand(self, limit: int) -> tuple[dict, tuple]:
        """Expand up to `limit` more states of the level. The last batch also
        carries `mult`, for the coordinator's choice among several proposers."""
        nxt, canonical, recent, fp, proposed, mult = (
            self.successors, self.canonical, self.recent, self.fingerprint, self.proposed, self.mult)
        held_at = recent.get
        action_ids = self.action_ids
        fps, par, aids = array("Q"), array("q"), array("L")
        cov: Counter = Counter()
        generated, deadlock = 0, -1
        frontier, ids = self.frontier, self.ids
        i, end = self.pos, min(len(frontier), self.pos + limit)
        deadlocks = self.job.deadlock
        while i < end:
            g = ids[i]
            n = 0
            for a, t in nxt(frontier[i]):
                n += 1
                aid = action_ids.get(a)
                if aid is None:
                    aid = action_ids[a] = len(action_ids)
                    self.new_actions.append(repr(a))
                cov[aid] += 1
                # Under --symmetry a held successor is a representative already.
                k = held_at(t) if canonical is not None else None
                if k is None:
                    if canonical is not None:
                        t = canonical(t)
                    held = len(recent)
                    k = recent.setdefault(t, len(proposed))
                    if len(recent) > held:  # a new proposal
                        mult.append(1)
                        proposed.append(t)
                        fps.append(fp(t))
                        par.append(g)
                        aids.append(aid)
                        continue
                if k >= 0:
                    mult[k] += 1
            generated += n
            if n == 0 and deadlocks and deadlock < 0:
                deadlock = g
            i += 1
        self.pos = i
        head = {"generated": generated, "coverage": cov, "actions": self.new_actions,
                "deadlock": deadlock, "done": i >= len(frontier), "left": len(frontier) - i}
        self.new_actions = []
        if head["done"]:
            return head, (fps, par, aids, self.mult)
        return head, (fps, par, aids)

    def accept(self, keep, base: int) -> dict:
        """Make the proposed successors at indexes `keep` the next level (ids
        from `base`), and check them."""
        proposed = self.proposed
        level = [proposed[k] for k in keep]
        self.frontier, self.ids, self.pos, self.proposed = level, range(base, base + len(level)), 0, []
        self.mult = array("L")
        self.recent = dict.fromkeys(level, -1)
        verdicts, pending = self.verdicts, self.pending
        violation, found = None, []
        for j, t in enumerate(level):
            bad, holds = verdicts(t)
            if bad is not None:
                violation = [base + j, bad]
                break
            if pending:
                for name in holds:
                    if name in pending:
                        pending.discard(name)
                        found.append(name)
        return {"violation": violation, "witnesses": found}


def serve(conn, part: Part) -> None:
    """A worker's loop: expand on demand, accept, report its peak memory."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator handles Ctrl-C
    try:
        while True:
            head, arrays = recv(conn)
            cmd = head["cmd"]
            if cmd == "expand":
                while True:
                    out, arrs = part.expand(BATCH)
                    if not out["done"] and conn.poll() and recv(conn)[0]["cmd"] == "stop":
                        out["done"] = True
                    send(conn, out, arrs)
                    if out["done"]:
                        break
            elif cmd == "accept":
                send(conn, part.accept(arrays[0], head["base"]))
            elif cmd == "quit":
                send(conn, {"peak_memory_mb": peak_memory_mb()})
                return
            # a "stop" that crossed the last batch of a level is ignored
    except (EOFError, OSError):  # the coordinator is gone
        return
    except Exception as exc:  # reported by the coordinator as one line
        exc = explained(part.job.spec, exc)  # a user spec's bug, named by its guard
        try:
            send(conn, {"error": f"{type(exc).__name__}: {exc}"})
        except OSError:
            pass
