"""The `simulate` engine: seeded random walks, for depths exhaustive search
cannot reach.

Each walk starts from a random initial state and takes up to `walk_depth`
random enabled actions, checking the invariants on every state it visits. A
violation is reported with the walk that found it (not necessarily shortest).
A run without a violation is never called `ok`: simulation proves nothing
about the states it did not visit, so the verdict is `incomplete` (exit 3).
Runs are reproducible: the walk choices come from `random.Random(seed)`.

`distinct_states` counts the distinct states visited; `states_generated`
counts every successor computed, as in bfs. Each distinct state is checked
once, when first visited, for the invariants and for the model's witnesses
(`verdicts.Verdicts`, as bfs does);
`witnesses_found` says which witnesses some walk reached, so a user can tell
whether the walks got where the properties bite. A witness never reached is
reported, not a violation: the walks cover only part of the space.
"""

from __future__ import annotations

import random
import time

from ...spec.api import Action, State
from .. import failures
from ..job import Job, Outcome, Verdict, Violation, ViolationKind
from ..exploration import peak_memory_mb
from ..verdicts import Verdicts

def run(job: Job) -> Outcome:
    job.validate("simulate")
    spec = job.spec
    opts = job.options
    rng = random.Random(opts.seed if opts.seed is not None else 0)
    walks = opts.walks if opts.walks is not None else 1000
    walk_depth = opts.walk_depth if opts.walk_depth is not None else 100
    found = {n: False for n in job.witnesses}
    pending = set(found)
    verdicts = Verdicts(spec, job.invariant_checker(), job.witness_checker(pending) if pending else None, pending)
    inits = list(spec.init_states())
    seen: set = set()
    generated = len(inits)
    coverage: dict[str, dict[str, int]] = {}
    max_depth = 0
    violation = None
    incomplete = "simulation is not exhaustive"
    deadline = time.monotonic() + job.max_seconds if job.max_seconds else None
    t0 = time.monotonic()
    try:
        for w in range(walks):
            s = rng.choice(inits)
            path: list[tuple[Action | None, State]] = [(None, s)]
            for _ in range(walk_depth + 1):
                if s not in seen:  # a state seen before passed these checks then
                    seen.add(s)
                    bad, holds = verdicts(s)
                    if bad is not None:
                        violation = Violation(bad, ViolationKind.INVARIANT, list(path))
                        break
                    for n in holds:
                        found[n] = True
                        pending.discard(n)
                succ = list(spec.next(s))
                generated += len(succ)
                for a, _ in succ:
                    coverage.setdefault(a[0], {"generated": 0, "distinct": 0})["generated"] += 1
                if not succ:
                    if job.deadlock:
                        violation = Violation("Deadlock", ViolationKind.DEADLOCK, list(path))
                    break
                if len(path) > walk_depth:
                    break
                a, s = rng.choice(succ)
                if s not in seen:
                    coverage[a[0]]["distinct"] += 1
                path.append((a, s))
            max_depth = max(max_depth, len(path))
            if violation is not None:
                break
            if job.max_states and len(seen) >= job.max_states:
                incomplete = f"max-states {job.max_states} reached"
                break
            if deadline and time.monotonic() >= deadline:
                incomplete = f"max-seconds {job.max_seconds:g} reached"
                break
            if job.progress is not None:
                job.progress.update(distinct=len(seen), generated=generated, queue=walks - w - 1, depth=max_depth)
    except BaseException as exc:  # an interrupt, also inside a Z3 call (failures.as_interrupt)
        if not failures.stops_the_search(exc):
            raise
        incomplete = "interrupted"
    if job.progress is not None:
        job.progress.done()
    return Outcome(
        engine="simulate",
        verdict=Verdict.VIOLATION if violation else Verdict.INCOMPLETE,
        distinct_states=len(seen),
        states_generated=generated,
        depth=max_depth,
        seconds=time.monotonic() - t0,
        violations=[violation] if violation else [],
        coverage=dict(sorted(coverage.items())),
        peak_memory_mb=peak_memory_mb(),
        incomplete_reason=None if violation else incomplete,
        witnesses_found=found,
    )
