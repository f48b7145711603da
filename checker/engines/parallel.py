"""`bfs --workers N`: the bfs search with each BFS level expanded by N forked
worker processes, for machines with more than one core.

* The coordinator (this process) owns the visited set: 64-bit stable
  fingerprints with parent pointers, as `--fingerprints` keeps them, so a
  counterexample is rebuilt the same way, by re-executing the spec.
* A worker holds its part of the current level. It expands it in batches,
  drops the successors equal to a state it holds, fingerprints the rest and
  sends (fingerprint, parent, action) to the coordinator. States never cross
  a process boundary; only integers do (actions as literals, read back
  with `ast.literal_eval`). Nothing is pickled.
* At the end of a level the coordinator keeps the fingerprints it had not
  seen. A new state stays with a worker that generated it; one that several
  generated goes to the one with most steps into it, within its share of
  the level (`assign`): shares are in inverse proportion to each worker's
  cost per state in the level just expanded (`shares`). Each worker then
  checks the invariants and witnesses on its new part.
* A worker only knows the states it holds, so it canonicalizes and
  fingerprints some successors that the other workers hold. The first
  split gives each worker a contiguous slice of the level, and `assign`
  keeps a shared state with most of its parents, so siblings, and most
  duplicates, stay together. On the first 2.7 million states of the larger
  PIP-473 model that is 1.37 fingerprints per new state (1.63 when shared
  states went to the worker holding fewest; 1.0 in process).
* Levels are synchronized, so depth and the shortest counterexample are as
  in bfs, and the run is deterministic: the states of a level, their ids and
  the reported violation (the lowest id) do not depend on timing.
* The search starts in process and forks the workers once a level holds
  `SPLIT_AT` states (and two per worker), so small models never fork.
"""

from __future__ import annotations

import ast
import json
import math
import multiprocessing
import signal
import time
from array import array
from collections import Counter
from dataclasses import replace
from multiprocessing.connection import wait

from .. import reductions
from ..encoding import Fingerprinter
from ..errors import EngineError
from ..exploration import action_coverage, gc_paused, peak_memory_mb, search_outcome
from ..job import Job, Outcome, Violation
from ..reductions.fingerprints import FingerprintExploration
from ..verdicts import Verdicts

SPLIT_AT = 1000  # states in a level before the workers are forked
BATCH = 2048  # states a worker expands between messages

# The options a --workers run refuses are checker/options.py's REFUSED_BY_WORKERS.


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


