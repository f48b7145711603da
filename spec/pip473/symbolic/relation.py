"""PIP-473 as a symbolic relation (spec/symbolic.py): the state as typed
cells (relation_state.py), each action of `Pip473.next` a guarded update
over them (relation_steps.py, relation_publish.py, relation_recovery.py,
relation_parts.py, each the twin of the spec module it names), and the
properties' symbols computed from the cells as `observe` computes them
(properties.py). tests/test_symbolic_pip473.py holds it to the spec.

It states the bounds the corpus and the standard models use: the three
variants, split participants, one subscription, point watches, topic
unloads (with F10's drain in fixed; the stock client's resend only where
F1 deletes the closed send's op), no trimming, a decision applied in one
step (`apply = atomic`), ungated producers; other bounds are refused with
one line.
"""

from __future__ import annotations

import z3

from ...symbolic import Act, Frame, Relation
from ..protocol.coordinator import LIST, pub_targets
from ..properties import NO_OPEN
from .relation_parts import (
    E, any_of, deliver_event, dispatch, hst_is, is_txn_aborted, read_limit, stage_is, tracked,
)
from .relation_lemmas import lemmas
from .relation_publish import (
    ack, append, check, closed_append, closed_op_fails, closed_put_op, closed_validate, op_fails, plain,
    put_write_op, validate,
)
from .relation_recovery import (
    cas_metadata, crash, create_children, recover, recover_aborted, recover_acks, recover_complete_step,
    recover_watermark, terminate_parents, unload,
)
from .relation_state import CLIENT, Layout, St, encode
from .relation_steps import candidates, end_txn, failover, finalize, gc, list_ops, new_txn, publish_events, tick, timeout
from ..protocol.state import IN_FLIGHT, UNANSWERED

V = z3.StringVal


