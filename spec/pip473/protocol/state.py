"""The PIP-473 state: the metadata store, the segments, the participants, the
coordinator, the clients and the ghost history, as one immutable value.

Everything is indexed by position in the model's fixed tuples: txn `i` is
`t{i+1}`, segment `j` is `s{j+1}`, client operation `k` is the k-th item of
the plan (see `plan.py`). Collections are frozensets of small tuples, so the
state is canonical.
"""

from __future__ import annotations

from typing import NamedTuple

from ...api import quick_replace

# Header states (`/txn/<txnId>.state`); NONE = never created, GONE = deleted by GC.
NONE, OPEN, COMMITTED, ABORTED, GONE = "NONE", "OPEN", "COMMITTED", "ABORTED", "GONE"
TERMINAL = (COMMITTED, ABORTED)

# Segment status (PIP-460/468): a child is CREATED before the metadata CAS
# makes it ACTIVE; a parent is TERMINATED (ledger refuses appends) before the
# CAS makes it SEALED.
ABSENT, CREATED, ACTIVE, TERMINATED, SEALED = "-", "CREATED", "ACTIVE", "TERMINATED", "SEALED"

PLAIN = "-"  # tag of a non-transactional ledger entry

# `Part.tpos` position of a txn that recovery found OPEN with writes on the
# segment (merged/fixed: the op records carry placeholders, so its first entry
# is unknown). Like Pulsar's `TxnEntry.recoveryDiscovered`, it pins the read
# position at the recovery hold until the txn is materialized; a later append
# of the same txn does not re-key it (`buffer.track_position`).
RECOVERED = -1

# fixed F8: the prune key of an aborted record written while an append of its
# txn is in flight on the segment: no key (never pruned) until that append
# lands (its position), fails or the broker restarts (the LAC).
UNKEYED = 99

# Client-operation stages. Writes: todo -> [read] -> checked -> (op | appended) ->
# [valid] -> done, or rejected at any step.
TODO, CHECKED, OPPUT, APPENDED, VALID, DONE, REJECTED = (
    "todo", "checked", "op", "appended", "valid", "done", "rejected")
# Bound `track = "steps"` (merged/fixed): the entry is in the ledger, the add's
# callback (`trackPosition`, then the client's answer) has not run.
ADDED = "added"
IN_FLIGHT = (CHECKED, OPPUT, APPENDED, VALID, ADDED)   # a send past its header check, not finished
# Bound `unloads`: the stage of a send whose buffer instance a topic unload
# closed. It goes on (Pulsar's internalAppend checks `closed` only on entry)
# but its ledger append fails, and nothing it does reaches the new instance;
# an add that landed before the close runs its callback in the closed
# instance (track = steps), whose answer the closed connection loses.
CLOSED = {CHECKED: "closed-checked", OPPUT: "closed-op", VALID: "closed-valid", ADDED: "closed-added"}
UNANSWERED = IN_FLIGHT + tuple(CLOSED.values())   # past its header check, the client not answered yet
# Bound `check = "steps"` (merged/fixed): a send whose header read answered OPEN,
# the read's callback (the cache put) not run yet; CLOSED_READ: the same send
# after an unload closed the instance that issued the read. Both are
# unanswered and will act on their segment, as a send past its check does.
READ, CLOSED_READ = "read", "closed-read"
# fixed F11: a read whose txn the instance that issued it has applied since:
# its callback fails the send instead of putting an entry back.
READ_APPLIED = "read-applied"
READING = (READ, CLOSED_READ, READ_APPLIED)

# Client states per txn.
C_NONE, C_OPEN = "none", "open"
C_ENDING = {COMMITTED: "ending-commit", ABORTED: "ending-abort"}
TOLD_COMMITTED, TOLD_ABORTED, TOLD_CONFLICT, TOLD_NOTFOUND = (
    "told-committed", "told-aborted", "told-conflict", "told-notfound")


