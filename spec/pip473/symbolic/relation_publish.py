"""The client side of PIP-473 as guarded updates over `St`: the twins of
publish.py's steps, one per send (plan operation k) and segment, as the
labels of `Pip473.next` name them."""

from __future__ import annotations

import z3

from .relation_parts import (
    E, FALSE, TRUE, drop_in_flight, max_read, materialize, pas_ready, rekey, release_failed, stage_is,
    track_in_flight, track_position, write_op_on,
)
from .relation_state import St
from .relation_steps import delete_own_op, pub, put_op, route, sending
from ..protocol.state import APPENDED, CHECKED, CLOSED, DONE, OPPUT, REJECTED, TODO, VALID


def _late(s: St, t: int, when) -> St:
    return s.set({("late", t): z3.Or(s.v("late", t), when)})


def check(s: St, k: int, j: int):
    """publishCheck of send k, routed to segment j."""
    m = s.ctx.m
    t, key = m.writes[k].txn, m.writes[k].key
    guard = z3.And(stage_is(s, k, TODO), sending(s, t), route(s, key, j), s.v("up", j), s.v("ready", j))
    cached, is_open = s.v("cache", j, t), s.v("hst", t) == E(s, "HSt", "OPEN")
    ok = z3.Or(cached, is_open)
    out = s.set({("cache", j, t): ok})
    if not m.flags.validate_after_op:
        out = _late(out, t, z3.And(cached, z3.Not(is_open)))
    if m.flags.op_first:
        # the header read made the buffer's TxnEntry, OPEN with no position: it holds the read position
        out = St.ite(z3.And(z3.Not(cached), is_open), track_in_flight(out, j, t), out)
    stage = z3.If(ok, E(s, "Stage", CHECKED), E(s, "Stage", REJECTED))
    return guard, out.set({("stage", k): stage, ("pseg", k): j, ("ppos", k): 0, ("pseq", k): -1})


def append(s: St, k: int, j: int):
    m = s.ctx.m
    f = m.flags
    t = m.writes[k].txn
    want = VALID if f.validate_after_op else (OPPUT if f.op_first else CHECKED)
    guard = z3.And(stage_is(s, k, want), s.v("pseg", k) == j)
    # TopicTerminated
    failed = s
    if f.op_first:
        failed = drop_in_flight(failed, j, t)
    if f.validate_after_op:
        failed = delete_own_op(failed, t, k)
    if f.rekey_late:
        failed = rekey(failed, j, t, 0, k)
    if f.drop_failed:
        failed = release_failed(failed, j, t, k)
    failed = pub(failed, k, REJECTED)
    # the append lands at pos
    pos = s.v("llen", j) + 1
    lands = s.set({("llen", j): pos, **{("tag", j, i): z3.If(pos == i, t, s.v("tag", j, i)) for i in range(1, s.ctx.L + 1)}})
    if f.op_first:
        if f.rekey_late:
            lands = rekey(lands, j, t, pos, k)     # pos > 0: the ledger's length is not read
        lands = pub(track_position(lands, j, t, pos), k, DONE, pos=pos)
    else:
        lands = pub(lands, k, APPENDED, pos=pos)
    active = s.v("status", j) == E(s, "Status", "ACTIVE")
    return guard, St.ite(active, lands, failed)


def put_write_op(s: St, k: int, j: int):
    m = s.ctx.m
    f = m.flags
    t = m.writes[k].txn
    if f.op_first:
        guard = z3.And(stage_is(s, k, CHECKED), s.v("pseg", k) == j)
        out = put_op(s, t, k)
        if f.watermark_before_op:   # F2: t's first WRITE op on the segment
            out = St.ite(write_op_on(s, t, j), out, out.set({("wmark", j): max_read(s, j)}))
        out = St.ite(s.v("cache", j, t), track_in_flight(out, j, t), out)
        return guard, pub(out, k, OPPUT)
    guard = z3.And(stage_is(s, k, APPENDED), s.v("pseg", k) == j)
    out = track_position(put_op(s, t, k), j, t, s.v("ppos", k))
    return guard, pub(out, k, DONE)


def op_fails(s: St, k: int, j: int):
    m = s.ctx.m
    guard = z3.And(stage_is(s, k, CHECKED), s.v("pseg", k) == j, s.v("up", j)) if m.op_fail else FALSE
    return guard, pub(release_failed(s, j, m.writes[k].txn, k), k, REJECTED)


def validate(s: St, k: int, j: int):
    m = s.ctx.m
    t = m.writes[k].txn
    guard = z3.And(stage_is(s, k, OPPUT), s.v("pseg", k) == j) if m.flags.validate_after_op else FALSE
    st = s.v("hst", t)
    rejected = pub(delete_own_op(s, t, k), k, REJECTED)
    rejected = St.ite(rejected.v("cache", j, t),
                      materialize(rejected, j, t, st == E(s, "HSt", "COMMITTED"), pas=not m.split), rejected)
    return guard, St.ite(st == E(s, "HSt", "OPEN"), pub(s, k, VALID), rejected)


