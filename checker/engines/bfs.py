"""The `bfs` engine: in-process breadth-first search, so every counterexample
is a shortest one.

The hot loop keeps the visited states in a dict (state -> index), which is
exact: states are canonical immutable values, so dict equality is state
equality and there are no fingerprint collisions. Stable fingerprints
(`encoding.fingerprint`) are computed only where a state leaves the process:
graph nodes, traces, checkpoints and Spark. See docs/adr/0001-state-encoding.md.

Edges are kept as three compact integer arrays (source index, target index,
action id), one entry per generated successor, duplicates included. The
networkx `DiGraph` with fingerprint nodes is materialized from them on demand
(`Exploration.graph()`), which keeps the hot loop free of networkx calls.

With `--workers N` (N > 1) the levels are expanded by forked worker
processes instead (`parallel.py`, ADR 0005).

Statistics follow TLC: distinct states; states generated (initial states
plus every successor, duplicates and self-loops included); depth (BFS
levels, the initial states being level 1); per-action coverage.
"""

from __future__ import annotations

import gc
import resource
import time
from array import array
from collections import Counter

from .. import reductions
from ..encoding import Fingerprinter
from ..job import Job, Outcome, Path, Violation
from ..verdicts import Verdicts

CHECK_EVERY = 1024  # expansions between clock/budget/progress checks


class Exploration:
    """The explored state space: states, parent pointers and edge arrays."""

    def __init__(self, spec) -> None:
        self.spec = spec
        self.states: list = []
        self.index: dict = {}
        self.parent = array("q")
        self.parent_action = array("q")
        self.src = array("L")
        self.dst = array("L")
        self.act = array("L")
        self.actions: list = []  # action id -> action
        self.action_ids: dict = {}
        self.levels: list[int] = []  # start index of each BFS level
        self.edges_kept = True
        self._fps: list[int] | None = None

    def path_to(self, j: int) -> Path:
        out = []
        while j >= 0:
            a = self.parent_action[j]
            out.append((self.actions[a] if a >= 0 else None, self.states[j]))
            j = self.parent[j]
        out.reverse()
        return out

    def fingerprints(self) -> list[int]:
        if self._fps is None or len(self._fps) != len(self.states):
            self._fps = list(map(Fingerprinter(), self.states))
        return self._fps

    def graph(self, max_depth: int | None = None):
        """The state graph as a networkx DiGraph: fingerprint nodes, and edges
        labelled with the list of actions that connect the two states."""
        import networkx as nx

        if not self.edges_kept:
            raise RuntimeError("the state graph was not kept for this run (it outgrew the graph limit)")
        fps = self.fingerprints()
        limit = len(self.states)
        if max_depth is not None and max_depth < len(self.levels):
            limit = self.levels[max_depth]
        g = nx.DiGraph()
        for i in range(limit):
            g.add_node(fps[i], index=i, initial=self.parent[i] < 0)
        labels = [format_action(a) for a in self.actions]
        for s, d, a in zip(self.src, self.dst, self.act):
            if s >= limit or d >= limit:
                continue
            u, v = fps[s], fps[d]
            data = g.get_edge_data(u, v)
            if data is None:
                g.add_edge(u, v, actions=[labels[a]])
            elif labels[a] not in data["actions"]:
                data["actions"].append(labels[a])
        return g


def format_action(a) -> str:
    name, params = a
    if not params:
        return name
    return f"{name}(" + ", ".join(f"{k}={v}" for k, v in params) + ")"


def action_coverage(actions: list, generated_by_aid, parent_action) -> dict[str, dict[str, int]]:
    """Per action name, sorted: successors generated, and distinct states
    first reached by it (from the parent-action array)."""
    coverage: dict[str, dict[str, int]] = {}
    for aid, n in generated_by_aid.items():
        c = coverage.setdefault(actions[aid][0], {"generated": 0, "distinct": 0})
        c["generated"] += n
    for aid in parent_action:
        if aid >= 0:
            coverage.setdefault(actions[aid][0], {"generated": 0, "distinct": 0})["distinct"] += 1
    return dict(sorted(coverage.items()))


