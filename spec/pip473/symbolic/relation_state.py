"""The PIP-473 state as typed cells, for the symbolic relation (relation.py).

Every field of `S` (state.py) at the model's bounds becomes cells of fixed
shape: a set of small tuples becomes a Bool per element of its universe
(the universe read off the plan and the topology), a tuple of variable
length a length and slots, a `Part` or None an `up` flag and the part's
cells (their defaults while down). `encode` maps a state to its cells and
refuses one it cannot represent (a test runs it on every state it checks).

Two encodings use facts of the spec rather than mere shapes, each checked
by `encode` on every state it meets:
* an op record is `opx[k]` of the plan operation k that put it: its txn,
  kind, position, cumulative flag and subscription are the plan's, its seq
  and segment those the operation's `Pub` recorded (`put_op` writes both);
* `arec` holds at most one record per (segment, txn), its key in `akey`.
"""

from __future__ import annotations

from itertools import combinations

import z3

from ...schema import Bool, Enum, Int, Schema
from ...symbolic import Key, Sym
from ..protocol.coordinator import STREAM_BASE, _pub
from ..protocol.state import (
    ABSENT, ADDED, APPENDED, CHECKED, CLOSED, DONE, GONE, NO_GC, NONE, OPPUT, PLAIN, REJECTED, TODO, UNKEYED, VALID,
    Header,
)

HST = ("NONE", "OPEN", "COMMITTED", "ABORTED", "GONE")
STATUS = ("ABSENT", "CREATED", "ACTIVE", "TERMINATED", "SEALED")
CLIENT = ("none", "open", "ending-commit", "ending-abort", "told-committed", "told-aborted", "told-conflict",
          "told-notfound")
STAGE = (TODO, CHECKED, OPPUT, APPENDED, VALID, DONE, REJECTED)
# bound unloads: the stage a send moves to when its instance is closed (not ADDED's:
# the relation refuses track = steps), and those stages
TAKEN = {k: v for k, v in CLOSED.items() if k != ADDED}
CLOSED_STAGES = tuple(TAKEN.values())
DEC = ("undecided", "COMMITTED", "ABORTED")
DST = ("OPEN", "COMMITTED", "ABORTED", "NONE", "GONE")
REPLY = ("none", "COMMITTED", "ABORTED")
NO_TAG = -2      # a ledger slot past the ledger's length
KEY_HI = UNKEYED


class Unrepresentable(ValueError):
    """A state the cells cannot hold (the relation is then not the spec's)."""


def streams_of(m, t: int) -> list[tuple[int, str]]:
    """Every event stream the coordinator could find for t: the segments its
    writes can route to (buffer's stream), its acks' (pending-ack store's)."""
    out = set()
    for w in m.writes:
        if w.txn == t:
            out |= {(j, "events") for j, (lo, hi) in enumerate(m.topo.ranges) if lo <= w.key < hi}
    for a in m.acks:
        if a.txn == t:
            out.add((a.seg, "aevents" if m.split else "events"))
    return sorted(out)


