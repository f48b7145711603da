"""The bound `check` audited: `atomic` (a send's header read and its
callback's cache put in one step, `publishCheck`) against `steps` (the put is
`publishCache`, as `readStateCacheFirst` runs it). With one send per txn and
segment the join hides nothing: every property has the same verdict. With
two sends of one txn on a segment it does hide a run: the second send's read
answers OPEN, the first send's op is listed, its decision applied and the
entry dropped, then the second read's callback puts the entry back, OPEN,
for a decided txn; the first send's append lands on it, and the GC deletes
the header while the buffer still tracks the txn (GcSafety), in merged and
in fixed without F11 (late-cache-put-merged.toml; F11's necessity is in
tests/test_pip473.py). docs/pip473.md's atomicity table says so."""

from __future__ import annotations

import pytest

from txncheck.spec.pip473.protocol import publish
from txncheck.spec.pip473.protocol.publish_cache import cache_put
from txncheck.spec.pip473.spec import Pip473
from txncheck.spec.pip473.protocol.state import DONE, OPEN, READ
from txncheck.spec.pip473.protocol.store import header_state

from .test_apply_audit import PROPERTIES, SMALL
from .test_pruning_audit import first_violations

TWO_SENDS = {**SMALL, "writes": "t1:0 t1:0", "acks": "", "crashes": 0, "client": "stock"}


def _differ(variant: str, bounds: dict) -> dict:
    """Per property whose verdict differs: (shortest violation under atomic, under steps); None holds."""
    joined, _, _ = first_violations(Pip473(variant, **bounds, check="atomic"))
    split, _, _ = first_violations(Pip473(variant, **bounds, check="steps"))
    return {p: (joined[p], split[p]) for p in PROPERTIES if (joined[p] is None) != (split[p] is None)}


@pytest.mark.parametrize("variant", ["merged", "fixed"])
def test_atomic_check_misses_no_violation_with_one_send_per_segment(variant):
    assert _differ(variant, SMALL) == {}


@pytest.mark.parametrize("variant, differ", [("merged", {"GcSafety": (None, 11)}), ("fixed", {})])
def test_atomic_check_misses_the_entry_a_late_callback_remakes(variant, differ):
    """The stock client: the timeout sweep aborts between the two reads'
    callbacks. fixed's F11 fails the second send at its callback."""
    assert _differ(variant, TWO_SENDS) == differ


def _stale(m, s, remade: bool) -> bool:
    """A buffer holds an OPEN entry of a decided txn with no event pending,
    no fan-out owed and no header read of it out. `remade`: after the
    decision was applied there (a send of the txn done, its op deleted)."""
    for j, p in enumerate(s.part):
        if p is None or p.events:
            continue
        for t in p.cache:
            if header_state(s, t) == OPEN or any(x[0] == t and x[1] != "fin" for x in s.tcp):
                continue
            mine = [pub.stage for k, pub in enumerate(s.pubs) if m.op_txn[k] == t and pub.seg == j]
            if READ in mine:
                continue
            if not remade or DONE in mine and not any(o.txn == t and o.seg == j for o in s.ops):
                return True
    return False


def _first(m, remade: bool):
    """The length of the shortest run to a stale entry (None: unreachable)."""
    level = list(dict.fromkeys(m.init_states()))
    seen, depth = set(level), 0
    while level:
        depth += 1
        if any(_stale(m, s, remade) for s in level):
            return depth
        level = [t for s in level for _, t in m.next(s) if t not in seen and not seen.add(t)]
    return None


@pytest.mark.parametrize("variant", ["merged", "fixed"])
def test_the_split_reaches_an_entry_remade_after_its_decision(variant):
    """A stale OPEN entry as such is reached with the join too (4 states: the
    check, then the decision before the op put, whose listing finds no op
    here: coalesced-events' run); one made again after the decision was
    applied on the segment is reached only by the split, and in fixed not at
    all (F11)."""
    joined, split = (Pip473(variant, **TWO_SENDS, check=c) for c in ("atomic", "steps"))
    assert (_first(joined, False), _first(split, False)) == (4, 5)
    assert _first(joined, True) is None
    assert _first(split, True) == {"merged": 10, "fixed": None}[variant]


@pytest.mark.parametrize("variant", ["merged", "fixed"])
def test_the_read_then_its_callback_is_the_joined_check(variant):
    """From every reachable state of the split model with a send not yet
    checked, its read followed at once by its callback's put reaches what the
    joined publishCheck reaches: the split adds runs only by what comes
    between the two (a read that answers a decided header rejects at once)."""
    split, joined = (Pip473(variant, **TWO_SENDS, check=c) for c in ("steps", "atomic"))
    level = list(dict.fromkeys(split.init_states()))
    seen, outcomes = set(level), set()
    while level:
        for s in level:
            for k in range(len(split.writes)):
                after = publish.check(split, s, k)
                if after is None:
                    continue
                outcomes.add(after.pubs[k].stage)
                if after.pubs[k].stage == READ:   # at once: nothing applied in between (F11 no matter)
                    after = cache_put(split, after, k)
                assert after == publish.check(joined, s, k), (s, k)
        level = [t for s in level for _, t in split.next(s) if t not in seen and not seen.add(t)]
    assert outcomes == {READ, "checked", "rejected"}   # a miss, a hit, a read of a decided header
