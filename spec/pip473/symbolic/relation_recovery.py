"""Crash, recovery and split/merge of PIP-473 as guarded updates over `St`:
the twins of recovery.py and segments.py."""

from __future__ import annotations

import z3

from .relation_parts import E, FALSE, TRUE, any_of, hst_is, materialize, remove_ops, stage_is, write_op_on, ack_op_on
from .relation_state import CLOSED_STAGES, NO_TAG, TAKEN, St
from ..protocol.state import IN_FLIGHT, RECOVERED, REJECTED, UNKEYED


def empty_part(s: St, j: int, keep_events: bool = False) -> St:
    """EMPTY_PART's cells (a crashed or new participant), events kept when asked."""
    lay = s.ctx
    out = {("hold", j): -1, ("ready", j): TRUE, ("loaded", j): 0, ("wknown", j): FALSE, ("aready", j): TRUE}
    for t in range(lay.n):
        for name in ("cache", "abrt", "acache"):
            out[name, j, t] = FALSE
        for x in range(RECOVERED, lay.L + 1):
            out["tpos", j, t, x] = FALSE
    for x in lay.packs:
        out["packs", j, x] = FALSE
    if not keep_events:
        for f in lay.fields:
            if lay.coalesced:
                out["evf", j, f] = FALSE
            else:
                out["qlen", j, f] = 0
                for q in range(lay.Q):
                    out["qtxn", j, f, q] = -1
                    out["qst", j, f, q] = E(s, "HSt", "NONE")
    return s.set(out)


def holds_something(s: St, j: int):
    lay = s.ctx
    parts = [s.v(name, j, t) for name in ("cache", "abrt", "acache") for t in range(lay.n)]
    parts += [s.v("packs", j, x) for x in lay.packs]
    for f in lay.fields:
        parts.append(s.v("evf", j, f) if lay.coalesced else s.v("qlen", j, f) > 0)
    return any_of(parts)


def crash(s: St, j: int):
    lay = s.ctx
    m = lay.m
    guard = z3.And(s.v("crashes") > 0, s.v("up", j), holds_something(s, j) if m.prune else TRUE)
    out = {("crashes",): s.v("crashes") - 1, ("up", j): FALSE}
    for k in range(lay.K):
        lost = z3.And(s.v("pseg", k) == j, stage_is(s, k, *IN_FLIGHT))
        out["stage", k] = z3.If(lost, E(s, "Stage", REJECTED), s.v("stage", k))
    return guard, empty_part(s.set(out), j)


def unload(s: St, j: int):
    """Bound unloads: the instance is closed (its cells as a crash leaves
    them); its sends past the header check go on, CLOSED."""
    lay = s.ctx
    m = lay.m
    taken = lambda k: z3.And(s.v("pseg", k) == j, stage_is(s, k, *TAKEN))
    guard = z3.And(s.v("unloads") > 0, s.v("up", j))
    if m.prune:
        guard = z3.And(guard, z3.Or(holds_something(s, j), any_of(taken(k) for k in range(lay.K))))
    out = {("unloads",): s.v("unloads") - 1, ("up", j): FALSE}
    for k in range(lay.W):
        stage = s.v("stage", k)
        for x, closed in TAKEN.items():
            stage = z3.If(z3.And(s.v("pseg", k) == j, stage_is(s, k, x)), E(s, "Stage", closed), stage)
        out["stage", k] = stage
    return guard, empty_part(s.set(out), j)


def recover(s: St, j: int):
    m = s.ctx.m
    guard = z3.And(z3.Not(s.v("up", j)), s.v("status", j) != E(s, "Status", "ABSENT"))
    if m.flags.drain_closed and m.constants["unloads"]:   # F10: the closed instance's sends have ended
        guard = z3.And(guard, z3.Not(any_of(z3.And(s.v("pseg", k) == j, stage_is(s, k, *CLOSED_STAGES))
                                            for k in range(s.ctx.W))))
    if m.flags.async_recovery:   # the constructor's LAC (F6 gates the getter: relation_parts.read_limit)
        part = {("up", j): TRUE, ("hold", j): s.v("llen", j), ("ready", j): FALSE}
        if m.pas_recovers:       # the pending-ack store replays on its own (recover_acks)
            part["aready", j] = FALSE
        return guard, empty_part(s, j).set(part)
    return guard, recover_complete(empty_part(s, j).set({("up", j): TRUE}), j, fresh=True)


