"""Scalable-topic segments (PIP-460) and their split/merge (PIP-468 order, in
protocol-notes.md): 1. read the parents' subscriptions, 2. create the
children with cursors at the earliest position, 3. terminate the parents
(appends then fail with TopicTerminated), 4. one metadata CAS: parents
SEALED, children ACTIVE. Steps 1 and 2 are one action (`createChildren`):
reading the subscriptions changes nothing.

Two initial segments split the key space [0, 4): s1 = [0, 2), s2 = [2, 4).
`merge` makes s3 = [0, 4) from s1 + s2; `split` makes s3 = [0, 1) and
s4 = [1, 2) from s1.
"""

from __future__ import annotations

from typing import NamedTuple

from .state import ABSENT, ACTIVE, CREATED, EMPTY_PART, SEALED, TERMINATED, S

KEYS = 4


class Topology(NamedTuple):
    ranges: tuple        # per segment (lo, hi)
    parents: tuple       # segment indexes sealed by the reshape
    children: tuple      # segment indexes created by the reshape


TOPOLOGIES = {
    "none": Topology(((0, 2), (2, 4)), (), ()),
    "merge": Topology(((0, 2), (2, 4), (0, 4)), (0, 1), (2,)),
    "split": Topology(((0, 2), (2, 4), (0, 1), (1, 2)), (0,), (2, 3)),
}


def route(topo: Topology, s: S, key: int) -> int | None:
    """The ACTIVE segment whose range holds `key` (None mid-reshape)."""
    for j, (lo, hi) in enumerate(topo.ranges):
        if s.status[j] == ACTIVE and lo <= key < hi:
            return j
    return None


def create_children(topo: Topology, s: S) -> S:
    """Steps 1 and 2: every subscription of the parents gets a cursor at the
    earliest position on each child."""
    status, part = list(s.status), list(s.part)
    subs = {"cursor": list(s.cursor), "rd": list(s.rd)}
    if s.cursor2:
        subs.update(cursor2=list(s.cursor2), rd2=list(s.rd2))
    for c in topo.children:
        status[c] = CREATED
        part[c] = EMPTY_PART
        for field, values in subs.items():
            values[c] = 1 if field.startswith("rd") else (0, frozenset())
    return s._replace(status=tuple(status), part=tuple(part), reshape=1,
                      **{field: tuple(values) for field, values in subs.items()})


def terminate_parents(topo: Topology, s: S) -> S:
    """Step 3; the ghost `fence` records each parent's ledger length, so that
    ParentFenced can tell an entry appended after the termination."""
    status, fence = list(s.status), list(s.fence)
    for p in topo.parents:
        status[p] = TERMINATED
        fence[p] = len(s.ledger[p])
    return s._replace(status=tuple(status), fence=tuple(fence), reshape=2)


def cas_metadata(topo: Topology, s: S) -> S:
    status = list(s.status)
    for p in topo.parents:
        status[p] = SEALED
    for c in topo.children:
        status[c] = ACTIVE
    return s._replace(status=tuple(status), reshape=3)


def trim_ledger(m, s: S, j: int):
    """trimLedger (bound `trim`): the managed ledger drops the entries every
    subscription has acknowledged (up to the slowest cursor's mark-delete
    position)."""
    first = min(s.cursor[j][0], s.cursor2[j][0]) + 1 if s.cursor2 else s.cursor[j][0] + 1
    if s.part[j] is None or first <= s.retained[j]:
        return None
    return s._replace(retained=s.retained[:j] + (first,) + s.retained[j + 1:])


def initial_status(topo: Topology) -> tuple:
    n = len(topo.ranges)
    return tuple(ACTIVE if j < 2 else ABSENT for j in range(n))
