"""The PIP-473 actions as guarded updates over `St`: the twins of
coordinator.py, publish.py, recovery.py and segments.py, and the order of
`Pip473.next` (spec.py), which decides what each action's guard is. Each
function returns (guard, new state); `actions` lists them with the labels
`next` gives, one per instance (a label may repeat: `next` yields
tcFinalize once per piece of the coordinator's work on the txn)."""

from __future__ import annotations

import z3

from ...symbolic import Act, Frame
from ..protocol.coordinator import LIST, pub_targets
from .relation_parts import (
    E, FALSE, TRUE, all_of, any_of, appending, deliver_event, dispatch, drop_in_flight, fanout, has_op,
    hst_is, materialize, max_read, placed, publish, rekey, release_failed, remove_ops, stage_is, streams,
    track_in_flight, track_position, tracked, write_op_on, ack_op_on,
)
from .relation_state import REPLY, St
from ..protocol.state import (
    APPENDED, CHECKED, COMMITTED, DONE, IN_FLIGHT, OPPUT, RECOVERED, REJECTED, SUB_FIELDS, TODO, UNKEYED, VALID,
)

ENDING = {COMMITTED: "ending-commit", "ABORTED": "ending-abort"}
SENDING = ("open", "ending-commit", "ending-abort")


def client_is(s: St, t: int, *names: str):
    return z3.Or([s.v("client", t) == E(s, "Client", x) for x in names])


def sending(s: St, t: int):
    return client_is(s, t, "open") if s.ctx.m.stock_client else client_is(s, t, *SENDING)


def route(s: St, key: int, j: int):
    """segments.route(key) is j: the first ACTIVE segment whose range holds the key."""
    ranges = s.ctx.m.topo.ranges
    active = lambda x: s.v("status", x) == E(s, "Status", "ACTIVE")
    return all_of([active(j)] + [z3.Not(active(x)) for x in range(j) if ranges[x][0] <= key < ranges[x][1]])


def candidates(m, key: int) -> list[int]:
    return [j for j, (lo, hi) in enumerate(m.topo.ranges) if lo <= key < hi]


def pub(s: St, k: int, stage: str, seg=None, pos=None, seq=None) -> St:
    out = {("stage", k): E(s, "Stage", stage)}
    for name, v in (("pseg", seg), ("ppos", pos), ("pseq", seq)):
        if v is not None:
            out[name, k] = v
    return s.set(out)


def put_op(s: St, t: int, k: int) -> St:
    """store.put_op by plan operation k: its record, seq = the txn's next."""
    seq = s.v("seqs", t)
    return s.set({("opx", k): TRUE, ("pseq", k): seq, ("seqs", t): seq + 1})


def delete_own_op(s: St, t: int, k: int) -> St:
    """Delete the op record of t whose seq is send k's."""
    seq = s.v("pseq", k)
    return remove_ops(s, t, lambda x: s.v("pseq", x) == seq)


# -- the coordinator -------------------------------------------------------------------


def new_txn(s: St, t: int):
    m = s.ctx.m
    guard = z3.And(client_is(s, t, "none"), all_of(z3.Not(hst_is(s, u, "NONE")) for u in m.started_before[t]))
    return guard, s.set({("hst", t): E(s, "HSt", "OPEN"), ("hdl", t): s.v("now") + m.timeout, ("hfin", t): -1,
                         ("client", t): E(s, "Client", "open")})


def decide(s: St, t: int, d: str) -> St:
    m = s.ctx.m
    dec = s.v("decided", t)
    out = s.set({("hst", t): E(s, "HSt", d),
                 ("decided", t): z3.If(dec == E(s, "Dec", "undecided"), E(s, "Dec", d), dec)})
    if not m.tc_steps:
        out = fanout(out, t, E(s, "HSt", d))
    if m.flags.cas_finalizes:
        out = out.set({("hfin", t): s.v("now"), ("fincnt", t): s.v("fincnt", t) + 1})
    return out


def add_work(s: St, t: int, step: str, reply: str) -> St:
    return s.set({("tcp", t, step, reply or "none"): TRUE})


def end_txn(s: St, t: int, d: str):
    m = s.ctx.m
    cl = s.v("client", t)
    waiting = any_of(z3.Not(stage_is(s, k, DONE, REJECTED)) for k in m.op_slots[t]) if m.stock_client else FALSE
    # the stock client aborts once a send or ack of the txn failed, whatever the model's decisions
    failed = any_of(stage_is(s, k, REJECTED) for k in m.op_slots[t]) if m.stock_client else FALSE
    busy = any_of(s.v("tcp", t, step, r) for step in s.ctx.steps for r in REPLY)
    opened = z3.And(client_is(s, t, "open"), z3.Not(waiting))
    if d == COMMITTED:
        opened = z3.And(opened, z3.Not(failed))
    if d not in m.decisions:   # only the stock client's forced abort
        opened = z3.And(opened, failed)
    guard = z3.Or(opened, z3.And(cl == E(s, "Client", ENDING[d]), z3.Not(busy)))
    step = LIST if m.tc_steps else "fin"
    ending = {("client", t): E(s, "Client", ENDING[d])}
    opened = add_work(decide(s, t, d), t, step, d).set(ending)
    again = s
    if m.flags.coalesced and not m.tc_steps:
        again = publish(s, streams(s, t))
    again = add_work(again, t, step, d).set(ending)
    gone = s.set({("client", t): E(s, "Client", "told-notfound")})
    conflict = s.set({("client", t): E(s, "Client", "told-conflict")})
    out = St.ite(hst_is(s, t, "OPEN"), opened, St.ite(hst_is(s, t, d), again,
                                                      St.ite(hst_is(s, t, "GONE"), gone, conflict)))
    return guard, out


