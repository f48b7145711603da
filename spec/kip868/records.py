"""Metadata records and the Raft log they sit in (KIP-868 "Public Interfaces").

A record is a small tuple:

    ("B", t)      BeginTransactionRecord of transaction t
    ("R", t, i)   the i-th metadata record of transaction t (TopicRecord, ...)
    ("E", t)      EndTransactionRecord
    ("A", t)      AbortTransactionRecord
    ("N", n)      a metadata record written outside any transaction

The log is a tuple of Raft batches, each a tuple of records; record offsets
count from 0 across batches, as in the KRaft log. The high watermark counts
committed batches (Raft commits whole batches).
"""

from __future__ import annotations

BEGIN, RECORD, END, ABORT, NORMAL = "B", "R", "E", "A", "N"
MARKERS = (BEGIN, END, ABORT)


def is_data(rec: tuple) -> bool:
    return rec[0] == RECORD or rec[0] == NORMAL


def record_name(rec: tuple) -> str:
    kind = rec[0]
    if kind == RECORD:
        return f"t{rec[1]}.r{rec[2]}"
    if kind == NORMAL:
        return f"n{rec[1]}"
    return {BEGIN: "Begin", END: "End", ABORT: "Abort"}[kind] + f"(t{rec[1]})"


def txn_script(t: int, records: int) -> tuple[tuple, ...]:
    """What the controller appends for transaction t: Begin, its records, End."""
    return ((BEGIN, t),) + tuple((RECORD, t, i) for i in range(1, records + 1)) + ((END, t),)


def flatten(log) -> tuple[tuple, ...]:
    return tuple(r for batch in log for r in batch)


def batch_end_offsets(log) -> tuple[int, ...]:
    """The offset of the last record of each batch."""
    out, off = [], -1
    for batch in log:
        off += len(batch)
        out.append(off)
    return tuple(out)


def open_txn(records) -> tuple[int, int] | None:
    """(txn, offset of its Begin) if the records end inside a transaction."""
    cur = None
    for off, rec in enumerate(records):
        kind = rec[0]
        if kind == BEGIN:
            cur = (rec[1], off)
        elif kind == END or kind == ABORT:
            cur = None
    return cur


def txn_status(records, ntxns: int) -> tuple[str, ...]:
    """Per transaction 1..ntxns: none, open, committed (End seen) or aborted."""
    st = ["none"] * (ntxns + 1)
    for rec in records:
        kind = rec[0]
        if kind == BEGIN:
            st[rec[1]] = "open"
        elif kind == END:
            st[rec[1]] = "committed"
        elif kind == ABORT:
            st[rec[1]] = "aborted"
    return tuple(st[1:])


def state_at(records, offset: int) -> frozenset:
    """The controller's in-memory state after replaying records up to `offset`:
    records are applied as they come, and Abort reverts to the snapshot taken
    just before Begin (KIP-868 "Transactions in the KRaft Controller")."""
    state: set = set()
    before_begin: frozenset | None = None
    for rec in records[: offset + 1]:
        kind = rec[0]
        if kind == BEGIN:
            before_begin = frozenset(state)
        elif kind == ABORT:
            state = set(before_begin or ())
            before_begin = None
        elif kind == END:
            before_begin = None
        else:
            state.add(rec)
    return frozenset(state)


def marker_offsets(records) -> dict[int, tuple[int, int | None]]:
    """txn -> (Begin offset, End/Abort offset or None)."""
    out: dict[int, tuple[int, int | None]] = {}
    for off, rec in enumerate(records):
        kind = rec[0]
        if kind == BEGIN:
            out[rec[1]] = (off, None)
        elif kind == END or kind == ABORT:
            # an End or Abort with no Begin before it (a replay error) spans no records
            out[rec[1]] = (out[rec[1]][0] if rec[1] in out else off, off)
    return out