def recovering(s: St, j: int):
    return z3.And(s.v("up", j), z3.Not(s.v("ready", j)))


def recover_watermark(s: St, j: int):
    m = s.ctx.m
    guard = z3.And(recovering(s, j), s.v("loaded", j) == 0) if m.recovery_steps else FALSE
    hold, w = s.v("hold", j), s.v("wmark", j)
    return guard, s.set({("loaded", j): 1, ("hold", j): z3.If(w < 0, hold, w), ("wknown", j): TRUE})


def recover_aborted(s: St, j: int):
    m = s.ctx.m
    guard = z3.And(recovering(s, j), s.v("loaded", j) == 1) if m.recovery_steps else FALSE
    return guard, rekey_waiting(s.set({("loaded", j): 2}), j)


def rekey_waiting(s: St, j: int) -> St:
    """F8: records still waiting for an append are keyed at the LAC."""
    if not s.ctx.m.flags.rekey_late:
        return s
    return s.set({("akey", j, t): z3.If(z3.And(s.v("arec", j, t), s.v("akey", j, t) == UNKEYED), s.v("llen", j),
                                        s.v("akey", j, t)) for t in range(s.ctx.n)})


def recover_complete_step(s: St, j: int):
    m = s.ctx.m
    guard = recovering(s, j)
    if m.recovery_steps:
        guard = z3.And(guard, s.v("loaded", j) >= 2)
    return guard, recover_complete(s, j)


def recover_complete(s: St, j: int, fresh: bool = False) -> St:
    """recovery.recover_complete; `fresh`: from a crashed participant (pip-text's recover).
    When the pending-ack store replays on its own (`own`), the scan is of the
    WRITE ops and only the buffer's cells start anew; the store's are kept."""
    lay = s.ctx
    m = lay.m
    own = m.pas_recovers
    wrote = [write_op_on(s, t, j) for t in range(lay.n)]
    acked = [FALSE if own else ack_op_on(s, t, j) for t in range(lay.n)]
    loaded = FALSE if fresh else s.v("loaded", j) >= 2
    orig = s
    s = _buffer_anew(s, j) if own else empty_part(s, j, keep_events=True)
    decided = []
    hold = s.v("hold", j)
    for t in range(lay.n):
        involved = z3.Or(wrote[t], acked[t])
        if m.flags.collected_not_aborted:
            gone = z3.And(involved, hst_is(orig, t, "GONE"))
            scanned = lambda k: False if own and k >= lay.W else s.v("pseg", k) == j   # the ops it scanned
            s = St.ite(gone, remove_ops(s, t, scanned), s)
            involved = z3.And(involved, z3.Not(hst_is(orig, t, "GONE")))
        opened = z3.And(involved, hst_is(orig, t, "OPEN"))
        decided.append((t, z3.And(involved, z3.Not(hst_is(orig, t, "OPEN")))))
        if own:
            s = s.set({("cache", j, t): z3.And(opened, wrote[t])})
        elif m.split:
            s = s.set({("cache", j, t): z3.And(opened, wrote[t]), ("acache", j, t): z3.And(opened, acked[t])})
        else:
            s = s.set({("cache", j, t): opened})
        mine = z3.And(opened, wrote[t])
        if m.flags.merged_recovery:
            w = orig.v("wmark", j)
            here = z3.If(w >= 0, w, orig.v("llen", j))
            hold = z3.If(mine, z3.If(hold < 0, here, z3.If(here < hold, here, hold)), hold)
            s = s.set({("tpos", j, t, RECOVERED): mine, ("hold", j): hold})
        else:
            first = _first_write(orig, j, t)
            s = s.set({("tpos", j, t, q): z3.And(mine, first == q) for q in range(1, lay.L + 1)})
    if fresh:
        s = rekey_waiting(s, j)
    else:
        s = St.ite(loaded, s, rekey_waiting(s, j))
    for t, dec in decided:
        committed = hst_is(orig, t, "COMMITTED")
        kw = {"tb": wrote[t], "pas": False if own else acked[t]} if m.split else {}
        s = St.ite(dec, materialize(s, j, t, committed, **kw), s)
    return s