@quick_replace
class Header(NamedTuple):
    """`/txn/<txnId>`; the CAS version is a function of (state, finalized):
    1 when created, 2 after the decision CAS, 3 once finalized."""

    state: str
    deadline: int   # timeout_ms, on the logical clock
    fin_at: int     # finalized_ms; -1 = not finalized

    @property
    def version(self) -> int:
        return 1 + (self.state != OPEN) + (self.fin_at >= 0)


@quick_replace
class Op(NamedTuple):
    """`/txn-op/<txnId>/<seq>`: kind "write" or "ack"; `pos` 0 is the merged
    code's placeholder position; `cumulative` and `sub` (the subscription,
    0 or 1, bound `subs`) only for acks."""

    txn: int
    seq: int
    kind: str
    seg: int
    pos: int
    cumulative: bool
    sub: int = 0


@quick_replace
class Part(NamedTuple):
    """One participant broker for a segment: its MetadataTransactionBuffer and
    the MetadataPendingAckStore of each subscription. Lost on crash.
    They share one header cache and one event stream unless bound
    `participants = "split"` gives the pending-ack store its own (`acache`,
    `aevents`), as in the merged code.

    cache:  txns it believes OPEN (header cache + point watches); split: the buffer's
    tpos:   (txn, first position) the TB tracks for maxReadPosition; 0 = in flight;
            RECOVERED = found OPEN by recovery, position unknown (never re-keyed)
    abrt:   txns marked aborted in memory (pip-text)
    packs:  (txn, pos, cumulative) acks held in memory by the pending-ack handle
    events: pip-text: queue of (txn, new header state); merged/fixed: one
            coalesced "something changed" flag, as a tuple () or (True,)
    hold:   maxReadPosition held while an append is in flight / after recovery; -1 none
    ready:  merged/fixed: False while the transaction buffer's asynchronous
            recovery runs (maxReadPosition is the constructor's LAC, the
            aborted set is empty, publishes and acks wait for it)
    acache: split: the pending-ack store's open txns (its header cache)
    aevents: split: the pending-ack store's events, as `events`
    loaded: recovery = steps: what the recovering buffer has loaded, in the
            code's order: 0 nothing, 1 the watermark (maxReadPosition starts
            there), 2 also the aborted set (isTxnAborted answers from it);
            0 once ready
    wknown: recovery = steps: the recovering buffer knows the watermark
            record's version (it loaded it, or re-read it after a failed CAS),
            so a publish's watermark CAS can succeed; False once ready
    acache2, aevents2, packs2: bound subs = 2 (split only): the second
            subscription's pending-ack store, as acache, aevents and packs
    aready, aready2: merged/fixed with participants = split: False while that
            subscription's pending-ack store replays (`replayAsync`), which
            runs on its own, not after the buffer's recovery: its acks, its
            events and its dispatcher (a consumer is let back in only once
            the store is ready) wait for it; True otherwise
    Bound apply = "steps" (merged/fixed; notify.py, apply.py): the stages the
    code runs a decision in, each a step:
    reads:  txns whose header the buffer's reconcile is reading (`triggerReconcile`
            issued the reads; each returns in a step of its own)
    chain:  the buffer's apply chain (`stateTail`), in order: (txn, decision,
            stage, prune key); the head's stage is the metadata call in flight
            (REC the aborted record's put, WM the watermark CAS, DEL the WRITE
            ops' delete), a later item waits (MEM) for its in-memory update
    areads: txns whose header the pending-ack store's reconcile is reading
    adel:   txns whose ACK ops the pending-ack store is deleting (its handle
            already committed or aborted them)
    wmirror, wstale: apply = steps: the watermark this instance last read or
            wrote (-1: none), and whether the record's version has moved
            since (the other instance, closed or new, wrote it): its next
            watermark CAS then fails
    psync:  bound sync = "steps" (merged/fixed): a non-transactional entry's
            add completed and its callback, `syncMaxReadPositionForNormalPublish`,
            has not run; the ledger's next add completes only after it
            (publish_plain.py)
    """

    cache: frozenset
    tpos: frozenset
    abrt: frozenset
    packs: frozenset
    events: tuple
    hold: int
    ready: bool = True
    acache: frozenset = frozenset()
    aevents: tuple = ()
    loaded: int = 0
    wknown: bool = False
    acache2: frozenset = frozenset()
    aevents2: tuple = ()
    packs2: frozenset = frozenset()
    aready: bool = True
    aready2: bool = True
    reads: frozenset = frozenset()
    chain: tuple = ()
    areads: frozenset = frozenset()
    adel: frozenset = frozenset()
    wmirror: int = -1
    wstale: bool = False
    psync: bool = False


