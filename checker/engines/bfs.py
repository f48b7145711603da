"""The `bfs` engine with exact states: in-process breadth-first search, so
every counterexample is a shortest one.

The hot loop keeps the visited states in the `Exploration`
(checker/exploration.py): a dict (state -> index), exact, and the edges as
integer arrays.

With `--fingerprints` or `--workers N` (N > 1) `checker.engines` runs
`parallel/` instead: the fingerprint search, in process or in forked
workers (ADR 0005, ADR 0010).

Statistics follow TLC: distinct states; states generated (initial states
plus every successor, duplicates and self-loops included); depth (BFS
levels, the initial states being level 1); per-action coverage.
"""

from __future__ import annotations

import time
from collections import Counter

from .. import failures, reductions
from ..errors import EngineError
from ..exploration import action_coverage, gc_paused, peak_memory_mb, search_outcome
from ..job import Job, Outcome, Violation, ViolationKind
from ..verdicts import Verdicts

CHECK_EVERY = 1024  # expansions between clock/budget/progress checks


def run(job: Job) -> Outcome:
    """The in-process search; `checker.engines.get_engine("bfs")` runs
    parallel/ instead when the job asks for more than one worker."""
    job.validate("bfs")
    if job.options.workers > 1 or job.options.fingerprints:
        raise EngineError("--fingerprints and --workers N run through checker.engines.get_engine('bfs') "
                          "(engines/parallel/), not engines.bfs.run")
    with gc_paused():
        return _explore(job)


def _explore(job: Job) -> Outcome:
    spec = reductions.reduce(job)  # job.spec, or wrapped for --symmetry / --por
    nxt, canonical = reductions.representatives(spec)  # canonical: None without --symmetry
    pending_witnesses = set(job.witnesses)
    witness_check = job.witness_checker(pending_witnesses) if pending_witnesses else None
    verdicts = Verdicts(spec, job.invariant_checker(), witness_check, pending_witnesses)
    found_witnesses: dict[str, bool] = {n: False for n in job.witnesses}

    ex = reductions.exploration(job, spec)
    share = reductions.sharer(job)  # --compact: stored states share equal parts
    states, index = ex.states, ex.index
    stored = index.get
    parent, parent_action = ex.parent, ex.parent_action
    src, dst, act = ex.src, ex.dst, ex.act
    keep = job.keep_graph and ex.edges_kept
    ex.edges_kept = keep
    actions, action_ids = ex.actions, ex.action_ids
    gen_by_action: Counter = Counter()  # only used when edges are not kept
    max_states = job.max_states
    limit = max_states if max_states is not None else float("inf")   # --max-states: exactly this many
    deadline = (time.monotonic() + job.max_seconds) if job.max_seconds else None
    progress = job.progress

    t0 = time.monotonic()
    generated = 0
    violation: Violation | None = None
    incomplete: str | None = None
    # --checkpoint / --resume (engines/checkpoint/): restore, then write periodically.
    from .checkpoint.store import CheckpointWriteError, open_checkpointer
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
            violation = Violation(bad, ViolationKind.INVARIANT, ex.path_to(j))
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
        if states and violation is None:
            incomplete = job.depth_reached(depth)

    if lo < hi and violation is None and incomplete is None and len(states) >= limit:
        incomplete, stop_at = f"max-states {max_states} reached", start
    try:
        while lo < hi and violation is None and incomplete is None:
            for i in range(start, hi):
                s = states[i]
                n_succ = 0
                full = False
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
                        if len(states) >= limit:   # --max-states
                            full = True
                            if ckpt is None:   # stop here: exactly that many states
                                if keep:
                                    src.append(i); dst.append(j); act.append(aid)
                                else:
                                    gen_by_action[aid] += 1
                                break
                    if keep:
                        src.append(i); dst.append(j); act.append(aid)
                    else:
                        gen_by_action[aid] += 1
                if full and violation is None:
                    # a checkpoint holds whole expansions only, so a checkpointed run ends state i's first
                    incomplete = f"max-states {max_states} reached"
                    generated += n_succ
                    stop_at = i + 1
                    break
                generated += n_succ
                if violation is not None:
                    break
                if n_succ == 0 and job.deadlock:
                    violation = Violation("Deadlock", ViolationKind.DEADLOCK, ex.path_to(i))
                    break
                if not (i & (CHECK_EVERY - 1)):
                    now = time.monotonic()
                    if ckpt is not None and ckpt.interrupted:  # Ctrl-C, deferred to a clean point
                        incomplete = "interrupted"
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
                start = lo = hi
                hi = len(states)
                if lo < hi:
                    depth += 1
                    ex.levels.append(lo)
                    incomplete = job.depth_reached(depth)
                continue
            break
    except BaseException as exc:  # an interrupt, also inside a Z3 call (failures.as_interrupt)
        if not failures.stops_the_search(exc):
            raise
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
    outcome = search_outcome(
        violation=violation,
        incomplete=incomplete,
        found_witnesses=found_witnesses,
        engine="bfs",
        distinct_states=len(states),
        states_generated=generated,
        depth=depth,
        seconds=seconds,
        coverage=coverage,
        peak_memory_mb=peak_memory_mb(),
        exploration=ex,
        extra={"checkpoint": ckpt.summary()} if ckpt is not None else {},
    )
    return reductions.finish(job, spec, outcome)