def _buffer_anew(s: St, j: int) -> St:
    """The transaction buffer's cells anew, the pending-ack store's kept."""
    lay = s.ctx
    out = {("hold", j): -1, ("ready", j): TRUE, ("loaded", j): 0, ("wknown", j): FALSE}
    for t in range(lay.n):
        out["cache", j, t] = out["abrt", j, t] = FALSE
        for x in range(RECOVERED, lay.L + 1):
            out["tpos", j, t, x] = FALSE
    return s.set(out)


def recover_acks(s: St, j: int):
    """recovery.recover_acks (one subscription): the store's own replay: its
    ACK ops' txns, OPEN ones re-seeded, decided ones applied."""
    lay = s.ctx
    guard = z3.And(s.v("up", j), z3.Not(s.v("aready", j))) if lay.m.pas_recovers else FALSE
    acked = [ack_op_on(s, t, j) for t in range(lay.n)]
    orig = s
    opened = {("acache", j, t): z3.Or(s.v("acache", j, t), z3.And(acked[t], hst_is(s, t, "OPEN")))
              for t in range(lay.n)}
    s = s.set({("aready", j): TRUE, **opened})
    for t in range(lay.n):
        dec = z3.And(acked[t], z3.Not(hst_is(orig, t, "OPEN")))
        s = St.ite(dec, materialize(s, j, t, hst_is(orig, t, "COMMITTED"), tb=False, pas=True), s)
    return guard, s


def _first_write(s: St, j: int, t: int):
    """The smallest position among t's WRITE ops on segment j (pip-text's carry positions)."""
    lay = s.ctx
    v = z3.IntVal(0)
    for k in sorted((k for k in lay.ops_of[t] if k < lay.W), reverse=True):
        here = z3.And(s.v("opx", k), s.v("pseg", k) == j)
        v = z3.If(z3.And(here, z3.Or(v == 0, s.v("ppos", k) < v)), s.v("ppos", k), v)
    return v


# -- split / merge, PIP-468 order -------------------------------------------------------


def _reshaping(s: St):
    lay = s.ctx
    m = lay.m
    unfinished = any_of(z3.Not(stage_is(s, k, "done", "rejected")) for k in range(lay.W))
    return z3.And(s.v("reshape") < 3, unfinished if m.prune else TRUE)


def create_children(s: St):
    lay = s.ctx
    m = lay.m
    some_open = any_of(hst_is(s, t, "OPEN") for t in range(lay.n)) if m.prune else TRUE
    guard = z3.And(_reshaping(s), s.v("reshape") == 0, some_open)
    for c in m.topo.children:
        s = empty_part(s, c).set({("status", c): E(s, "Status", "CREATED"), ("up", c): TRUE, ("md", c): 0,
                                  ("rd", c): 1, **{("ind", c, i): FALSE for i in range(1, lay.L + 1)}})
    return guard, s.set({("reshape",): 1})


def terminate_parents(s: St):
    m = s.ctx.m
    guard = z3.And(_reshaping(s), s.v("reshape") == 1)
    out = {("reshape",): 2}
    for p in m.topo.parents:
        out["status", p] = E(s, "Status", "TERMINATED")
        out["fence", p] = s.v("llen", p)
    return guard, s.set(out)


def cas_metadata(s: St):
    m = s.ctx.m
    guard = z3.And(_reshaping(s), s.v("reshape") == 2)
    out = {("reshape",): 3}
    for p in m.topo.parents:
        out["status", p] = E(s, "Status", "SEALED")
    for c in m.topo.children:
        out["status", c] = E(s, "Status", "ACTIVE")
    return guard, s.set(out)


assert NO_TAG
