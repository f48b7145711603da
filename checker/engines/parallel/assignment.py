"""Which worker keeps each new state of a level, and how many each may keep:
plain functions of fingerprints and counts, so a run does not depend on timing."""

from __future__ import annotations

import math


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
