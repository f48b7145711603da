"""The PIP-473 participants as terms: the transaction buffer (buffer.py),
the pending-ack store (pendingack.py), notification and materialization
(notify.py), each function the twin of the spec's of the same name, over
`St` (relation_state.py) instead of `S`. A condition on the state becomes a
Z3 term, a condition on the model's constants stays Python."""

from __future__ import annotations

import z3

from .relation_state import NO_TAG, St
from ..protocol.state import IN_FLIGHT, OPPUT, RECOVERED, UNKEYED, VALID

TRUE, FALSE = z3.BoolVal(True), z3.BoolVal(False)


def E(s: St, sort: str, value: str):
    return s.ctx.enum(sort, value)


def hst_is(s: St, t: int, *names: str):
    return z3.Or([s.v("hst", t) == E(s, "HSt", x) for x in names])


def stage_is(s: St, k: int, *names: str):
    # a closed instance's stages exist only under bound unloads: a stage the sort lacks is never held
    have = s.ctx.schema.elements("Stage")
    return z3.Or([s.v("stage", k) == E(s, "Stage", x) for x in names if x in have] or [FALSE])


def any_of(terms):
    terms = list(terms)
    return z3.Or(terms) if terms else FALSE


def all_of(terms):
    terms = list(terms)
    return z3.And(terms) if terms else TRUE


def _and(a, b):
    """a /\\ b, where either may be a Python bool."""
    if a is True:
        return b
    if b is True:
        return a
    if a is False or b is False:
        return FALSE
    return z3.And(a, b)


# -- the store's indexes -------------------------------------------------------------


def write_op_on(s: St, t: int, j: int):
    """Some WRITE op record of t on segment j."""
    lay = s.ctx
    return any_of(z3.And(s.v("opx", k), s.v("pseg", k) == j) for k in lay.ops_of[t] if k < lay.W)


def ack_op_on(s: St, t: int, j: int):
    lay = s.ctx
    return any_of(s.v("opx", k) for k in lay.ops_of[t] if k >= lay.W and lay.ack_of[k].seg == j)


def has_op(s: St, t: int):
    return any_of(s.v("opx", k) for k in s.ctx.ops_of[t])


def remove_ops(s: St, t: int, when) -> St:
    """Delete the op records of t for which `when(k)` holds (a term, or a Python bool)."""
    out = {}
    for k in s.ctx.ops_of[t]:
        c = when(k)
        if c is False:
            continue
        out[("opx", k)] = FALSE if c is True else z3.And(s.v("opx", k), z3.Not(c))
    return s.set(out)


def streams(s: St, t: int) -> dict[tuple[int, str], z3.BoolRef]:
    """store.streams: per possible stream of t, whether the listing finds it."""
    lay = s.ctx
    out = {}
    for j in range(lay.nseg):
        w = write_op_on(s, t, j)
        a = ack_op_on(s, t, j)
        if lay.m.split:
            out[j, "events"], out[j, "aevents"] = w, a
        else:
            out[j, "events"] = z3.Or(w, a)
    return out


# -- the transaction buffer ----------------------------------------------------------


def held(s: St, j: int):
    """buffer._held: an append in flight or a recovered txn needs the hold."""
    lay = s.ctx
    return any_of(s.v("tpos", j, t, x) for t in range(lay.n) for x in (RECOVERED, 0))


def tracked(s: St, j: int, t: int):
    """Some (t, position) in the buffer's tracked positions."""
    return any_of(s.v("tpos", j, t, x) for x in range(RECOVERED, s.ctx.L + 1))


def placed(s: St, j: int, t: int):
    """Some (t, position) other than the in-flight mark 0: a position the
    buffer knows, or RECOVERED (buffer's `any(x[0] == t and x[1] != 0 ...)`)."""
    return any_of(s.v("tpos", j, t, x) for x in range(RECOVERED, s.ctx.L + 1) if x != 0)


def max_read(s: St, j: int):
    lay = s.ctx
    llen = s.v("llen", j)
    v = llen
    for q in range(lay.L, 0, -1):   # the smallest tracked position at or below the LAC wins
        hit = any_of(s.v("tpos", j, t, q) for t in range(lay.n))
        v = z3.If(z3.And(hit, q <= llen), q - 1, v)
    hold = s.v("hold", j)
    v = z3.If(z3.And(hold >= 0, hold < v), hold, v)
    return z3.If(s.v("ready", j), v, hold)


