"""How the spec and the implementation name the same things: units, the
subscriptions, sentinel positions, and which store events carry a decision."""

from __future__ import annotations

from ...reference.store import ChangeEvent

UNIT_MS = 1000  # one spec clock unit, in the implementation's milliseconds
SUBS = ("sub", "sub2")  # the spec's subscriptions sub1, sub2 (bound subs), as the implementation names them

RECOVERED = -1  # the spec's `Part.tpos` position of a txn that recovery found OPEN
UNKEYED = 99    # the spec's prune key of an aborted record that has none yet (fixed F8)
FOUND = -2      # the spec's key of a queued apply whose entry recovery made (apply = steps)
NO_GC = (-1, -1)  # the spec's `gcsnap` of a txn whose header the GC has not deleted
PLAIN = "-"     # the spec's tag of a non-transactional entry, and of a normal publish's item of the apply chain


def sub_of(params) -> str:
    """The implementation's subscription an action names (sub1 unless told)."""
    return SUBS[int(params.get("sub", "sub1")[3:]) - 1]


IN_FLIGHT = ("read", "checked", "op", "appended", "valid")  # a request's stages between check and done


def holds(broker, tid: str) -> bool:
    """The broker's buffer or one of its pending-ack stores believes tid OPEN."""
    return tid in broker.cache or any(tid in pa.cache for pa in broker.pending_acks.values())


def is_decision(event: ChangeEvent | None) -> bool:
    """A header notification that tells a participant something: the decision
    CAS or the header's deletion. The coordinator's later finalize write
    (only `finalized_ms` changes) carries no decision."""
    return event is None or event.value is None or event.value.get("finalized_ms") is None