def ack(s: St, k: int):
    """appendAck of the k-th ack of the plan (one subscription)."""
    m = s.ctx.m
    a = m.acks[k]
    t, j, i = a.txn, a.seg, len(m.writes) + k
    guard = z3.And(stage_is(s, i, TODO), sending(s, t), s.v("up", j), pas_ready(s, j), s.v("rd", j) > a.pos)
    field = "acache" if m.split else "cache"
    cached, is_open = s.v(field, j, t), s.v("hst", t) == E(s, "HSt", "OPEN")
    if m.flags.acks_unchecked:
        ok = TRUE
        out = _late(s.set({(field, j, t): TRUE}), t, z3.Not(is_open))
    elif m.flags.validate_after_op:     # admitted from the store
        ok = is_open
        out = s.set({(field, j, t): z3.Or(cached, is_open)})
    else:                               # cache first
        ok = z3.Or(cached, is_open)
        out = _late(s.set({(field, j, t): ok}), t, z3.And(cached, z3.Not(is_open)))
    rejected = pub(out, i, REJECTED, seg=j, pos=a.pos, seq=-1)
    done = put_op(out, t, i)
    if m.flags.memory_acks:
        done = done.set({("packs", j, (t, a.pos, a.cumulative)): TRUE})
    w = (t, j, a.pos, a.sub)
    done = done.set({("ackw", w): z3.Or(s.v("ackw", w), is_open), ("ackwl", w): z3.Or(s.v("ackwl", w), z3.Not(is_open))})
    done = pub(done, i, DONE, seg=j, pos=a.pos, seq=s.v("seqs", t))
    return guard, St.ite(ok, done, rejected)


# -- bound unloads: the sends of a closed buffer instance (publish.closed_*) ------------


def closed_end(s: St, k: int) -> St:
    """publish._closed_end: the stock client resends the send (back to todo); a permissive one sees it fail."""
    if s.ctx.m.stock_client:
        return pub(s, k, TODO, seg=-1, pos=0, seq=-1)
    return pub(s, k, REJECTED)


def closed_put_op(s: St, k: int, j: int):
    t = s.ctx.m.writes[k].txn
    guard = z3.And(stage_is(s, k, CLOSED[CHECKED]), s.v("pseg", k) == j)
    return guard, pub(put_op(s, t, k), k, CLOSED[OPPUT])


def closed_op_fails(s: St, k: int, j: int):
    m = s.ctx.m
    guard = z3.And(stage_is(s, k, CLOSED[CHECKED]), s.v("pseg", k) == j) if m.op_fail else FALSE
    return guard, closed_end(s, k)


def closed_validate(s: St, k: int, j: int):
    m = s.ctx.m
    t = m.writes[k].txn
    guard = z3.And(stage_is(s, k, CLOSED[OPPUT]), s.v("pseg", k) == j) if m.flags.validate_after_op else FALSE
    rejected = closed_end(delete_own_op(s, t, k), k)
    return guard, St.ite(s.v("hst", t) == E(s, "HSt", "OPEN"), pub(s, k, CLOSED[VALID]), rejected)


def closed_append(s: St, k: int, j: int):
    m = s.ctx.m
    f = m.flags
    t = m.writes[k].txn
    guard = z3.And(stage_is(s, k, CLOSED[VALID if f.validate_after_op else OPPUT]), s.v("pseg", k) == j)
    out = s
    if f.validate_after_op:
        out = delete_own_op(out, t, k)
    if f.rekey_late:
        out = rekey(out, j, t, 0, k)
    return guard, closed_end(out, k)


def plain(s: St, k: int, j: int):
    """publishPlain of the k-th non-transactional send, routed to segment j."""
    lay = s.ctx
    m = lay.m
    guard = z3.And(s.v("plain") == k, route(s, m.plain_keys[k], j), s.v("up", j))
    pos = s.v("llen", j) + 1
    s = s.set({("llen", j): pos, ("plain",): k + 1,
               **{("tag", j, i): z3.If(pos == i, -1, s.v("tag", j, i)) for i in range(1, lay.L + 1)}})
    if not m.flags.watermark:
        return guard, s
    recovering = s
    if not m.flags.sync_waits:
        recovering = s.set({("hold", j): pos})
        if m.recovery_steps:
            cas_fails = z3.And(z3.Not(s.v("wknown", j)), s.v("wmark", j) >= 0)
            advance = _advance(recovering, j)
            recovering = St.ite(cas_fails, recovering.set({("wknown", j): TRUE}), advance)
        else:
            recovering = _advance(recovering, j)
    return guard, St.ite(s.v("ready", j), _advance(s, j), recovering)


def _advance(s: St, j: int) -> St:
    """Persist maxReadPosition as the watermark if it advanced."""
    v = max_read(s, j)
    return s.set({("wmark", j): z3.If(v > s.v("wmark", j), v, s.v("wmark", j))})