def read_limit(s: St, j: int):
    """buffer.read_limit: `getMaxReadPosition()`; fixed F6 gates it at the
    earliest position (0) until the buffer's recovery completes."""
    if s.ctx.m.flags.dispatch_waits:
        return z3.If(s.v("ready", j), max_read(s, j), 0)
    return max_read(s, j)


def pas_ready(s: St, j: int):
    """pendingack.pas_ready (one subscription): the store's own replay flag
    when it recovers on its own, else the buffer's."""
    return s.v("aready", j) if s.ctx.m.pas_recovers else s.v("ready", j)


def is_txn_aborted(s: St, j: int, t: int):
    m = s.ctx.m
    loading = z3.And(z3.Not(s.v("ready", j)), s.v("loaded", j) < 2)
    if m.flags.durable_aborts:
        ans = s.v("arec", j, t)
    else:
        ans = z3.If(s.v("abrt", j, t), TRUE, z3.If(s.v("cache", j, t), FALSE, hst_is(s, t, "ABORTED", "GONE", "NONE")))
    return z3.And(z3.Not(loading), ans)


def with_hold(s: St, j: int) -> St:
    """The hold released when nothing needs it any more."""
    return s.set({("hold", j): z3.If(held(s, j), s.v("hold", j), -1)})


def track_in_flight(s: St, j: int, t: int) -> St:
    hold = s.v("hold", j)
    return s.set({("hold", j): z3.If(hold >= 0, hold, max_read(s, j)), ("cache", j, t): TRUE,
                  ("tpos", j, t, 0): TRUE})


def track_position(s: St, j: int, t: int, pos) -> St:
    lay = s.ctx
    s2 = s.set({("tpos", j, t, 0): FALSE})
    fresh = z3.Not(tracked(s2, j, t))
    s2 = s2.set({("tpos", j, t, q): z3.Or(s2.v("tpos", j, t, q), z3.And(fresh, pos == q)) for q in range(1, lay.L + 1)})
    s2 = with_hold(s2, j)
    return St.ite(s.v("cache", j, t), s2, s)


def forget(s: St, j: int, t: int) -> St:
    lay = s.ctx
    s2 = s.set({("tpos", j, t, x): FALSE for x in range(RECOVERED, lay.L + 1)})
    return with_hold(s2.set({("cache", j, t): FALSE}), j)


def drop_in_flight(s: St, j: int, t: int) -> St:
    """A failed append: an entry of t with no position keeps its mark (and the hold)."""
    return St.ite(placed(s, j, t), with_hold(s.set({("tpos", j, t, 0): FALSE}), j), s)


def in_flight_elsewhere(s: St, j: int, t: int, but: int):
    """Another send of t on j past its header check."""
    lay = s.ctx
    return any_of(z3.And(s.v("pseg", k) == j, stage_is(s, k, *IN_FLIGHT))
                  for k in lay.ops_of[t] if k < lay.W and k != but)


def release_failed(s: St, j: int, t: int, but: int) -> St:
    """fixed F5."""
    if not s.ctx.m.flags.drop_failed:
        return s
    keep = z3.Or(z3.Not(s.v("cache", j, t)), placed(s, j, t), in_flight_elsewhere(s, j, t, but),
                 streams(s, t)[j, "events"])
    return St.ite(keep, s, with_hold(s.set({("cache", j, t): FALSE, ("tpos", j, t, 0): FALSE}), j))


def appending(s: St, j: int, t: int, but: int = -1):
    lay = s.ctx
    stage = VALID if lay.m.flags.validate_after_op else OPPUT
    return any_of(z3.And(s.v("pseg", k) == j, stage_is(s, k, stage))
                  for k in lay.ops_of[t] if k < lay.W and k != but)


def rekey(s: St, j: int, t: int, pos, but: int) -> St:
    """fixed F8 (buffer.rekey); `pos` 0 for a failed send."""
    old = s.v("akey", j, t)
    pos = z3.IntVal(pos) if isinstance(pos, int) else pos
    new = z3.If(appending(s, j, t, but),
                z3.If(z3.Or(pos > old, old == UNKEYED), UNKEYED, old),
                z3.If(old == UNKEYED, z3.If(pos == 0, s.v("llen", j), pos), z3.If(pos > old, pos, old)))
    return s.set({("akey", j, t): z3.If(s.v("arec", j, t), new, old)})