class Layout:
    """The model's constants the cells are shaped by, and the state schema."""

    def __init__(self, m) -> None:
        self.m = m
        self.n, self.nseg = len(m.txn_names), len(m.seg_names)
        self.W = len(m.writes)
        self.K = len(m.op_txn)
        self.L = len(m.pos_names)           # the longest a ledger gets
        self.Q = 2 * self.n                 # pip-text: events a queue can hold (a decision and the GC's, per txn)
        self.coalesced = m.flags.coalesced
        self.op_names = tuple(w.name for w in m.writes) + tuple(a.name for a in m.acks)
        self.ops_of = [[k for k in range(self.K) if m.op_txn[k] == t] for t in range(self.n)]
        self.ack_of = {self.W + k: a for k, a in enumerate(m.acks)}
        self.packs = sorted({(a.txn, a.pos, a.cumulative) for a in m.acks})
        self.ackw = sorted({(a.txn, a.seg, a.pos, a.sub) for a in m.acks})
        self.fields = ("events", "aevents") if m.split else ("events",)
        self.pub_steps = {t: [_pub(c) for r in range(len(streams_of(m, t)) + 1)
                              for c in combinations(streams_of(m, t), r)] for t in range(self.n)}
        steps = ["fin", "list"] + sorted({x for v in self.pub_steps.values() for x in v})
        self.steps = tuple(steps)
        ticks, timeout = m.constants["ticks"], m.constants["timeout"]
        sc = self.schema = Schema()
        sc.enum("Txn", m.txn_names)
        sc.enum("Seg", m.seg_names)
        sc.int_sort("LPos", 1, self.L)
        sc.enum("Op", self.op_names or ("none",))
        sc.int_sort("TPos", -1, self.L)
        sc.enum("Stream", self.fields)
        sc.int_sort("Slot", 0, self.Q - 1)
        sc.enum("Pack", [self.pack_name(x) for x in self.packs] or ["none"])
        sc.enum("AckW", [self.ackw_name(x) for x in self.ackw] or ["none"])
        sc.enum("DSt", DST)
        sc.enum("Step", self.steps)
        sc.enum("Reply", REPLY)
        stages = STAGE + (CLOSED_STAGES if m.constants["unloads"] else ())
        for name, values in (("HSt", HST), ("Status", STATUS), ("Client", CLIENT), ("Stage", stages), ("Dec", DEC)):
            sc.enum(name, values)
        b, i = Bool(), lambda lo, hi: Int(lo, hi)
        # a put per op slot, and per unload one more for each send the stock client resends (publish._closed_end)
        resends = m.constants["unloads"] if m.stock_client else 0
        maxseq = 1 + max((len(x) + resends * sum(k < self.W for k in x) for x in self.ops_of), default=0)
        for name, typ in (("now", i(0, ticks)), ("reshape", i(0, 3)), ("crashes", i(0, m.constants["crashes"])),
                          ("failovers", i(0, m.constants["failovers"])), ("unloads", i(0, m.constants["unloads"])),
                          ("plain", i(0, len(m.plain_keys)))):
            sc.var(name, typ)
        for name, typ in (("hst", Enum("HSt")), ("hdl", i(0, ticks + timeout)), ("hfin", i(-1, ticks)),
                          ("seqs", i(1, maxseq)), ("client", Enum("Client")), ("fincnt", i(0, 3)),
                          ("decided", Enum("Dec")), ("late", b), ("gcs", b), ("gcops", i(0, self.K)),
                          ("gcunmat", i(0, self.nseg))):
            sc.fun(name, "Txn", typ)
        if self.K:
            for name, typ in (("stage", Enum("Stage")), ("pseg", i(-1, self.nseg - 1)), ("ppos", i(0, self.L)),
                              ("pseq", i(-1, maxseq)), ("opx", b)):
                sc.fun(name, "Op", typ)
        for name, typ in (("wmark", i(-1, self.L)), ("status", Enum("Status")), ("llen", i(0, self.L)),
                          ("md", i(0, self.L)), ("rd", i(1, self.L + 1)), ("fence", i(-1, self.L)),
                          ("retained", i(1, self.L + 1)), ("up", b), ("hold", i(-1, self.L)), ("ready", b),
                          ("loaded", i(0, 2)), ("wknown", b), ("aready", b)):
            sc.fun(name, "Seg", typ)
        sc.fun("tag", ("Seg", "LPos"), i(NO_TAG, self.n - 1))
        sc.fun("ind", ("Seg", "LPos"), b)
        for name in ("arec", "cache", "abrt", "acache"):
            sc.fun(name, ("Seg", "Txn"), b)
        sc.fun("akey", ("Seg", "Txn"), i(0, KEY_HI))
        sc.fun("tpos", ("Seg", "Txn", "TPos"), b)
        if self.packs:
            sc.fun("packs", ("Seg", "Pack"), b)
        if self.coalesced:
            sc.fun("evf", ("Seg", "Stream"), b)
        else:
            sc.fun("qlen", ("Seg", "Stream"), i(0, self.Q))
            sc.fun("qtxn", ("Seg", "Stream", "Slot"), i(-1, self.n - 1))
            sc.fun("qst", ("Seg", "Stream", "Slot"), Enum("HSt"))
        sc.fun("dlv", ("Seg", "LPos", "DSt"), b)
        if self.ackw:
            sc.fun("ackw", "AckW", b)
            sc.fun("ackwl", "AckW", b)    # written after the decision
        sc.fun("tcp", ("Txn", "Step", "Reply"), b)
        # element names of each sort, from the spec's values
        self.conv = {
            "Txn": lambda t: m.txn_names[t], "Seg": lambda j: m.seg_names[j], "LPos": str, "TPos": str,
            "Op": lambda k: self.op_names[k], "Stream": str, "Slot": str, "Pack": self.pack_name,
            "AckW": self.ackw_name, "DSt": str, "Step": str, "Reply": lambda r: r or "none",
        }
        self.key_of = {name: (sym.domain, [self.conv[d] for d in sym.domain]) for name, sym in sc.symbols.items()}
        self._keys: dict = {}

    @staticmethod
    def pack_name(x) -> str:
        t, pos, cum = x
        return f"t{t + 1}@{pos}{'cum' if cum else 'ind'}"

    def ackw_name(self, x) -> str:
        t, j, pos, sub = x
        return f"t{t + 1}@{self.m.seg_names[j]}:{pos}" + (f"/sub{sub + 1}" if sub else "")

    def key(self, name: str, *idx) -> Key:
        hit = self._keys.get((name, idx))
        if hit is None:
            _, conv = self.key_of[name]
            hit = self._keys[name, idx] = (name, tuple(c(x) for c, x in zip(conv, idx)))
        return hit

    def enum(self, sort: str, value: str) -> z3.ExprRef:
        return self.schema.const(sort, value)


