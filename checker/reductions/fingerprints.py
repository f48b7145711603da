"""The fingerprint-only visited set (`--fingerprints`), as TLC keeps it.

The visited set holds 64-bit stable fingerprints (`encoding.fingerprint`)
instead of states, and the states of a BFS level are released once the level
is expanded, so memory per distinct state is a set entry, one fingerprint
and two parent-pointer slots (plus the states of the levels in progress). A counterexample is rebuilt by re-executing
the spec from an initial state along the parent pointers, choosing at each
step the successor with the recorded action and fingerprint.

Two distinct states with one fingerprint would make the second look visited,
so the result holds with the probability TLC reports (optimistic estimate):
P = distinct x (generated - distinct) / 2^64.
"""

from __future__ import annotations

from array import array

from ..encoding import Fingerprinter, fingerprint
from ..exploration import Exploration


class FingerprintSet:
    """The engine's `index` in fingerprint mode: membership by fingerprint.

    The states of the levels not yet released are also kept exactly, in
    `recent` (they are in memory anyway), so most duplicates, which BFS meets
    within a level or two, are found without encoding them. `get` returns 0
    for a visited state (the engine only uses the index of a visited state
    when it keeps edges, which this mode does not), and so does
    `recent.get`."""

    __slots__ = ("seen", "fps", "recent", "_last", "_last_fp", "_fingerprint")

    def __init__(self) -> None:
        self._fingerprint = Fingerprinter()
        self.seen: set[int] = set()
        self.fps = array("Q")  # fingerprint of each state, by index
        self.recent: dict = {}  # state -> 0
        self._last = None
        self._last_fp = 0

    def _fp(self, t) -> int:
        # The engine asks about a state, then adds it (or its shared copy).
        if t is not self._last and t != self._last:
            self._last, self._last_fp = t, self._fingerprint(t)
        return self._last_fp

    def get(self, t, default=None):
        if t in self.recent or self._fp(t) in self.seen:
            return 0
        return default

    def __contains__(self, t) -> bool:
        return t in self.recent or self._fp(t) in self.seen

    def __setitem__(self, t, j: int) -> None:
        f = self._fp(t)
        self.seen.add(f)
        self.fps.append(f)
        self.recent[t] = 0

    def __len__(self) -> int:
        return len(self.fps)


class FingerprintExploration(Exploration):
    """An Exploration that keeps fingerprints, parent pointers and the
    current BFS levels only."""

    def __init__(self, spec) -> None:
        super().__init__(spec)
        self.index = FingerprintSet()
        self.edges_kept = False

    def release(self, lo: int, hi: int) -> None:
        """Drop the states of the expanded level [lo, hi)."""
        states, recent = self.states, self.index.recent
        for k in range(lo, hi):
            recent.pop(states[k], None)
            states[k] = None

    def fingerprints(self) -> list[int]:
        return list(self.index.fps)

    def path_to(self, j: int):
        chain = []
        while j >= 0:
            chain.append(j)
            j = self.parent[j]
        chain.reverse()
        spec, fps = self.spec, self.index.fps
        step = getattr(spec, "next_all", spec.next)
        cur = next((s for s in spec.init_states() if fingerprint(s) == fps[chain[0]]), None)
        out = [(None, cur)]
        for k in chain[1:]:
            want = self.actions[self.parent_action[k]]
            cur = next((t for a, t in step(cur) if a == want and fingerprint(t) == fps[k]), None) if cur else None
            out.append((want, cur))
        if cur is None:  # only a fingerprint collision can cause this
            raise RuntimeError(f"--fingerprints: the trace to state {chain[-1]} cannot be rebuilt (fingerprint collision)")
        return out

    def graph(self, max_depth=None):
        raise RuntimeError("the state graph is not kept in fingerprint mode")


def collision_probability(distinct: int, generated: int) -> float:
    """TLC's optimistic estimate of a fingerprint collision."""
    return distinct * max(generated - distinct, 0) / 2.0 ** 64
