"""The coordinator of `bfs --workers N`: it owns the visited set, forks the
workers once a level is large enough, merges their proposals level by level
and builds the outcome (the package's docstring tells how)."""

from __future__ import annotations

import ast
import multiprocessing
import time
from array import array
from collections import Counter
from dataclasses import replace
from multiprocessing.connection import wait

from ... import reductions
from ...encoding import Fingerprinter
from ...errors import EngineError
from ...exploration import action_coverage, peak_memory_mb, search_outcome
from ...job import Job, Outcome, Violation, ViolationKind
from ...reductions.fingerprints import FingerprintExploration
from .assignment import assign, shares
from .wire import recv, send
from .worker import BATCH, Part, serve

SPLIT_AT = 1000  # states in a level before the workers are forked


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
        self.proc = ctx.Process(target=serve, args=(child, part), daemon=True, name=f"txncheck-worker-{w}")
        self.proc.start()
        child.close()

    def recv(self) -> tuple[dict, list]:
        try:
            head, arrays = recv(self.conn)
        except (EOFError, OSError):
            self.proc.join(1)
            raise EngineError(f"--workers: worker {self.w} died (exit code {self.proc.exitcode})") from None
        if "error" in head:
            raise EngineError(f"--workers: worker {self.w} failed: {head['error']}")
        return head, arrays

    def start(self) -> None:
        send(self.conn, {"cmd": "expand"})

    def stop(self) -> None:
        send(self.conn, {"cmd": "stop"})

    def accept(self, keep, base: int) -> None:
        send(self.conn, {"cmd": "accept", "base": base}, [array("L", keep)])

    def result(self) -> dict:
        return self.recv()[0]

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


class Coordinator:
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
        if init and self.violation is None:
            self.incomplete = job.depth_reached(depth)
        idle = False  # whether the workers finished their last command
        try:
            while level_size and self.violation is None and self.incomplete is None:
                if len(self.handles) == 1 and self.n > 1 and level_size >= max(SPLIT_AT, 2 * self.n):
                    self._fork(local.part)
                level_size = self._level(deadline, depth)
                if level_size and self.violation is None:  # bfs's depth: the levels expanded
                    depth += 1
                    ex.levels.append(len(self.fps) - level_size)
                    self.incomplete = job.depth_reached(depth)
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
            self.violation = Violation("Deadlock", ViolationKind.DEADLOCK, self.ex.path_to(deadlock))
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
            self.violation = Violation(name, ViolationKind.INVARIANT, self.ex.path_to(j))

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
