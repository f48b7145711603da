"""Transaction Coordinator V5 (Components / TC V5 table; Flows / End-txn;
Recovery / TC failover). The TC never RPCs participants: its whole state is
the headers in the store plus a little in-memory work (`S.tcp`) that a
failover loses.

The merged coordinator's behaviour (notes): ids from a per-coordinator
counter (never reused); an `endTxn` of a txn already terminal in the same
state is idempotent and re-drives the fan-out; the other state answers
InvalidTxnStatus; a missing header answers TransactionNotFound. The text is
silent on retries, so pip-text uses the same answers.

Bound `tc = "steps"` (merged/fixed): the merged `endTransaction` is three
steps, as the code runs them: the header CAS, then listing the txn's ops
(`listOpsByTxn`), then publishing one event per participant found
(`fanOutEvents`); the answer comes after the publishes. The TC's work between
them is `(t, "list", reply)` and `(t, "pub<segs>", reply)` in `S.tcp`, which
a failover loses. fixed F9: a new TC re-drives the fan-out of every decided
txn whose ops remain before it serves (`failover`). Bound `tc = "publishes"`:
the publishes are steps of their own too, in any order, since `fanOutEvents`
fires them in parallel and answers once all have landed
(apache/pulsar@ba9bf6976035:pulsar-broker/src/main/java/org/apache/pulsar/broker/transaction/coordinator/v5/TransactionCoordinatorV5.java,
`fanOutEvents`, `FutureUtil.waitForAll(publishes)`).
"""

from __future__ import annotations

from ...api import replace_at as _put
from .notify import fanout, publish, streams
from .state import (
    ABORTED, C_ENDING, C_OPEN, COMMITTED, GONE, OPEN, TOLD_ABORTED, TOLD_COMMITTED, TOLD_CONFLICT,
    TOLD_NOTFOUND, Header, S,
)
from .store import header_state, ops_of, txn_by_deadline, txn_by_final_state


def new_txn(m, s: S, t: int) -> S:
    """newTxn(timeoutMs): create /txn/<txnId> OPEN, timeout_ms = now + timeout."""
    return s._replace(hdr=_put(s.hdr, t, Header(OPEN, s.now + m.timeout, -1)),
                      client=_put(s.client, t, C_OPEN))


LIST = "list"


STREAM_BASE = {"events": "0", "aevents": "a", "aevents2": "A"}


def _pub(targets) -> str:
    """The publish step's TC work: the streams its listing found, a digit per
    segment's (buffer's) stream, a letter (a, b, ...) per pending-ack store's
    of the first subscription, a capital (A, B, ...) per the second's."""
    return "pub" + "".join(sorted(chr(ord(STREAM_BASE[f]) + j) for j, f in targets))


def pub_targets(step: str) -> list[tuple[int, str]]:
    return [(ord(c) - ord(base), f) for c in step[3:] for f, base in STREAM_BASE.items()
            if ord(base) <= ord(c) < ord(base) + 10]


def _decide(m, s: S, t: int, d: str) -> dict:
    """The single CAS OPEN -> d on the header: the linearization point, and
    the fan-out. Returns the fields it changes (the caller builds the state).
    merged/fixed: the same header update writes finalizedAt (the merged
    TransactionCoordinatorV5.endTransaction); pip-text: the TC table sets
    finalized_ms after the CAS returns (`finalize`)."""
    h = s.hdr[t]
    changed = {"hdr": _put(s.hdr, t, Header(d, h.deadline, h.fin_at)),
               "decided": s.decided if s.decided[t] else _put(s.decided, t, d)}
    if not m.tc_steps:
        changed["part"] = fanout(m, s, t, d)
    if m.flags.cas_finalizes:
        changed["hdr"] = _put(s.hdr, t, Header(d, h.deadline, s.now))
        changed["fincnt"] = _put(s.fincnt, t, s.fincnt[t] + 1)
    return changed


def end_txn(m, s: S, t: int, d: str) -> S:
    st = header_state(s, t)
    if st == OPEN:
        changed = _decide(m, s, t, d)
    elif st == d:
        # idempotent: re-drive the fan-out
        changed = {"part": fanout(m, s, t, d)} if m.flags.coalesced and not m.tc_steps else {}
    elif st == GONE:
        return s._replace(client=_put(s.client, t, TOLD_NOTFOUND))
    else:
        return s._replace(client=_put(s.client, t, TOLD_CONFLICT))  # InvalidTxnStatus
    work = (t, LIST if m.tc_steps else "fin", d)
    return s._replace(**changed, client=_put(s.client, t, C_ENDING[d]), tcp=s.tcp | {work})


