"""Seeded random walks of a spec that go where uniform walks rarely do.

A uniform walk takes the common actions almost every step, so the rare ones
(a crash, a failover, a GC sweep) and the deep interleavings they start are
seldom seen. Here each step picks among the enabled successors with weight
1 / (1 + n)^2, n being how often that action name was taken so far, so an
action not yet taken is favoured over one taken once, and so on; every walk
goes up to `depth` steps (a walk that can go no further starts again), and
the seed makes the walks reproducible. The agreement command compares the
relation with the spec on the states they visit; `prove` reaches the
model's witnesses with them.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Iterator

from ...spec.api import Spec


def walk(spec: Spec, states: int, seed: int = 0, depth: int = 100, biased: bool = False) -> Iterator:
    """`states` states (repeats included) from walks of at most `depth`
    steps, each step uniform among the successors, or `biased` as the
    module doc says (a walk that can go no further starts again)."""
    rng = random.Random(seed)
    inits = list(spec.init_states())
    taken: Counter = Counter()
    n = 0
    while n < states:
        s = rng.choice(inits)
        for _ in range(depth):
            yield s
            n += 1
            if n >= states:
                return
            succ = list(spec.next(s))
            if not succ:
                break
            if biased:
                label, s = rng.choices(succ, [1.0 / (1 + taken[a[0]]) ** 2 for a, _ in succ])[0]
            else:
                label, s = rng.choice(succ)
            taken[label[0]] += 1


def biased_walks(spec: Spec, states: int, seed: int = 0, depth: int = 100) -> Iterator:
    return walk(spec, states, seed, depth, biased=True)