def last_entry(s: St, j: int, t: int):
    """The position of t's last entry in segment j's ledger (0 if none)."""
    v = z3.IntVal(0)
    for i in range(1, s.ctx.L + 1):
        v = z3.If(s.v("tag", j, i) == t, i, v)
    return v


def prune_key(s: St, j: int, t: int):
    m = s.ctx.m
    key = z3.If(any_of(s.v("tpos", j, t, x) for x in range(1, s.ctx.L + 1)), last_entry(s, j, t), s.v("llen", j))
    if m.flags.rekey_late:
        key = z3.If(appending(s, j, t), UNKEYED, key)
    return key


# -- the pending-ack store and the cursor -----------------------------------------------


def acks_to_apply(s: St, j: int, t: int) -> list[tuple[object, int, bool]]:
    """(present, position, cumulative) of each ack the store would apply."""
    lay = s.ctx
    if lay.m.flags.memory_acks:
        return [(s.v("packs", j, x), x[1], x[2]) for x in lay.packs if x[0] == t]
    return [(s.v("opx", k), lay.ack_of[k].pos, lay.ack_of[k].cumulative)
            for k in lay.ops_of[t] if k >= lay.W and lay.ack_of[k].seg == j and lay.ack_of[k].sub == 0]


def apply_to_cursor(s: St, j: int, acks) -> St:
    lay = s.ctx
    md = s.v("md", j)
    for present, pos, cum in acks:
        if cum:
            md = z3.If(z3.And(present, md < pos), pos, md)
    out = {("md", j): md}
    for q in range(1, lay.L + 1):
        ind = z3.Or([s.v("ind", j, q)] + [present for present, pos, cum in acks if not cum and pos == q])
        out["ind", j, q] = z3.And(ind, md < q)
    return s.set(out)


# -- notification and materialization -------------------------------------------------


def publish(s: St, targets: dict[tuple[int, str], object]) -> St:
    """Append one coalesced event to each target stream of a live participant."""
    out = {}
    for (j, f), c in targets.items():
        if c is False:
            continue
        out["evf", j, f] = z3.Or(s.v("evf", j, f), _and(s.v("up", j), c))
    return s.set(out)


def enqueue(s: St, j: int, f: str, t: int, state, when) -> St:
    """pip-text: append (t, state) to the queue `f` of segment j when `when`."""
    lay = s.ctx
    n = s.v("qlen", j, f)
    out = {("qlen", j, f): z3.If(when, n + 1, n)}
    for x in range(lay.Q):
        put = z3.And(when, n == x)
        out["qtxn", j, f, x] = z3.If(put, t, s.v("qtxn", j, f, x))
        out["qst", j, f, x] = z3.If(put, state, s.v("qst", j, f, x))
    return s.set(out)


def fanout(s: St, t: int, state) -> St:
    """notify.fanout: `state` is the new header state, an HSt term."""
    lay = s.ctx
    m = lay.m
    if m.flags.coalesced:
        return publish(s, streams(s, t))
    for j in range(lay.nseg):
        for cache, f in (("cache", "events"), ("acache", "aevents")) if m.split else (("cache", "events"),):
            when = z3.And(s.v("up", j), s.v(cache, j, t))
            if m.oneshot:
                queued = any_of(z3.And(x < s.v("qlen", j, f), s.v("qtxn", j, f, x) == t) for x in range(lay.Q))
                when = z3.And(when, z3.Not(queued))
            s = enqueue(s, j, f, t, state, when)
    return s


