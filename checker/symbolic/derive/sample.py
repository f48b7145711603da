"""States of a model, for the first guess of its state's shape: the
initial states, a breadth-first prefix and seeded random walks. The guess
only has to be close; the derivation widens it to every successor the
spec's code can build from it, and the proof checks what it claims."""

from __future__ import annotations

import random
from collections import deque
from itertools import islice
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ....spec.api import Spec


def sample_states(spec: Spec, n: int, walks: int = 20, depth: int = 60, seed: int = 0) -> list:
    inits = list(spec.init_states())
    seen = set(inits)
    order = list(inits)
    todo = deque(inits)
    while todo and len(seen) < n:
        s = todo.popleft()
        for _, t in spec.next(s):
            if t not in seen:
                seen.add(t)
                order.append(t)
                todo.append(t)
    rng = random.Random(seed)
    for _ in range(walks if todo else 0):
        s = rng.choice(inits)
        for _ in range(depth):
            succ = list(islice(spec.next(s), 1000))
            if not succ:
                break
            s = rng.choice(succ)[1]
            if s not in seen:
                seen.add(s)
                order.append(s)
    return order