class St(Sym):
    """The PIP-473 state as terms: `s.v("cache", j, t)` reads a cell by the
    spec's indexes, `s.set(...)` returns the state with cells assigned."""

    __slots__ = ()

    def v(self, name: str, *idx) -> z3.ExprRef:
        return self.c[self.ctx.key(name, *idx)]

    def set(self, assignments: dict) -> "St":
        """{(name, *idx): value} -> the updated state (values may be ints,
        bools or Z3 terms)."""
        lay = self.ctx
        return self.updated({lay.key(k[0], *k[1:]): _term(v) for k, v in assignments.items()})


def _term(v):
    if isinstance(v, bool):
        return z3.BoolVal(v)
    if isinstance(v, int):
        return z3.IntVal(v)
    return v


# -- encoding a state ----------------------------------------------------------------


def encode(lay: Layout, s) -> dict[Key, object]:
    m = lay.m
    out: dict = {}

    def put(name, *idx_and_value):
        *idx, value = idx_and_value
        out[lay.key(name, *idx)] = value

    for name in ("now", "reshape", "crashes", "failovers", "unloads", "plain"):
        put(name, getattr(s, name))
    for t, h in enumerate(s.hdr):
        if isinstance(h, Header):
            put("hst", t, h.state), put("hdl", t, h.deadline), put("hfin", t, h.fin_at)
        else:
            put("hst", t, h), put("hdl", t, 0), put("hfin", t, -1)
        put("seqs", t, s.seqs[t]), put("client", t, s.client[t]), put("fincnt", t, s.fincnt[t])
        put("decided", t, s.decided[t] or "undecided"), put("late", t, t in s.late)
        g = s.gcsnap[t]
        gc = g != NO_GC
        put("gcs", t, gc), put("gcops", t, g[0] if gc else 0), put("gcunmat", t, g[1] if gc else 0)
    ops = set(s.ops)
    for k, pub in enumerate(s.pubs):
        put("stage", k, pub.stage), put("pseg", k, pub.seg), put("ppos", k, pub.pos), put("pseq", k, pub.seq)
        rec = op_record(lay, k, pub.seg, pub.pos, pub.seq)
        put("opx", k, rec in ops)
        ops.discard(rec)
    if ops:
        raise Unrepresentable(f"op records no plan operation accounts for: {sorted(ops)}")
    recs: dict = {}
    for (j, t, key) in s.arec:
        if (j, t) in recs:
            raise Unrepresentable(f"two aborted records of t{t + 1} on segment {j}")
        recs[j, t] = key
    for j in range(lay.nseg):
        put("wmark", j, s.wmark[j]), put("status", j, STATUS[0] if s.status[j] == ABSENT else s.status[j])
        led = s.ledger[j]
        put("llen", j, len(led))
        for i in range(1, lay.L + 1):
            tag = led[i - 1] if i <= len(led) else NO_TAG
            put("tag", j, i, -1 if tag == PLAIN else tag)
        md, ind = s.cursor[j]
        put("md", j, md)
        for i in range(1, lay.L + 1):
            put("ind", j, i, i in ind)
        put("rd", j, s.rd[j]), put("fence", j, s.fence[j]), put("retained", j, s.retained[j])
        p = s.part[j]
        put("up", j, p is not None)
        from ..protocol.state import EMPTY_PART
        q = EMPTY_PART if p is None else p
        put("hold", j, q.hold), put("ready", j, q.ready), put("loaded", j, q.loaded), put("wknown", j, q.wknown)
        put("aready", j, q.aready)
        for t in range(lay.n):
            put("arec", j, t, (j, t) in recs), put("akey", j, t, recs.get((j, t), 0))
            put("cache", j, t, t in q.cache), put("abrt", j, t, t in q.abrt), put("acache", j, t, t in q.acache)
            for x in range(-1, lay.L + 1):
                put("tpos", j, t, x, (t, x) in q.tpos)
        if {x for x, _ in q.tpos} - set(range(lay.n)) or {y for _, y in q.tpos} - set(range(-1, lay.L + 1)):
            raise Unrepresentable(f"tracked positions {sorted(q.tpos)}")
        for x in lay.packs:
            put("packs", j, x, x in q.packs)
        if set(q.packs) - set(lay.packs):
            raise Unrepresentable(f"pending acks {sorted(q.packs)}")
        for f in lay.fields:
            queue = getattr(q, f)
            if lay.coalesced:
                put("evf", j, f, bool(queue))
                continue
            if len(queue) > lay.Q:
                raise Unrepresentable(f"{len(queue)} events queued on {f} of segment {j}")
            put("qlen", j, f, len(queue))
            for x in range(lay.Q):
                t, st = queue[x] if x < len(queue) else (-1, NONE)
                put("qtxn", j, f, x, t), put("qst", j, f, x, st)
        if q.aevents2 or q.acache2 or q.packs2 or not q.aready2:
            raise Unrepresentable("a second subscription")
        for i in range(1, lay.L + 1):
            for st in DST:
                put("dlv", j, i, st, (j, i, st) in s.dlv)
    if len([d for d in s.dlv if not (0 <= d[0] < lay.nseg and 1 <= d[1] <= lay.L and d[2] in DST)]):
        raise Unrepresentable(f"deliveries {sorted(s.dlv)}")
    for x in lay.ackw:
        t, j, pos, sub = x
        put("ackw", x, (t, j, pos, False, sub) in s.ackw), put("ackwl", x, (t, j, pos, True, sub) in s.ackw)
    if {(t, j, pos, sub) for (t, j, pos, _, sub) in s.ackw} - set(lay.ackw):
        raise Unrepresentable(f"ack writes {sorted(s.ackw)}")
    for t in range(lay.n):
        for step in lay.steps:
            for r in REPLY:
                put("tcp", t, step, r, (t, step, "" if r == "none" else r) in s.tcp)
    if any(step not in lay.steps for (_, step, _) in s.tcp):
        raise Unrepresentable(f"coordinator work {sorted(s.tcp)}")
    return out


def op_record(lay: Layout, k: int, seg: int, pos: int, seq: int):
    """The op record plan operation k puts, as `store.put_op` builds it."""
    from ..protocol.state import Op

    m = lay.m
    if k < lay.W:
        return Op(m.writes[k].txn, seq, "write", seg, 0 if m.flags.op_first else pos, False, 0)
    a = lay.ack_of[k]
    return Op(a.txn, seq, "ack", seg, a.pos, a.cumulative, a.sub)


def values(lay: Layout, cells: dict[Key, object]) -> dict[Key, object]:
    """The cells with each enum value named as its sort's element."""
    sc = lay.schema
    out = {}
    for key, v in cells.items():
        sym = sc.symbols[key[0]]
        out[key] = str(v) if isinstance(sym.type, Enum) else v
    return out


assert STREAM_BASE and DONE and REJECTED and APPENDED and VALID and GONE  # the values this module names