def shares(total: int, costs: list) -> list[int]:
    """How many of `total` new states each worker may hold: in inverse
    proportion to its cost per state in the level it just expanded, rounded
    up; even shares while a cost is unknown (0)."""
    n = len(costs)
    if not all(costs):
        return [-(-total // n)] * n
    inv = [1 / c for c in costs]
    whole = sum(inv)
    return [math.ceil(total * v / whole) for v in inv]


def assign(proposals: dict, shared: dict, mults: list, n: int, caps: list | None = None) -> list[list[int]]:
    """Which worker keeps each new state: per worker, the indexes of its
    proposals. A proposal is encoded as `worker + n * index`.

    A state proposed by one worker stays there. One proposed by several goes
    to the worker with most steps into it (`mults`): that worker holds more
    of its parents and siblings, so their common successors meet in one
    `recent` and are not fingerprinted twice. The strongest preferences are
    served first, and a worker that holds its share of the level (`caps`,
    from `shares`; even by default) gets no more. Ties, and states left
    over, go to the worker with most room under its share. The choice
    depends on fingerprints and counts only, not on timing.
    Without `mults` (a level stopped early) every shared state goes to the
    worker with most room."""
    firsts = [c for f, c in proposals.items() if f not in shared] if shared else list(proposals.values())
    keep: list[list[int]] = [[c // n for c in firsts if c % n == w] for w in range(n)]
    if caps is None:
        caps = [-(-len(proposals) // n)] * n
    size = [len(k) for k in keep]  # follows len(keep[w])

    def roomiest(f: int) -> int:
        return min(shared[f], key=lambda x: (size[x % n] - caps[x % n], x % n))

    if any(m is None for m in mults):
        for f in sorted(shared):
            c = roomiest(f)
            keep[c % n].append(c // n)
            size[c % n] += 1
        return keep

    # The workers wait for this. Strongest preference first means by (second
    # most steps - most steps), then fingerprint: bucketed by the difference,
    # each bucket sorts plain ints.
    buckets: dict[int, list[int]] = {}
    for f, codes in shared.items():
        steps = [mults[x % n][x // n] for x in codes]
        steps.sort(reverse=True)
        d = steps[1] - steps[0]
        bucket = buckets.get(d)
        if bucket is None:
            bucket = buckets[d] = []
        bucket.append(f)
    for d in sorted(buckets):
        fs = buckets[d]
        fs.sort()
        for f in fs:
            best = None  # (-steps, room used, worker, code): the most steps, then the most room
            for x in shared[f]:
                w = x % n
                if size[w] < caps[w]:
                    cand = (-mults[w][x // n], size[w] - caps[w], w, x)
                    if best is None or cand < best:
                        best = cand
            c = best[3] if best is not None else roomiest(f)
            keep[c % n].append(c // n)
            size[c % n] += 1
    return keep


# -- messages: a JSON header, then raw arrays ---------------------------------

def _send(conn, head: dict, arrays=()) -> None:
    conn.send_bytes(json.dumps({**head, "arrays": [a.typecode for a in arrays]}).encode())
    for a in arrays:
        conn.send_bytes(memoryview(a))


def _recv(conn) -> tuple[dict, list]:
    head = json.loads(conn.recv_bytes())
    arrays = []
    for code in head.pop("arrays"):
        a = array(code)
        a.frombytes(conn.recv_bytes())
        arrays.append(a)
    return head, arrays


def _serve(conn, part: Part) -> None:
    """A worker's loop: expand on demand, accept, report its peak memory."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator handles Ctrl-C
    try:
        while True:
            head, arrays = _recv(conn)
            cmd = head["cmd"]
            if cmd == "expand":
                while True:
                    out, arrs = part.expand(BATCH)
                    if not out["done"] and conn.poll() and _recv(conn)[0]["cmd"] == "stop":
                        out["done"] = True
                    _send(conn, out, arrs)
                    if out["done"]:
                        break
            elif cmd == "accept":
                _send(conn, part.accept(arrays[0], head["base"]))
            elif cmd == "quit":
                _send(conn, {"peak_memory_mb": peak_memory_mb()})
                return
            # a "stop" that crossed the last batch of a level is ignored
    except (EOFError, OSError):  # the coordinator is gone
        return
    except Exception as exc:  # reported by the coordinator as one line
        try:
            _send(conn, {"error": f"{type(exc).__name__}: {exc}"})
        except OSError:
            pass


class _Local:
    """The in-process part before the workers are forked."""

    def __init__(self, part: Part) -> None:
        self.part = part

    def accept(self, keep, base: int) -> None:
        self._result = self.part.accept(keep, base)

    def result(self) -> dict:
        return self._result


class _Remote:
    def __init__(self, w: int, part: Part, ctx) -> None:
        self.w = w
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child, part), daemon=True, name=f"txncheck-worker-{w}")
        self.proc.start()
        child.close()

    def recv(self) -> tuple[dict, list]:
        try:
            head, arrays = _recv(self.conn)
        except (EOFError, OSError):
            self.proc.join(1)
            raise EngineError(f"--workers: worker {self.w} died (exit code {self.proc.exitcode})") from None
        if "error" in head:
            raise EngineError(f"--workers: worker {self.w} failed: {head['error']}")
        return head, arrays

    def start(self) -> None:
        _send(self.conn, {"cmd": "expand"})

    def stop(self) -> None:
        _send(self.conn, {"cmd": "stop"})

    def accept(self, keep, base: int) -> None:
        _send(self.conn, {"cmd": "accept", "base": base}, [array("L", keep)])

    def result(self) -> dict:
        return self.recv()[0]

    def close(self, idle: bool) -> float:
        """Stop the worker: ask it to quit if it is `idle` (waiting between
        levels), else terminate it. Its peak memory in MiB (0 if unknown)."""
        peak = 0.0
        if idle and self.proc.is_alive():
            try:
                _send(self.conn, {"cmd": "quit"})
                if self.conn.poll(10):
                    peak = _recv(self.conn)[0].get("peak_memory_mb", 0.0)
            except (EOFError, OSError):
                pass
            self.proc.join(5)
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join()
        self.conn.close()
        return peak


def run(job: Job) -> Outcome:
    """`bfs --workers N`, N > 1 (checker.engines chooses it)."""
    job.validate("bfs")
    with gc_paused():
        return _Coordinator(job).run()


class _Coordinator:
    def __init__(self, job: Job) -> None:
        self.n = job.options.workers
        # The visited set is the --fingerprints one, and the report says so:
        # the coordinator's job, derived from the caller's, which stays as given.
        job = replace(job, options=replace(job.options, fingerprints=True))
        self.job = job
        self.spec = reductions.reduce(job)
        self.ex = FingerprintExploration(self.spec)
        self.seen = self.ex.index.seen
        self.fps = self.ex.index.fps
        self.gen_by_action: Counter = Counter()
        self.generated = 0
        self.found = {w: False for w in job.witnesses}
        self.handles: list = []
        self.sizes: list[int] = []  # per worker: the states of its part of the level
        self.amaps: list[list[int]] = []  # per handle: its action ids -> global ids
        self.peaks: list[float] = []

    # -- the action table -----------------------------------------------------
    def _learn(self, h: int, names: list[str]) -> None:
        ex = self.ex
        for text in names:
            a = ast.literal_eval(text)
            gid = ex.action_ids.get(a)
            if gid is None:
                gid = ex.action_ids[a] = len(ex.actions)
                ex.actions.append(a)
            self.amaps[h].append(gid)

    # -- the search -----------------------------------------------------------
    def run(self) -> Outcome:
        job, ex = self.job, self.ex
        t0 = time.monotonic()
        deadline = (t0 + job.max_seconds) if job.max_seconds else None
        self.incomplete: str | None = None
        self.violation: Violation | None = None
        fp = Fingerprinter()
        init, seen = [], set()
        ex.levels.append(0)
        for s0 in self.spec.init_states():
            self.generated += 1
            f = fp(s0)
            if f not in seen:
                seen.add(f)
                init.append(s0)
                self.seen.add(f)
                self.fps.append(f)
                ex.parent.append(-1)
                ex.parent_action.append(-1)
        part = Part(job, self.spec)
        part.proposed = init  # the initial states, accepted and checked as a level
        local = _Local(part)
        local.accept(range(len(init)), 0)
        self.handles, self.amaps = [local], [[]]
        self._checked([local.result()])
        depth = 1 if init else 0
        level_size = len(init)
        idle = False  # whether the workers finished their last command
        try:
            while level_size and self.violation is None and self.incomplete is None:
                if len(self.handles) == 1 and self.n > 1 and level_size >= max(SPLIT_AT, 2 * self.n):
                    self._fork(local.part)
                level_size = self._level(deadline, depth)
                if level_size and self.violation is None:  # bfs's depth: the levels expanded
                    depth += 1
                    ex.levels.append(len(self.fps) - level_size)
            idle = True
        except KeyboardInterrupt:
            self.incomplete = "interrupted"
        finally:
            for h in self.handles:
                if isinstance(h, _Remote):
                    self.peaks.append(h.close(idle))
        seconds = time.monotonic() - t0
        if job.progress is not None:
            job.progress.done()
        return self._outcome(depth, seconds)

    def _fork(self, part: Part) -> None:
        ctx = multiprocessing.get_context("fork")
        amap = self.amaps[0]
        parts = [part.split(w, self.n) for w in range(self.n)]
        self.sizes = [len(p.frontier) for p in parts]
        self.handles = [_Remote(w, p, ctx) for w, p in enumerate(parts)]
        self.amaps = [list(amap) for _ in range(self.n)]

    def _level(self, deadline, depth: int) -> int:
        """Expand one level; returns the size of the next one (0: done or stopped)."""
        job, n_parts = self.job, len(self.handles)
        proposals: dict[int, int] = {}  # new fingerprint -> handle + n_parts * index, first proposal
        shared: dict[int, list[int]] = {}  # proposed by more than one worker: every proposal
        seen = self.seen
        got = [[array("Q"), array("q"), array("L")] for _ in self.handles]
        mults: list = [None] * n_parts  # per handle, from its last batch
        gen = [0] * n_parts  # per handle: steps generated
        deadlock = -1
        stopping = False

        def take(h: int, head: dict, arrays) -> None:
            nonlocal deadlock
            self._learn(h, head["actions"])
            amap = self.amaps[h]
            self.generated += head["generated"]
            gen[h] += head["generated"]
            for aid, c in head["coverage"].items():
                self.gen_by_action[amap[int(aid)]] += c  # JSON made the keys strs
            if head["deadlock"] >= 0 and (deadlock < 0 or head["deadlock"] < deadlock):
                deadlock = head["deadlock"]
            if len(arrays) == 4:
                mults[h] = arrays[3]
            fps, par, aids = arrays[:3]
            mine = got[h]
            code = h + n_parts * len(mine[0])  # of each proposal in turn
            for f in fps:
                if f not in seen:
                    c = proposals.setdefault(f, code)
                    if c != code and c % n_parts != h:  # (the same worker twice: a fingerprint collision)
                        others = shared.get(f)
                        if others is None:
                            shared[f] = [c, code]
                        elif all(x % n_parts != h for x in others):
                            others.append(code)
                code += n_parts
            mine[0].extend(fps)
            mine[1].extend(par)
            mine[2].extend(aids)

        def stop_reason() -> str | None:
            if deadline is not None and time.monotonic() >= deadline:
                return f"max-seconds {job.max_seconds:g} reached"
            if job.max_states is not None and len(self.fps) + len(proposals) >= job.max_states:
                return f"max-states {job.max_states} reached"
            return None

        if n_parts == 1 and isinstance(self.handles[0], _Local):
            part = self.handles[0].part
            while True:
                head, arrays = part.expand(BATCH)
                take(0, head, arrays)
                self._progress(len(proposals), head["left"], depth)
                if head["done"]:
                    break
                reason = stop_reason()
                if reason:
                    self.incomplete = reason
                    break
        else:
            for h in self.handles:
                h.start()
            busy = {h.conn: h for h in self.handles}
            left = list(self.sizes)  # states of the level each worker has yet to expand
            while busy:
                for conn in wait(list(busy), timeout=0.5):
                    h = busy[conn]
                    head, arrays = h.recv()
                    take(h.w, head, arrays)
                    left[h.w] = head["left"]
                    if head["done"]:
                        del busy[conn]
                self._progress(len(proposals), sum(left), depth)
                if not stopping:
                    reason = stop_reason()
                    if reason:
                        self.incomplete, stopping = reason, True
                        for h in busy.values():
                            h.stop()
        if deadlock >= 0:
            self.violation = Violation("Deadlock", "deadlock", self.ex.path_to(deadlock))
            return 0
        # A state costs about as much per step it generates as per successor it
        # proposes (fitted on the larger PIP-473 model's levels), and its
        # successors cost about what it did.
        costs = [(gen[h] + len(got[h][0])) / self.sizes[h] if self.sizes and self.sizes[h] else 0
                 for h in range(n_parts)]
        keep = assign(proposals, shared, mults, n_parts, shares(len(proposals), costs))
        ex, fps = self.ex, self.fps
        base = len(fps)
        for h, ks in zip(self.handles, keep):  # the workers check their parts while the coordinator records them
            ks.sort()
            h.accept(ks, base)
            base += len(ks)
        for h, ks in enumerate(keep):
            f_h, p_h, a_h = got[h]
            amap = self.amaps[h]
            new = [f_h[k] for k in ks]
            seen.update(new)
            fps.extend(new)
            ex.parent.extend([p_h[k] for k in ks])
            ex.parent_action.extend([amap[a_h[k]] for k in ks])
        del got, proposals, shared
        self._checked([h.result() for h in self.handles])
        self.sizes = [len(ks) for ks in keep]
        size = sum(self.sizes)
        return 0 if self.incomplete else size

    def _checked(self, results: list[dict]) -> None:
        bad = [r["violation"] for r in results if r["violation"] is not None]
        for r in results:
            for name in r["witnesses"]:
                self.found[name] = True
        if bad:
            j, name = min(bad)
            self.violation = Violation(name, "invariant", self.ex.path_to(j))

    def _progress(self, proposed: int, queue: int, depth: int) -> None:
        progress = self.job.progress
        if progress is not None:
            progress.update(distinct=len(self.fps) + proposed, generated=self.generated, queue=queue, depth=depth)

    def _outcome(self, depth: int, seconds: float) -> Outcome:
        ex, job = self.ex, self.job
        coverage = action_coverage(ex.actions, self.gen_by_action, ex.parent_action)
        own = peak_memory_mb()
        outcome = search_outcome(
            violation=self.violation,
            incomplete=self.incomplete,
            found_witnesses=self.found,
            engine="bfs",
            distinct_states=len(self.fps),
            states_generated=self.generated,
            depth=depth,
            seconds=seconds,
            coverage=coverage,
            peak_memory_mb=own + sum(self.peaks),
            exploration=ex,
            extra={"workers": {"processes": self.n, "forked": len(self.peaks),
                               "peak_memory_mb": [round(own, 1)] + [round(p, 1) for p in self.peaks]}},
        )
        return reductions.finish(job, self.spec, outcome)