def peak_memory_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


SUPPORTED_OPTIONS: set[str] = {"checkpoint", "resume", "checkpoint_interval"}
SUPPORTED_OPTIONS |= reductions.OPTIONS  # --symmetry --por --fingerprints --exact --compact
SUPPORTED_OPTIONS.add("workers")  # --workers N: engines/parallel.py


def run(job: Job) -> Outcome:
    job.reject_options("bfs", SUPPORTED_OPTIONS)
    explore = _explore
    if (job.options.get("workers") or 1) > 1:
        from .parallel import run as explore
    # States are acyclic tuples: the cyclic GC would only rescan millions of
    # long-lived objects (10-20% of a PIP-473 run), so it is off while exploring
    # (in forked workers too, which inherit the setting).
    paused = gc.isenabled()
    gc.disable()
    try:
        return explore(job)
    finally:
        if paused:
            gc.enable()


def _explore(job: Job) -> Outcome:
    spec = reductions.reduce(job)  # job.spec, or wrapped for --symmetry / --por
    nxt, canonical = reductions.representatives(spec)  # canonical: None without --symmetry
    pending_witnesses = set(job.witnesses)
    witness_check = job.witness_checker(pending_witnesses) if pending_witnesses else None
    verdicts = Verdicts(spec, job.invariant_checker(), witness_check, pending_witnesses)
    found_witnesses: dict[str, bool] = {n: False for n in job.witnesses}

    ex = reductions.exploration(job, spec)  # fingerprint-only for --fingerprints
    release = getattr(ex, "release", None)  # drops expanded levels in that mode
    share = reductions.sharer(job)  # --compact: stored states share equal parts
    states, index = ex.states, ex.index
    stored = getattr(index, "recent", index).get  # exact lookup (with fingerprints: the levels in memory)
    parent, parent_action = ex.parent, ex.parent_action
    src, dst, act = ex.src, ex.dst, ex.act
    keep = job.keep_graph and ex.edges_kept
    ex.edges_kept = keep
    actions, action_ids = ex.actions, ex.action_ids
    gen_by_action: Counter = Counter()  # only used when edges are not kept
    max_states = job.max_states
    deadline = (time.monotonic() + job.max_seconds) if job.max_seconds else None
    progress = job.progress

    t0 = time.monotonic()
    generated = 0
    violation: Violation | None = None
    incomplete: str | None = None
    # --checkpoint / --resume (checker/checkpoint.py): restore, then write periodically.
    from ..checkpoint import CheckpointWriteError, open_checkpointer
    ckpt, resumed = open_checkpointer(job, ex)
    if ckpt is not None:
        ckpt.catch_sigint()  # Ctrl-C then stops between expansions, with a final checkpoint
    stop_at = None  # where a resumed run would start after a clean stop

    def add(t, par: int, aid: int) -> int:
        nonlocal violation
        if share is not None:
            t = share(t)
        j = len(states)
        index[t] = j
        states.append(t)
        parent.append(par)
        parent_action.append(aid)
        bad, holds = verdicts(t)
        if bad is not None and violation is None:
            violation = Violation(bad, "invariant", ex.path_to(j))
        if pending_witnesses:
            for n in holds:
                if not found_witnesses[n]:
                    found_witnesses[n] = True
                    pending_witnesses.discard(n)
        return j

    if resumed is not None:
        generated, depth, lo, hi, start = resumed.generated, resumed.depth, resumed.lo, resumed.hi, resumed.next
        gen_by_action.update(resumed.generated_by_action)
        for n in resumed.witnesses_found:
            if n in found_witnesses:
                found_witnesses[n] = True
                pending_witnesses.discard(n)
    else:
        ex.levels.append(0)
        for s0 in spec.init_states():
            generated += 1
            if s0 not in index:
                add(s0, -1, -1)
            if violation:
                break
        depth = 1 if states else 0
        lo, hi = 0, len(states)
        start = lo

    try:
        while lo < hi and violation is None and incomplete is None:
            for i in range(start, hi):
                s = states[i]
                n_succ = 0
                for a, t in nxt(s):
                    n_succ += 1
                    aid = action_ids.get(a)
                    if aid is None:
                        aid = action_ids[a] = len(actions)
                        actions.append(a)
                    if canonical is None:
                        j = index.get(t)
                    else:  # a stored successor is a representative already
                        j = stored(t)
                        if j is None:
                            t = canonical(t)
                            j = index.get(t)
                    if j is None:
                        j = add(t, i, aid)
                        if violation is not None:
                            if keep:
                                src.append(i); dst.append(j); act.append(aid)
                            break
                    if keep:
                        src.append(i); dst.append(j); act.append(aid)
                    else:
                        gen_by_action[aid] += 1
                generated += n_succ
                if violation is not None:
                    break
                if n_succ == 0 and job.deadlock:
                    violation = Violation("Deadlock", "deadlock", ex.path_to(i))
                    break
                if not (i & (CHECK_EVERY - 1)):
                    now = time.monotonic()
                    if ckpt is not None and ckpt.interrupted:  # Ctrl-C, deferred to a clean point
                        incomplete = "interrupted"
                        stop_at = i + 1
                        break
                    if max_states is not None and len(states) >= max_states:
                        incomplete = f"max-states {max_states} reached"
                        stop_at = i + 1
                        break
                    if deadline is not None and now >= deadline:
                        incomplete = f"max-seconds {job.max_seconds:g} reached"
                        stop_at = i + 1
                        break
                    if ckpt is not None and ckpt.due(now):
                        try:
                            ckpt.write(generated=generated, depth=depth, lo=lo, hi=hi, next=i + 1,
                                       generated_by_action=gen_by_action, witnesses_found=[
                                           n for n, ok in found_witnesses.items() if ok])
                        except CheckpointWriteError:  # a full or read-only disk: stop, report what was found
                            incomplete = "checkpoint not written"
                            break
                    if progress is not None:
                        progress.update(distinct=len(states), generated=generated,
                                        queue=len(states) - i - 1, depth=depth)
            else:
                if release is not None:
                    release(lo, hi)
                start = lo = hi
                hi = len(states)
                if lo < hi:
                    depth += 1
                    ex.levels.append(lo)
                continue
            break
    except KeyboardInterrupt:
        incomplete = "interrupted"
    finally:
        if ckpt is not None:
            ckpt.release_sigint()
    if ckpt is not None and stop_at is not None:
        try:
            ckpt.write(generated=generated, depth=depth, lo=lo, hi=hi, next=stop_at,
                       generated_by_action=gen_by_action,
                       witnesses_found=[n for n, ok in found_witnesses.items() if ok])
        except CheckpointWriteError:
            pass  # the summary says so; `check` reports it in one line
    seconds = time.monotonic() - t0
    if progress is not None:
        progress.done()

    coverage = action_coverage(actions, Counter(act) if keep else gen_by_action, parent_action)
    violations = [violation] if violation else []
    if violation is None and incomplete is None:
        for n, ok in found_witnesses.items():
            if not ok:
                violations.append(Violation(n, "witness"))
    verdict = "violation" if violations else ("incomplete" if incomplete else "ok")
    outcome = Outcome(
        engine="bfs",
        verdict=verdict,
        distinct_states=len(states),
        states_generated=generated,
        depth=depth,
        seconds=seconds,
        violations=violations,
        coverage=coverage,
        peak_memory_mb=peak_memory_mb(),
        incomplete_reason=incomplete,
        witnesses_found=found_witnesses,
        exploration=ex,
        extra={"checkpoint": ckpt.summary()} if ckpt is not None else {},
    )
    return reductions.finish(job, spec, outcome)