class Pip473Relation(Relation):
    def state_schema(self):
        m = self.spec
        c = m.constants
        for bound, ok in (("participants", c["participants"] == "split"), ("subs", c["subs"] == 1),
                          ("trim", not m.trim), ("watches", not m.oneshot or not m.flags.coalesced),
                          ("replies", not m.owed), ("apply", not m.apply_steps), ("check", not m.check_steps),
                          ("sync", not m.sync_steps), ("track", not m.track_steps),
                          ("tc", not m.tc_publishes),
                          ("producers", not m.producers_gated),
                          # a resent send leaves its closed op behind without F1: two op records of one send
                          ("client", not (c["unloads"] and m.stock_client and not m.flags.validate_after_op))):
            if not ok:
                raise self.unsupported(f"bound {bound} = {c[bound]!r}")
        self.lay = Layout(m)
        return self.lay.schema

    def setup(self) -> None:
        self.lemmas = lemmas(self)

    def cells(self, s):
        return encode(self.lay, s)

    def actions(self) -> list[Act]:
        m, lay = self.spec, self.lay
        a, tn, sn = m._a, m.txn_names, m.seg_names
        out: list[Act] = []
        self.functions: dict[str, set] = {}   # action name -> the functions stating it (catalog.py names one)

        def act(label, fn, *args):
            self.functions.setdefault(label[0], set()).add(getattr(fn, "__func__", fn))
            out.append(Act(label, lambda f, fn=fn, args=args: self._step(f, fn, *args)))

        for t in range(lay.n):
            act(m.txn_labels["newTxn"][t], new_txn, t)
        steps = [("publishCheck", check), ("publishPutOp", put_write_op), ("publishAppend", append)]
        if m.op_fail:
            steps.append(("publishOpFails", op_fails))
        if m.flags.validate_after_op:
            steps.append(("publishValidate", validate))
        if m.constants["unloads"]:   # a closed instance's sends go on under the same labels
            steps += [("publishPutOp", closed_put_op), ("publishAppend", closed_append)]
            if m.op_fail:
                steps.append(("publishOpFails", closed_op_fails))
            if m.flags.validate_after_op:
                steps.append(("publishValidate", closed_validate))
        for k, w in enumerate(m.writes):
            for j in candidates(m, w.key):
                for name, fn in steps:
                    act(a(name, op=w.name, txn=tn[w.txn], seg=sn[j]), fn, k, j)
        for k, key in enumerate(m.plain_keys):
            for j in candidates(m, key):
                act(a("publishPlain", op=f"n{k + 1}", seg=sn[j]), plain, k, j)
        for k in range(len(m.acks)):
            act(m.ack_labels[k], ack, k)
        for (t, d), label in m.end_labels.items():
            act(label, end_txn, t, d)
        for t in range(lay.n):
            for r in ("", "COMMITTED", "ABORTED"):
                act(m.txn_labels["tcFinalize"][t], finalize, t, r)
                if m.tc_steps:
                    act(m.txn_labels["tcList"][t], list_ops, t, r)
                    for step in lay.pub_steps[t]:
                        act(m.txn_labels["tcPublish"][t], publish_events, t, step, r)
            act(m.txn_labels["timeoutSweep"][t], timeout, t)
            act(m.txn_labels["gcSweep"][t], gc, t)
        act(a("tick"), tick)
        act(a("tcFailover"), failover)
        by_seg = m.seg_labels
        for j in range(lay.nseg):
            act(by_seg["recover"][j], recover, j)
            act(by_seg["recoverWatermark"][j], recover_watermark, j)
            act(by_seg["recoverAborted"][j], recover_aborted, j)
            act(by_seg["recoverComplete"][j], recover_complete_step, j)
            if m.pas_recovers:
                act(by_seg["recoverAcks"][j], recover_acks, j)
            act(by_seg["deliverEvent"][j], self._deliver, j, False)
            act(by_seg["deliverAckEvent"][j], self._deliver, j, True)
            act(by_seg["crash"][j], crash, j)
            if m.constants["unloads"]:
                act(by_seg["unload"][j], unload, j)
            act(by_seg["dispatch"][j], self._dispatch, j)
        if m.topo.children:
            act(a("createChildren"), create_children)
            act(a("terminateParents"), terminate_parents)
            act(a("casSegmentMetadata"), cas_metadata)
        return out

    def _step(self, f: Frame, fn, *args):
        s = St.of(f, self.lay)
        guard, t = fn(s, *args)
        return guard, t.changes(f)

    def _deliver(self, s: St, j: int, acks: bool):
        lay = self.lay
        if acks and not lay.m.split:
            return z3.BoolVal(False), s
        f = "aevents" if acks else "events"
        pending = s.v("evf", j, f) if lay.coalesced else s.v("qlen", j, f) > 0
        ready = s.v("aready", j) if acks and lay.m.pas_recovers else s.v("ready", j)   # the store's own replay
        return z3.And(s.v("up", j), ready, pending), deliver_event(s, j, acks)

    def _dispatch(self, s: St, j: int):
        guard, t = dispatch(s, j)
        return z3.And(s.v("status", j) != E(s, "Status", "ABSENT"), guard), t

    # -- the properties' symbols, as properties.observe computes them ------------------
    def observation(self, f: Frame):
        m, lay = self.spec, self.lay
        sc = m.schema
        s = St.of(f, lay)
        sym = sc.symbols
        T, G, P = ({n: sc.const(d, n) for n in names} for d, names in
                   (("Txn", m.txn_names), ("Seg", m.seg_names), ("Pos", m.pos_names)))
        C = {x: sc.const("Cur", x) for x in m.cur_names}
        out = []

        def put(name, args, value):
            out.append((sym[name].ref(*args) if args else sym[name].ref, value))

        def name_of(term, names, sort):
            v = V(names[-1])
            for x in reversed(names[:-1]):
                v = z3.If(term == lay.enum(sort, x), V(x), v)
            return v

        hst_names = ("NONE", "OPEN", "COMMITTED", "ABORTED", "GONE")
        for t, tx in enumerate(m.txn_names):
            hst = s.v("hst", t)
            put("hdr", [T[tx]], name_of(hst, hst_names, "HSt"))
            put("fin", [T[tx]], z3.And(hst_is(s, t, "OPEN", "COMMITTED", "ABORTED"), s.v("hfin", t) >= 0))
            put("fincnt", [T[tx]], s.v("fincnt", t))
            dec = s.v("decided", t)
            put("decided", [T[tx]], z3.If(dec == E(s, "Dec", "COMMITTED"), V("COMMITTED"),
                                          z3.If(dec == E(s, "Dec", "ABORTED"), V("ABORTED"), V(""))))
            put("told", [T[tx]], name_of(s.v("client", t), CLIENT, "Client"))
            put("late", [T[tx]], s.v("late", t))
            put("opsleft", [T[tx]], z3.Sum([z3.If(s.v("opx", k), 1, 0) for k in lay.ops_of[t]] or [z3.IntVal(0)]))
            put("gcops", [T[tx]], z3.If(s.v("gcs", t), s.v("gcops", t), 0))
            put("gcunmat", [T[tx]], z3.If(s.v("gcs", t), s.v("gcunmat", t), 0))
            steps = [x for x in lay.steps if x != "fin"]
            put("fanning", [T[tx]], any_of(s.v("tcp", t, x, r) for x in steps for r in ("none", "COMMITTED", "ABORTED")))
        for j, sg in enumerate(m.seg_names):
            up, llen, ret = s.v("up", j), s.v("llen", j), s.v("retained", j)
            first = z3.IntVal(NO_OPEN)
            for i in range(lay.L, 0, -1):
                tag = s.v("tag", j, i)
                live = z3.And(ret - 1 <= i - 1, i <= llen)
                entry = z3.If(tag == -1, V("-"), name_of_txn(tag, m.txn_names))
                put("entry", [G[sg], P[m.pos_names[i - 1]]], z3.If(live, entry, V("")))
                skipped = any_of(z3.And(tag == t, is_txn_aborted(s, j, t)) for t in range(lay.n))
                put("skipped", [G[sg], P[m.pos_names[i - 1]]], z3.And(live, up, tag >= 0, skipped))
                opened = any_of(z3.And(tag == t, hst_is(s, t, "OPEN")) for t in range(lay.n))
                first = z3.If(z3.And(live, opened), i, first)
                fence = s.v("fence", j)
                put("fenced", [G[sg], P[m.pos_names[i - 1]]], z3.And(fence >= 0, fence <= i - 1, i <= llen))
                covers = z3.Or(i <= s.v("md", j), s.v("ind", j, i))
                put("acked", [C[m.cur_name[j, 0]], P[m.pos_names[i - 1]]], covers)
                dl = [s.v("dlv", j, i, x) for x in ("OPEN", "ABORTED", "COMMITTED", "NONE", "GONE")]
                v = V("")
                for flag, x in reversed(list(zip(dl, ("OPEN", "ABORTED", "COMMITTED", "NONE", "GONE")))):
                    v = z3.If(flag, V(x), v)
                put("dlv", [G[sg], P[m.pos_names[i - 1]]], v)
            put("firstopen", [G[sg]], first)
            put("sealed", [G[sg]], s.v("status", j) == E(s, "Status", "SEALED"))
            put("up", [G[sg]], up)
            put("maxread", [G[sg]], z3.If(up, read_limit(s, j), -1))
            events = [s.v("evf", j, x) if lay.coalesced else s.v("qlen", j, x) > 0 for x in lay.fields]
            recovering = [z3.Not(s.v("ready", j)), z3.Not(s.v("aready", j))]
            put("pending", [G[sg]], z3.And(up, z3.Or(events + recovering)))
            put("wmark", [G[sg]], s.v("wmark", j))
            for t, tx in enumerate(m.txn_names):
                pins = tracked(s, j, t)
                put("tracks", [G[sg], T[tx]], z3.And(up, z3.Or(s.v("cache", j, t), s.v("acache", j, t), pins)))
                put("pins", [G[sg], T[tx]], z3.And(up, pins))
                put("opon", [T[tx], G[sg]], any_of(z3.And(s.v("opx", k), s.v("pseg", k) == j) for k in lay.ops_of[t]))
                stages = UNANSWERED if m.constants["unloads"] else IN_FLIGHT   # a closed instance's send counts
                put("inflight", [T[tx], G[sg]], any_of(z3.And(stage_is(s, k, *stages), s.v("pseg", k) == j)
                                                       for k in lay.ops_of[t] if k < lay.W))
        self._ack_symbols(s, put, T, C, P)
        return out

    def _ack_symbols(self, s: St, put, T, C, P):
        m, lay = self.spec, self.lay
        cumulative = {(a.txn, a.seg, a.pos, a.sub) for a in m.acks if a.cumulative}
        cover: dict = {}
        written: dict = {}
        for x in lay.ackw:
            t, j, pos, sub = x
            w = z3.Or(s.v("ackw", x), s.v("ackwl", x))
            key = (m.txn_names[t], m.cur_name[j, sub])
            written[key + (pos,)] = (w, s.v("ackwl", x))
            for i in range(1, pos + 1) if x in cumulative else (pos,):
                cover.setdefault(key + (i,), []).append(w)
        ackop: dict = {}
        for k in range(lay.W, lay.K):
            a = lay.ack_of[k]
            ackop.setdefault((m.txn_names[a.txn], m.cur_name[a.seg, a.sub], a.pos), []).append(s.v("opx", k))
        for tx in m.txn_names:
            for cur in m.cur_names:
                for i, pn in enumerate(m.pos_names, start=1):
                    key = (tx, cur, i)
                    args = [T[tx], C[cur], P[pn]]
                    w, after = written.get(key, (z3.BoolVal(False), z3.BoolVal(False)))
                    put("ackw", args, w)
                    put("ackafter", args, after)
                    put("ackcover", args, any_of(cover.get(key, [])))
                    put("ackop", args, any_of(ackop.get(key, [])))


def name_of_txn(tag, names):
    v = z3.StringVal("?")
    for t in reversed(range(len(names))):
        v = z3.If(tag == t, z3.StringVal(names[t]), v)
    return v


assert LIST and pub_targets and any_of