def list_ops(m, s: S, t: int, reply: str) -> S:
    """tc = steps: `listOpsByTxn`, the participants the fan-out will notify:
    the segments with an op of t now (a later op put is not among them)."""
    targets = streams(m, s, t)
    step = _pub(targets) if targets or not m.tc_publishes else "fin"   # nothing to wait for: answer
    return s._replace(tcp=s.tcp - {(t, LIST, reply)} | {(t, step, reply)})


def publish_events(m, s: S, t: int, step: str, reply: str) -> S:
    """tc = steps: append one event to each listed participant's stream, then answer."""
    return s._replace(part=publish(s.part, pub_targets(step)), tcp=s.tcp - {(t, step, reply)} | {(t, "fin", reply)})


def publish_one(m, s: S, t: int, step: str, target: tuple[int, str], reply: str) -> S:
    """tc = publishes: one of the listed participants' publishes lands (the
    code fires them in parallel and answers once all have); the TC's work
    keeps the streams still to publish."""
    left = "".join(c for c in step[3:] if c != _pub([target])[3:])
    return s._replace(part=publish(s.part, [target]),
                      tcp=s.tcp - {(t, step, reply)} | {(t, "pub" + left if left else "fin", reply)})


def finalize(m, s: S, t: int, reply: str) -> S:
    """After the CAS returns, set finalized_ms (a version CAS: at most once),
    then ack the client (`reply` is the decision it asked for; "" for the
    timeout sweep, which has no client waiting). One step: a failover
    between the two would only make the client retry, as it does here.
    merged/fixed: the CAS already wrote finalizedAt; this only answers."""
    h = s.hdr[t]
    changed = {"tcp": s.tcp - {(t, "fin", reply)}}
    if isinstance(h, Header) and h.fin_at < 0:
        changed["hdr"] = _put(s.hdr, t, Header(h.state, h.deadline, fin_at=s.now))
        changed["fincnt"] = _put(s.fincnt, t, s.fincnt[t] + 1)
    if reply:
        told = TOLD_COMMITTED if reply == COMMITTED else TOLD_ABORTED
        changed["client"] = _put(s.client, t, told)
    return s._replace(**changed)


def timeout_candidates(m, s: S) -> list[int]:
    return txn_by_deadline(s)


def timeout(m, s: S, t: int) -> S:
    """Timeout sweep: abort an OPEN txn past its deadline (same CAS flow)."""
    return s._replace(**_decide(m, s, t, ABORTED), tcp=s.tcp | {(t, LIST if m.tc_steps else "fin", "")})


def gc_candidates(m, s: S) -> list[int]:
    return txn_by_final_state(s, m.retention)


def gc(m, s: S, t: int) -> S:
    """GC sweep for one finalized txn past retention."""
    left = ops_of(s, t)
    if left and m.flags.gc_redrive:
        return s._replace(part=fanout(m, s, t, header_state(s, t)))   # merged: re-drive, keep the header
    # live participants that still hold t as a participant: its ops there, or a position the
    # buffer knows or recovered (an entry the header read made, with no op and no position
    # yet, belongs to a send the coordinator cannot know of: GC phase 1 does not wait for it)
    owners = {o.seg for o in left}
    unmat = sum(1 for j, p in enumerate(s.part)
                if p is not None and (t in p.cache or t in p.acache or t in p.acache2)
                and (j in owners or any(x[0] == t and x[1] != 0 for x in p.tpos)))
    return s._replace(ops=s.ops - left,                 # pip-text: force-delete leftovers
                      hdr=_put(s.hdr, t, GONE), gcsnap=_put(s.gcsnap, t, (len(left), unmat)),
                      part=s.part if m.flags.coalesced else fanout(m, s, t, GONE))


def failover(m, s: S) -> S:
    """The TC's in-memory work is lost. fixed F9 (tc = steps): the new TC
    lists the decided txns (idx:txn-by-final-state) and re-drives the fan-out
    of each whose ops remain, as an idempotent endTxn retry would."""
    tcp = frozenset()
    if m.tc_steps and m.flags.takeover_redrive:
        tcp = frozenset((t, LIST, "") for t in range(len(s.hdr))
                        if header_state(s, t) in (COMMITTED, ABORTED) and any(o.txn == t for o in s.ops))
    return s._replace(tcp=tcp, failovers=s.failovers - 1)
