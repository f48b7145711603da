"""The metadata store's records (Data Model): headers `/txn/<txnId>` and op
records `/txn-op/<txnId>/<seq>`, and the four secondary indexes as derived
views over them. The indexes are functions, never stored copies: "Indexes
update transactionally with the underlying records, so they self-clean."
"""

from __future__ import annotations

from .state import GONE, NONE, OPEN, SUB_FIELDS, TERMINAL, Header, Op, S


def header_state(s: S, t: int) -> str:
    h = s.hdr[t]
    return h.state if isinstance(h, Header) else h


def ops_of(s: S, t: int) -> frozenset[Op]:
    """list /txn-op/<txnId>/ (one partition: partitionKey = txnId), as the
    set of its records (a set the prover's derivation keeps symbolic, where
    a list would branch on each record's presence)."""
    return frozenset(o for o in s.ops if o.txn == t)


def writes_by_segment(s: S, seg: int) -> list[Op]:
    """idx:writes-by-segment."""
    return [o for o in s.ops if o.kind == "write" and o.seg == seg]


def acks_by_segment_subscription(s: S, seg: int, sub: int = 0) -> list[Op]:
    """idx:acks-by-segment-subscription."""
    return [o for o in s.ops if o.kind == "ack" and o.seg == seg and o.sub == sub]


def txn_by_deadline(s: S) -> list[int]:
    """idx:txn-by-deadline, range-queried for timeout_ms <= now."""
    return [t for t, h in enumerate(s.hdr)
            if isinstance(h, Header) and h.state == OPEN and h.deadline <= s.now]


def txn_by_final_state(s: S, retention: int) -> list[int]:
    """idx:txn-by-final-state, range-queried for finalized_ms + retention <= now."""
    return [t for t, h in enumerate(s.hdr)
            if isinstance(h, Header) and h.state in TERMINAL and 0 <= h.fin_at and h.fin_at + retention <= s.now]


def streams(m, s: S, t: int) -> set[tuple[int, str]]:
    """The event streams the coordinator's listing of t's ops finds: (segment,
    "events") per segment with an op of t; split: WRITE ops name the buffer's
    stream, ACK ops their subscription's pending-ack store's ("aevents",
    "aevents2")."""
    return {(o.seg, SUB_FIELDS[o.sub]["aevents"] if m.split and o.kind == "ack" else "events")
            for o in s.ops if o.txn == t}


def put_op(s: S, t: int, kind: str, seg: int, pos: int, cumulative: bool = False, sub: int = 0) -> dict:
    """A sequential put: the server assigns <seq>. Returns the changed fields
    (`ops`, `seqs`); the caller builds the new state."""
    seq = s.seqs[t]
    return {"ops": s.ops | {Op(t, seq, kind, seg, pos, cumulative, sub)},
            "seqs": s.seqs[:t] + (seq + 1,) + s.seqs[t + 1:]}


def exists(s: S, t: int) -> bool:
    return s.hdr[t] not in (NONE, GONE)

