"""The coordinator of the fingerprint search: it owns the visited set, runs
the levels (in process, or in forked workers once a level is large enough),
merges each level's proposals and builds the outcome (the package's
docstring tells how)."""

from __future__ import annotations

import ast
import multiprocessing
import os
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import replace
from multiprocessing.connection import wait
from typing import Any, cast

import numpy as np

from ... import failures, reductions
from ...encoding import field_fingerprint
from ...errors import EngineError
from ...exploration import peak_memory_mb, search_outcome
from ...job import Job, Outcome, Violation, ViolationKind
from . import moves
from .table import FingerprintTable, open_shared
from .trail import Trail, TrailError, rebuild
from .wire import Accepted, Batch, Remote
from .worker import BATCH, Part, quotas, serve

JOIN = 1 << 22  # fingerprints per insert into the visited set

SPLIT_AT = 1000  # states in a level before the workers are forked


class Coordinator:
    def __init__(self, job: Job) -> None:
        self.n = job.options.workers
        # The visited set is fingerprints, and the report says so: the
        # coordinator's job, derived from the caller's, which stays as given.
        job = replace(job, options=replace(job.options, fingerprints=True))
        self.job = job
        self.spec = reductions.reduce(job)
        self.gen_by_action: Counter = Counter()
        self.new_by_action: Counter = Counter()
        self.generated = 0
        self.found = {w: False for w in job.witnesses}
        self.actions: list = []  # global action id -> action
        self.action_ids: dict = {}
        self.amaps: list[list[int]] = [[]]  # per worker: its action ids -> global ids
        self.peaks: list[float] = []
        self.remotes: list[Remote] = []
        self.local: Part | None = None
        self.sizes: list[int] = []  # per worker: the states of its part of the level
        self.violation: Violation | None = None
        self.incomplete: str | None = None
        self.spilled = 0  # the most bytes one level and its proposals took on disk
        self.fields = 0  # the most field values a process numbered
        self.level_stats: list[dict] = []  # --workers: per level, each worker's states, CPU and quota
        self.distinct: int | None = None  # when a stop in one process counts fewer than the table holds
        self.move_cost = 0.0  # CPU seconds for a worker to take a moved state, as last measured

    # -- the action table -----------------------------------------------------
    def _learn(self, w: int, names: list[str]) -> None:
        for text in names:
            a = ast.literal_eval(text)
            gid = self.action_ids.get(a)
            if gid is None:
                gid = self.action_ids[a] = len(self.actions)
                self.actions.append(a)
            self.amaps[w].append(gid)

    def _action(self, w: int, aid: int):
        return self.actions[self.amaps[w][aid]]

    # -- the search -----------------------------------------------------------
    def run(self) -> Outcome:
        job = self.job
        t0 = time.monotonic()
        self.deadline = (t0 + job.max_seconds) if job.max_seconds else None
        self.folder = tempfile.mkdtemp(prefix="txncheck-search-")
        self.visited = FingerprintTable(shared=self.n > 1)
        self.trail = Trail(self.folder)
        depth, idle = 0, False
        try:
            depth = self._initial()
            size = self.sizes[0] if self.sizes else 0
            if size and self.violation is None:
                self.incomplete = job.depth_reached(depth)
            while size and self.violation is None and self.incomplete is None:
                if not self.remotes and self.n > 1 and size >= max(SPLIT_AT, 2 * self.n):
                    self._fork()
                size = self._level(depth)
                if size and self.violation is None and self.incomplete is None:  # bfs's depth: the levels expanded
                    depth += 1
                    self.incomplete = job.depth_reached(depth)
            idle = True
        except BaseException as exc:  # an interrupt, also inside a Z3 call (failures.as_interrupt)
            if not failures.stops_the_search(exc):
                raise
            self.incomplete = "interrupted"
        finally:
            for r in self.remotes:
                self.peaks.append(r.close(idle))
            try:
                outcome = self._outcome(depth, time.monotonic() - t0)
            finally:
                self.visited.close()
                shutil.rmtree(self.folder, ignore_errors=True)
        return outcome

    def _initial(self) -> int:
        """Level 1: the distinct initial states, checked in process."""
        cache: dict = {}
        fp = lambda s: field_fingerprint(s, cache)  # noqa: E731
        states, fps, seen = [], [], set()
        for s0 in self.spec.init_states():
            self.generated += 1
            f = fp(s0)
            if f not in seen:
                seen.add(f)
                states.append(s0)
                fps.append(f)
        part = self.local = Part(self.job, self.spec, self.folder)
        part.seed(states, fps)
        self.sizes = [len(states)]
        arr = np.array(fps, dtype=np.uint64)
        self.visited.add(arr)
        self.trail.write(1, 0, arr, np.zeros(len(fps), dtype=np.uint64), np.zeros(len(fps), dtype=np.uint32))
        for s, f in zip(states, fps):
            bad, holds = part.verdicts(s)
            for name in holds:
                self.found[name] = True
                part.pending.discard(name)
            if bad is not None:
                self.violation = Violation(bad, ViolationKind.INVARIANT, self._path(1, f))
                break
        return 1 if states else 0

    def _fork(self) -> None:
        ctx = multiprocessing.get_context("fork")
        amap = self.amaps[0]
        part = self.local
        assert part is not None, "forked from the level made in-process"
        parts = part.split(self.n)
        self.sizes = [len(p.level) for p in parts]
        self.remotes = [Remote(w, serve, p, ctx) for w, p in enumerate(parts)]
        self.amaps = [list(amap) for _ in range(self.n)]
        self.local = None

    def _stop_reason(self, distinct: int) -> str | None:
        job = self.job
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return f"max-seconds {job.max_seconds:g} reached"
        if job.max_states is not None and distinct >= job.max_states:
            return f"max-states {job.max_states} reached"
        return None

    def _take(self, w: int, head: Batch, found: list) -> None:
        """Count a batch's figures; remember its violation or deadlock."""
        self._learn(w, head["actions"])
        amap = self.amaps[w]
        self.generated += head["generated"]
        for aid, c in head["coverage"].items():
            self.gen_by_action[amap[int(aid)]] += c  # JSON made the keys strs
        for name in head["witnesses"]:
            self.found[name] = True
        for aid, c in head.get("new_by_action", {}).items():  # counted as kept if the level is accepted
            self.level_new[amap[int(aid)]] += c
        if head["violation"] is not None:
            f, pf, aid, name, seq = head["violation"]
            found.append((seq, f, w, pf, aid, name, ViolationKind.INVARIANT))
        if head["deadlock"] is not None:
            f, seq = head["deadlock"]
            found.append((seq, f, w, None, None, "Deadlock", ViolationKind.DEADLOCK))

    def _level(self, depth: int) -> int:
        """Expand one level; returns the size of the next one (0: done or stopped)."""
        found: list = []
        proposed = 0
        tables: list = []
        self.level_new: Counter = Counter()  # new states per action, as proposed
        before = len(self.visited)
        if self.local is not None:
            part = self.local
            part.begin(None, False, self.visited)  # its proposals join the visited set as they come
            for head in part.expand(BATCH):
                if head["done"]:
                    break
                if "cut" in head:  # in one process, count what bfs counts when it stops
                    head.update(head["cut"])
                    self.distinct = before + proposed + head["proposed"]
                self._take(0, head, found)
                proposed += head["proposed"]
                self._progress(before + proposed, head["left"], depth)
                if found:
                    break
                reason = self._stop_reason(before + proposed)
                if reason:
                    self.incomplete = reason
                    break
        else:
            visited = [self.visited.path, self.visited.log2]
            for r in self.remotes:
                r.send({"cmd": "expand", "visited": visited})
            busy = {r.conn: r for r in self.remotes}
            left = list(self.sizes)
            costs = [0.0] * len(self.remotes)
            stopping = False
            while busy:
                for conn in wait(list(busy), timeout=0.5):
                    r = busy[conn]
                    head = cast(Batch, r.recv())
                    if head["done"]:
                        del busy[conn]
                        tables.append((r.w, *head["table"]))
                        costs[r.w] = head["cpu"] / head["expanded"] if head.get("expanded") else 0
                        continue
                    self._take(r.w, head, found)
                    proposed += head["proposed"]
                    left[r.w] = head["left"]
                self._progress(before + proposed, sum(left), depth)
                if not stopping:
                    reason = "violation" if found else self._stop_reason(before + proposed)
                    if reason:
                        stopping = True
                        if reason != "violation":
                            self.incomplete = reason
                        for r in busy.values():
                            r.send({"cmd": "stop"})
        if found:
            self._violation(depth, found)
        stopped = self.violation is not None or self.incomplete is not None
        if self.local is not None:
            if stopped:
                self.new_by_action.update(self.level_new)  # a stopped level is not accepted: its proposals count
                return 0
            results = [self.local.accept([])]
            self.local.drop_table()
        else:
            tables.sort()
            proposals = [(_held(slots), slots) for slots in (open_shared(path, log2) for _, path, log2 in tables)]
            if stopped:  # the proposals join the visited set, for the counts
                for vals, _ in proposals:
                    self._join(vals)
                self.new_by_action.update(self.level_new)
                return 0
            quota = quotas(proposals, costs)
            self.level_stats.append({"states": list(self.sizes), "cpu_s": [round(c * n, 2) for c, n in
                                                                          zip(costs, self.sizes)],
                                     "quota": quota})
            # The workers keep their shares in turn (`share`), each told what the
            # ones before it kept of what it proposed too; the new states join
            # the visited set meanwhile.
            later = [[path, log2] for _, path, log2 in tables]
            taken: list = []
            results = []
            for k, r in enumerate(self.remotes):
                r.send({"cmd": "accept", "later": later[k + 1:], "taken": taken, "quota": quota[k]})
                if k == 0:
                    for vals, _ in proposals:
                        self._join(vals)
                    del proposals
                results.append(cast(Accepted, r.recv()))
                if results[-1]["claimed"] is not None:
                    taken = taken + [results[-1]["claimed"]]
            for r in self.remotes:
                r.ask({"cmd": "drop"})
        for w, res in enumerate(results):
            amap = self.amaps[w]
            for aid, c in res["kept_by_action"].items():
                self.new_by_action[amap[int(aid)]] += c
        self.sizes = [res["kept"] for res in results]
        self.spilled = max(self.spilled, sum(res["disk"] for res in results))
        self.fields = max(self.fields, max(res["fields"] for res in results))
        if self.remotes and all(costs):
            self._even_out(depth, costs)
        return sum(self.sizes)

    def _even_out(self, depth: int, costs: list) -> None:
        """Move states between the workers when their next parts are far
        apart (`moves.plan`): the quotas cannot even out the states a worker
        alone proposed (ADR 0005, "Moves")."""
        plan = moves.plan(self.sizes, costs, self.move_cost)
        if plan is None:
            return
        h, lo, count = plan
        path = os.path.join(self.folder, f"moved-{depth + 1:04d}-{h:03d}.bin")
        given = self.remotes[h].ask({"cmd": "give", "count": count, "path": path})["given"]
        if not given:
            return
        taken = self.remotes[lo].ask({"cmd": "take", "path": path})
        self.move_cost = taken["cpu"] / max(taken["taken"], 1)
        self.sizes[h] -= given
        self.sizes[lo] += taken["taken"]
        self.fields = max(self.fields, taken["fields"])
        self.level_stats[-1]["moved"] = [h, lo, given]

    def _violation(self, depth: int, found: list) -> None:
        """The reported violation: the first found in a worker's order of
        expansion, as bfs finds it (so a run in one process reports bfs's);
        a deadlock is a state of this level, an invariant's a new one."""
        _, f, w, pf, aid, name, kind = min(found, key=lambda x: (x[0], x[1]))
        if kind == ViolationKind.DEADLOCK:
            self.violation = Violation(name, kind, self._path(depth, f))
        else:
            self.violation = Violation(name, kind, self._path(depth, pf, last=(f, self._action(w, aid))))

    def _join(self, fps: np.ndarray) -> None:
        """Add a level's distinct fingerprints that the visited set lacks, a
        slice at a time: an insert's work arrays are several times its
        batch, which for a level of a hundred million states is gigabytes."""
        for lo in range(0, fps.size, JOIN):
            part = fps[lo:lo + JOIN]
            self.visited.add(part[~self.visited.contains(part)])

    def _path(self, level: int, fp: int, last=None):
        steps = self.trail.chain(level, fp, self._action)
        if last is not None:
            steps.append(last)
        try:
            cache: dict = {}
            return rebuild(self.spec, lambda s: field_fingerprint(s, cache), steps)
        except TrailError as exc:
            raise EngineError(str(exc)) from None

    def _progress(self, distinct: int, queue: int, depth: int) -> None:
        progress = self.job.progress
        if progress is not None:
            progress.update(distinct=distinct, generated=self.generated, queue=queue, depth=depth)

    def _outcome(self, depth: int, seconds: float) -> Outcome:
        job = self.job
        if job.progress is not None:
            job.progress.done()
        coverage: dict = {}
        for gid, n in self.gen_by_action.items():
            coverage.setdefault(self.actions[gid][0], {"generated": 0, "distinct": 0})["generated"] += n
        for gid, n in self.new_by_action.items():
            coverage.setdefault(self.actions[gid][0], {"generated": 0, "distinct": 0})["distinct"] += n
        own = peak_memory_mb()
        extra: dict[str, Any] = {"search": {"table_bytes": self.visited.nbytes, "trail_bytes": _trail_bytes(self.folder),
                            "level_disk_bytes": self.spilled, "field_values": self.fields}}
        if self.n > 1:
            extra["workers"] = {"processes": self.n, "forked": len(self.peaks),
                                "peak_memory_mb": [round(own, 1)] + [round(p, 1) for p in self.peaks],
                                "levels": self.level_stats}
        outcome = search_outcome(
            violation=self.violation,
            incomplete=self.incomplete,
            found_witnesses=self.found,
            engine="bfs",
            distinct_states=len(self.visited) if self.distinct is None else self.distinct,
            states_generated=self.generated,
            depth=depth,
            seconds=seconds,
            coverage=dict(sorted(coverage.items())),
            peak_memory_mb=own + sum(self.peaks),
            exploration=None,
            extra=extra,
        )
        return reductions.finish(job, self.spec, outcome)


def _trail_bytes(folder: str) -> int:
    try:
        return sum(e.stat().st_size for e in os.scandir(folder) if e.name.startswith("trail-"))
    except OSError:
        return 0


def _held(slots):
    """The fingerprints a table's slots hold."""
    return np.asarray(slots[slots != 0])
