"""States of a model, for the first guess of its state's shape: the
initial states, a breadth-first prefix, seeded biased random walks, and
for each sequence whose length varies, the longest a best-first search
and then swarm walks find, and the largest value of each int place that
swarm walks find. The guess only has to be close; the
derivation widens it to every successor the spec's code can build from it
(a sequence's capacity excepted: the samples set it, ADR 0011), and the
proof checks what it claims."""

from __future__ import annotations

import heapq
import random
from collections import deque
from itertools import count
from typing import TYPE_CHECKING

from ..walks import walk

if TYPE_CHECKING:
    from ....spec.api import Spec


LONGEST = 5_000   # states each best-first search for a longer sequence visits (0: none)
LONGER_BY = 2     # and it stops this many entries past the longest the prefix and walks show
SWARM_STEPS = 100_000   # steps of the swarm walks per sequence, after that search (0: none)
SWARM_DEPTH = 60        # steps of one swarm walk at most
SWARM_INT_STEPS = 100_000   # steps of the swarm walks for larger ints, every int place at once (0: none)


def sample_states(spec: Spec, n: int, walks: int = 200, depth: int = 60, seed: int = 0,
                  longest: int | None = None) -> list:
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
    if todo and walks:   # walks that favour the actions taken least (walks.py): a merge, a crash
        for s in walk(spec, walks * depth, seed=seed, depth=depth, biased=True):
            if s not in seen:
                seen.add(s)
                order.append(s)
    budget = LONGEST if longest is None else longest
    if budget and todo:   # else the prefix holds every reachable state
        lengths = _lengths(order)
        # a sequence of one length in every sample is taken for a fixed array, unless it is empty there
        for place in sorted(p for p, ls in lengths.items() if len(ls) > 1 or ls == {0}):
            known = max(lengths[place])
            found = _longer(spec, order, place, known, budget)
            found += _swarm(spec, order, place, max([known] + [_length_at(s, place) for s in found]),
                            known + LONGER_BY, SWARM_STEPS, seed)
            for s in found:
                if s not in seen:
                    seen.add(s)
                    order.append(s)
    if SWARM_INT_STEPS and todo:   # and the largest value of each int place, all at once
        for s in _swarm_ints(spec, order, SWARM_INT_STEPS, seed):
            if s not in seen:
                seen.add(s)
                order.append(s)
    return order


def _seqs(v, path=()):
    """(path, length) of each sequence in a state: a tuple that is not a
    record, and those within it (a set's elements are not places)."""
    if isinstance(v, tuple):
        if not hasattr(v, "_fields"):
            yield path, len(v)
        for i, x in enumerate(v):
            yield from _seqs(x, path + (i,))


def _lengths(states) -> dict:
    out: dict = {}
    for s in states:
        for path, n in _seqs(s):
            out.setdefault(path, set()).add(n)
    return out


def _length_at(s, path) -> int:
    for i in path:
        if not isinstance(s, tuple) or i >= len(s):
            return -1
        s = s[i]
    return len(s) if isinstance(s, tuple) and not hasattr(s, "_fields") else -1


def _longer(spec: Spec, starts: list, place: tuple, known: int, budget: int) -> list:
    """States where the sequence at `place` is longer than `known`, from a
    search from `starts` that visits `budget` more states, the longest
    there first (then the newest): a capacity the breadth-first prefix and
    the walks do not show (PIP-473's ledger holds three entries past the
    550,000 states of a breadth-first search to depth 9; this one finds
    three within 4,000)."""
    tick = count(len(starts))    # among equally long, the newest first: deep
    heap = [(-_length_at(s, place), -i, s) for i, s in enumerate(starts)]
    heapq.heapify(heap)
    seen, out = set(starts), []
    # a sequence that grows without bound fails the proof at its overflow whatever its
    # capacity: it gets a few more slots, not thousands
    most = known + LONGER_BY
    while heap and len(seen) < len(starts) + budget and known < most:
        _, _, s = heapq.heappop(heap)
        for _, t in spec.next(s):
            if t not in seen:
                seen.add(t)
                n = _length_at(t, place)
                if n > known:
                    known = n
                    out.append(t)
                heapq.heappush(heap, (-n, -next(tick), t))
    return out


def _swarm(spec: Spec, starts: list, place: tuple, known: int, most: int, steps: int, seed: int) -> list:
    """States where the sequence at `place` is longer than `known`, from
    swarm walks (Groce et al., "Swarm testing", ISSTA 2012): each walk
    starts at a sampled state that has the place and takes only the
    actions of a random half of the action names, uniformly among those
    enabled. A long sequence is often the work of a few actions left alone
    by the others: PIP-473's merged segment holds four entries once the
    four sends run with no crash, failover or decision between them, which
    neither uniform walks nor the best-first search (a plateau of equal
    lengths for a dozen steps) reach in 200,000 states, and these do in
    about 50,000 steps."""
    out: list = []
    for first, s in _walks(spec, [s for s in starts if _length_at(s, place) >= 0], steps, seed):
        if first and known >= most:
            break
        n = _length_at(s, place)
        if n > known:
            known = n
            out.append(s)
    return out


def _walks(spec: Spec, starts: list, steps: int, seed: int):
    """(whether a walk starts here, the state) of each step of `steps`
    steps of swarm walks from `starts`, SWARM_DEPTH steps each at most."""
    rng = random.Random(seed)
    while starts and steps > 0:
        keep: dict = {}     # action name -> taken in this walk (drawn when first seen)
        s = rng.choice(starts)
        for k in range(SWARM_DEPTH):
            steps -= 1
            succ = [t for label, t in spec.next(s) if keep.setdefault(label[0], rng.random() < 0.5)]
            if not succ:
                break
            s = rng.choice(succ)
            yield k == 0, s


def _ints(v, path=()):
    """(path, value) of each int in a state (bools are not; a set's
    elements are not places)."""
    if isinstance(v, tuple):
        for i, x in enumerate(v):
            yield from _ints(x, path + (i,))
    elif isinstance(v, int) and not isinstance(v, bool):
        yield path, v


def _swarm_ints(spec: Spec, starts: list, steps: int, seed: int) -> list:
    """States where an int place holds more than any of `starts` holds
    there (at most LONGER_BY more, as a sequence's length: a counter grows
    without bound), from swarm walks as `_swarm`'s, every place at once.
    The samples set an int's range as they set a capacity: at PIP-473's
    standard bounds these walks find the merged segment's watermark at 4,
    where the other searches' 10,000 states show it at 2 at most (9 CPU s)."""
    known: dict = {}
    for s in starts:
        for path, v in _ints(s):
            if v > known.get(path, v - 1):
                known[path] = v
    most = {path: v + LONGER_BY for path, v in known.items()}
    out: list = []
    for _, s in _walks(spec, starts, steps, seed):
        new = False
        for path, v in _ints(s):
            if path in known and known[path] < v <= most[path]:
                known[path], new = v, True
        if new:
            out.append(s)
    return out
