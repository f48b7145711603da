"""Which actions are dependent, and why, from a sample of states: for each
two actions enabled in a state, whether each leaves the other enabled and
whether both orders reach the same states. That is what partial-order
reduction needs of a pair (independence); the reasons say what to change
(a finer footprint, a field split in two) to make a pair independent.

Pairs are counted by action name, and apart when the two instances share a
parameter value (the same txn, the same segment) or not. When the spec
declares footprints (`Spec.footprints`, what `--por` reads), each pair is
also judged by them: a pair they call dependent that commuted in every
sampled state is one where finer footprints could let POR reorder.

Visibility: per action, the observation symbols it changed in the sample,
and so the properties it is visible to (those that read one of them).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..reductions.locations import overlap, read_locations
from .fields import Layout

if TYPE_CHECKING:
    from ...spec.api import Spec


@dataclass
class Pair:
    co_enabled: int = 0
    independent: int = 0
    shared: int = 0               # co-enabled instances that share a parameter value
    shared_independent: int = 0
    declared_dependent: int = 0   # by the footprints
    declared_but_commuted: int = 0
    reasons: Counter = field(default_factory=Counter)


@dataclass
class Commutation:
    states: int
    pairs: dict                   # (name, name) -> Pair
    writes: dict                  # action name -> Counter of components it changed
    changes_symbols: dict         # action name -> Counter of observation symbols it changed
    visible_to: dict              # action name -> properties that read a symbol it changed
    footprints: bool


def _touches(xs, ys) -> bool:
    return any(overlap(a, b) for a in xs for b in ys)


def commutation(spec: Spec, layout: Layout, states: list, sample: list[int], properties: dict) -> Commutation:
    try:
        fps = spec.footprints()
    except Exception:
        fps = None
    reads = {name: {loc[0] for loc in read_locations(spec.schema, f)} for name, f in properties.items()}
    pairs: dict = defaultdict(Pair)
    writes: dict = defaultdict(Counter)
    symbols: dict = defaultdict(Counter)
    for i in sample:
        s = states[i]
        succ: dict = {}
        for a, t in spec.next(s):
            succ.setdefault(a, []).append(t)
        cache: dict = {}

        def after(t):
            got = cache.get(t)
            if got is None:
                got = cache[t] = {}
                for b, u in spec.next(t):
                    got.setdefault(b, []).append(u)
            return got

        vs = layout.values(s)
        obs = spec.observe(s)
        for a, ts in succ.items():
            for t in ts:
                vt = layout.values(t)
                writes[a[0]].update(layout.names[c] for c in range(len(vs)) if vs[c] != vt[c])
                o = spec.observe(t)
                symbols[a[0]].update(k for k in obs if o.get(k) != obs[k])
        labels = list(succ)
        for x in range(len(labels)):
            for y in range(x + 1, len(labels)):
                a, b = labels[x], labels[y]
                if (a[0], repr(a[1])) > (b[0], repr(b[1])):
                    a, b = b, a
                p = pairs[(a[0], b[0])]
                shared = bool({v for _, v in a[1]} & {v for _, v in b[1]})
                p.co_enabled += 1
                p.shared += shared
                ok, why = _commute(a, b, succ, after, layout)
                if ok:
                    p.independent += 1
                    p.shared_independent += shared
                else:
                    p.reasons[why] += 1
                if fps is not None:
                    fa, fb = fps.get(a), fps.get(b)
                    dep = fa is None or fb is None or (_touches(fa[1], fb[0]) or _touches(fa[1], fb[1])
                                                       or _touches(fa[0], fb[1]))
                    p.declared_dependent += dep
                    p.declared_but_commuted += dep and ok
    visible = {a: sorted(p for p, syms in reads.items() if syms & set(c)) for a, c in symbols.items()}
    return Commutation(len(sample), dict(pairs), dict(writes), dict(symbols), visible, fps is not None)


def _commute(a, b, succ: dict, after, layout: Layout) -> tuple[bool, str]:
    ab, ba = set(), set()
    for t in succ[a]:
        nxt = after(t).get(b)
        if nxt is None:
            return False, f"{a[0]} disables {b[0]}"
        ab.update(nxt)
    for u in succ[b]:
        nxt = after(u).get(a)
        if nxt is None:
            return False, f"{b[0]} disables {a[0]}"
        ba.update(nxt)
    if ab == ba:
        return True, ""
    if len(ab) == 1 and len(ba) == 1:
        va, vb = layout.values(next(iter(ab))), layout.values(next(iter(ba)))
        diff = [layout.names[c] for c in range(len(va)) if va[c] != vb[c]]
        return False, "the order changes " + ", ".join(diff[:3]) + (" ..." if len(diff) > 3 else "")
    return False, "the two orders reach different states"