def materialize(s: St, j: int, t: int, committed, tb=True, pas=True) -> St:
    """notify.materialize (one subscription); `committed` a term, `tb` and
    `pas` Python bools or terms (recovery decides them from the state)."""
    lay = s.ctx
    m = lay.m
    start = s
    if pas is not False:
        s2 = St.ite(committed, apply_to_cursor(s, j, acks_to_apply(s, j, t)), s)
        s2 = s2.set({("packs", j, x): FALSE for x in lay.packs if x[0] == t})
        s2 = s2.set({("acache", j, t): FALSE})
        s = St.ite(pas, s2, s)
    if tb is not False:
        s2 = s
        if m.flags.durable_aborts:
            rec = s.set({("arec", j, t): TRUE, ("akey", j, t): prune_key(s, j, t)})
            s2 = St.ite(committed, s, rec)
        else:
            s2 = s.set({("abrt", j, t): z3.Or(s.v("abrt", j, t), z3.Not(committed))})
        s2 = forget(s2, j, t)
        s = St.ite(tb, s2, s)
    kinds = []
    if tb is not False:
        kinds.append(("write", tb))
    if pas is not False:
        kinds.append(("ack", pas))

    def gone(k):
        kind = "write" if k < lay.W else "ack"
        if kind == "ack" and lay.ack_of[k].sub != 0:
            return False
        flag = next((c for x, c in kinds if x == kind), False)
        if flag is False:
            return False
        return _and(flag, start.v("pseg", k) == j)

    s = remove_ops(s, t, gone)
    if tb is not False and m.flags.watermark:
        s = St.ite(tb, s.set({("wmark", j): max_read(s, j)}), s)
    return s


def deliver_event(s: St, j: int, acks: bool) -> St:
    lay = s.ctx
    m = lay.m
    cache, f = ("acache", "aevents") if acks else ("cache", "events")
    who = {"tb": not acks, "pas": acks or not m.split}
    orig = s
    if m.flags.coalesced:
        s = s.set({("evf", j, f): FALSE})
        for t in range(lay.n):
            decided = z3.And(orig.v(cache, j, t), z3.Not(hst_is(s, t, "OPEN")))
            s = St.ite(decided, materialize(s, j, t, hst_is(s, t, "COMMITTED"), **who), s)
        return s
    head_t, head_st = s.v("qtxn", j, f, 0), s.v("qst", j, f, 0)
    out = {("qlen", j, f): s.v("qlen", j, f) - 1}
    for x in range(lay.Q):
        nxt = x + 1 < lay.Q
        out["qtxn", j, f, x] = s.v("qtxn", j, f, x + 1) if nxt else z3.IntVal(-1)
        out["qst", j, f, x] = s.v("qst", j, f, x + 1) if nxt else E(s, "HSt", "NONE")
    s = s.set(out)
    for t in range(lay.n):
        st = s.v("hst", t) if m.oneshot else head_st
        go = z3.And(head_t == t, orig.v(cache, j, t), st != E(s, "HSt", "OPEN"))
        s = St.ite(go, materialize(s, j, t, st == E(s, "HSt", "COMMITTED"), **who), s)
    return s


def dispatch(s: St, j: int):
    """(guard, state): the dispatcher of the one subscription on segment j."""
    lay = s.ctx
    pos = s.v("rd", j)
    guard = z3.And(s.v("up", j), pos <= s.v("llen", j), pos <= read_limit(s, j))
    if lay.m.pas_recovers:   # no consumer until the pending-ack handle is ready
        guard = z3.And(guard, s.v("aready", j))
    tag = z3.IntVal(NO_TAG)
    for i in range(1, lay.L + 1):
        tag = z3.If(pos == i, s.v("tag", j, i), tag)
    skip = z3.Or(tag == -1, any_of(z3.And(tag == t, is_txn_aborted(s, j, t)) for t in range(lay.n)))
    s2 = s.set({("rd", j): pos + 1})
    out = {}
    for i in range(1, lay.L + 1):
        for st in ("OPEN", "COMMITTED", "ABORTED", "NONE", "GONE"):
            hit = []
            for t in range(lay.n):
                h = s.v("hst", t)
                dec = s.v("decided", t)
                if st in ("OPEN", "COMMITTED", "ABORTED"):
                    # the header's state, or the decision of a missing header
                    now = z3.Or(h == E(s, "HSt", st), z3.And(hst_is(s, t, "NONE", "GONE"), dec == E(s, "Dec", st))) \
                        if st != "OPEN" else h == E(s, "HSt", "OPEN")
                else:
                    now = z3.And(h == E(s, "HSt", st), dec == E(s, "Dec", "undecided"))
                hit.append(z3.And(tag == t, now))
            out["dlv", j, i, st] = z3.Or(s.v("dlv", j, i, st), z3.And(z3.Not(skip), pos == i, any_of(hit)))
    return guard, s2.set(out)