def finalize(s: St, t: int, reply: str):
    told = {"": None, COMMITTED: "told-committed", "ABORTED": "told-aborted"}[reply]
    out = s.set({("tcp", t, "fin", reply or "none"): FALSE})
    fin = z3.And(hst_is(s, t, "OPEN", "COMMITTED", "ABORTED"), s.v("hfin", t) < 0)
    out = St.ite(fin, out.set({("hfin", t): s.v("now"), ("fincnt", t): s.v("fincnt", t) + 1}), out)
    if told:
        out = out.set({("client", t): E(s, "Client", told)})
    return s.v("tcp", t, "fin", reply or "none"), out


def list_ops(s: St, t: int, reply: str):
    found = streams(s, t)
    out = s.set({("tcp", t, LIST, reply or "none"): FALSE})
    sets = {}
    for step in s.ctx.pub_steps[t]:
        want = set(pub_targets(step))
        sets["tcp", t, step, reply or "none"] = z3.Or(
            out.v("tcp", t, step, reply or "none"),
            all_of(c if key in want else z3.Not(c) for key, c in found.items()))
    return s.v("tcp", t, LIST, reply or "none"), out.set(sets)


def publish_events(s: St, t: int, step: str, reply: str):
    targets = {key: True for key in pub_targets(step)}
    out = publish(s, targets).set({("tcp", t, step, reply or "none"): FALSE, ("tcp", t, "fin", reply or "none"): TRUE})
    return s.v("tcp", t, step, reply or "none"), out


def timeout(s: St, t: int):
    m = s.ctx.m
    guard = z3.And(hst_is(s, t, "OPEN"), s.v("hdl", t) <= s.v("now"))
    return guard, add_work(decide(s, t, "ABORTED"), t, LIST if m.tc_steps else "fin", "")


def gc(s: St, t: int):
    lay = s.ctx
    m = lay.m
    fin = s.v("hfin", t)
    guard = z3.And(hst_is(s, t, COMMITTED, "ABORTED"), fin >= 0, fin + m.retention <= s.v("now"))
    left = has_op(s, t)
    nops = z3.Sum([z3.If(s.v("opx", k), 1, 0) for k in lay.ops_of[t]] or [z3.IntVal(0)])
    owners = {j: z3.Or(write_op_on(s, t, j), ack_op_on(s, t, j)) for j in range(lay.nseg)}
    # a position the buffer knows or recovered; an entry with none yet belongs to a send the TC cannot know
    unmat = z3.Sum([z3.If(z3.And(s.v("up", j), z3.Or(s.v("cache", j, t), s.v("acache", j, t)),
                                 z3.Or(owners[j], placed(s, j, t))), 1, 0) for j in range(lay.nseg)])
    out = remove_ops(s, t, lambda k: True).set({
        ("hst", t): E(s, "HSt", "GONE"), ("hdl", t): 0, ("hfin", t): -1, ("gcs", t): TRUE, ("gcops", t): nops,
        ("gcunmat", t): unmat})
    if not m.flags.coalesced:
        out = fanout(out, t, E(s, "HSt", "GONE"))
    if m.flags.gc_redrive:
        out = St.ite(left, fanout(s, t, s.v("hst", t)), out)
    return guard, out


def failover(s: St):
    lay = s.ctx
    m = lay.m
    busy = any_of(s.v("tcp", t, step, r) for t in range(lay.n) for step in lay.steps for r in REPLY)
    guard = z3.And(s.v("failovers") > 0, busy if m.prune else TRUE)
    out = s.set({("tcp", t, step, r): FALSE for t in range(lay.n) for step in lay.steps for r in REPLY})
    if m.tc_steps and m.flags.takeover_redrive:
        out = out.set({("tcp", t, LIST, "none"): z3.And(hst_is(s, t, COMMITTED, "ABORTED"), has_op(s, t))
                       for t in range(lay.n)})
    return guard, out.set({("failovers",): s.v("failovers") - 1})


def tick(s: St):
    lay = s.ctx
    m = lay.m
    now = s.v("now")
    guard = now < m.constants["ticks"]
    if m.prune:
        live = [z3.Or(z3.And(hst_is(s, t, "OPEN"), s.v("hdl", t) > now),
                      z3.And(hst_is(s, t, "OPEN", COMMITTED, "ABORTED"), s.v("hfin", t) >= 0,
                             s.v("hfin", t) + m.retention > now)) for t in range(lay.n)]
        guard = z3.And(guard, any_of(live))
    return guard, s.set({("now",): now + 1})