# Stages of an item of the buffer's apply chain (Part.chain), bound apply = "steps":
# its in-memory update not run yet, then the metadata calls of applyTerminalNow in order.
MEM, REC, WM, DEL = "mem", "record", "watermark", "delete"

EMPTY_PART = Part(frozenset(), frozenset(), frozenset(), frozenset(), (), -1)

# S.gcsnap of a txn whose header the GC has not deleted
NO_GC = (-1, -1)


@quick_replace
class Pub(NamedTuple):
    """A client operation in flight: its stage, segment, ledger position and
    the seq of the op record it wrote (-1 none)."""

    stage: str
    seg: int
    pos: int
    seq: int


PUB_TODO = Pub("todo", -1, 0, -1)


@quick_replace
class S(NamedTuple):
    # metadata store
    now: int
    hdr: tuple          # per txn: Header | NONE | GONE
    seqs: tuple         # per txn: next server-assigned sequence
    ops: frozenset      # Op records
    arec: frozenset     # (seg, txn, prune key) durable aborted records (merged/fixed)
    wmark: tuple        # per seg: persisted maxReadPosition watermark; -1 none
    # segments
    status: tuple       # per seg
    ledger: tuple       # per seg: tuple of entry tags (txn index or PLAIN)
    cursor: tuple       # per seg: (markDelete, frozenset of individually acked positions)
    rd: tuple           # per seg: the dispatcher's next read position
    reshape: int        # split/merge steps done (0..3)
    # participants
    part: tuple         # per seg: Part, or None while crashed
    crashes: int        # crashes left
    # coordinator and clients
    tcp: frozenset      # TC in-memory work: (txn, step, reply), step "fin" (answer), or with tc = steps
                        # "list" (ops not listed yet) | "pub<segs>" (events to publish to those segments)
    failovers: int      # TC failovers left
    client: tuple       # per txn
    pubs: tuple         # per plan operation: Pub
    # ghost history
    fincnt: tuple       # per txn: times finalized
    decided: tuple      # per txn: the first terminal state, or ""
    late: frozenset     # txns that had a write/ack admitted after their decision
    dlv: frozenset      # (seg, pos, header state at delivery), by any subscription
    ackw: frozenset     # (txn, seg, pos, after, sub) every ack op ever written; after = the header was decided
    gcsnap: tuple       # per txn: (ops left, live participants not materialized) when the header was deleted;
                        # NO_GC before (a pair either way: one shape for the derived relation)
    fence: tuple        # per seg: its ledger length when it was terminated; -1 before
    # non-transactional sends (bound `plain`), at the end: most models have none
    plain: int = 0      # how many of the plan's non-transactional sends are done (they go in order)
    retained: tuple = ()  # per seg: the ledger's first retained position (1 = nothing trimmed)
    # the second subscription (bound `subs` = 2): per seg, its cursor and read position; () with one
    cursor2: tuple = ()
    rd2: tuple = ()
    # topic unloads left (bound `unloads`)
    unloads: int = 0
    # bound apply = "steps" with unloads: per seg, the closed buffer instance
    # (a Part) whose reconcile reads and apply chain, and its pending-ack
    # store's, go on after closeAsync; None when it has nothing left. () otherwise
    zomb: tuple = ()


# Per subscription (0, 1), the names of its fields in S and in Part.
SUB_FIELDS = (
    {"cursor": "cursor", "rd": "rd", "acache": "acache", "aevents": "aevents", "packs": "packs", "aready": "aready"},
    {"cursor": "cursor2", "rd": "rd2", "acache": "acache2", "aevents": "aevents2", "packs": "packs2",
     "aready": "aready2"},
)
SUB_NAMES = ("sub1", "sub2")
