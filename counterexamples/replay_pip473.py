"""The PIP-473 bridge: spec actions onto `reference/` calls, and the
abstraction function from the implementation back to the spec's symbols.

Configuration comes from the model's bounds (the trace's `#meta.bounds`):
the variant picks the behaviour, `timeout`/`retention` become milliseconds
(one clock unit = `UNIT_MS`), `writes`/`acks` are the client's plan, and
`reshape` the split or merge the controller may run.

Action mapping (spec action -> implementation):

    newTxn(txn)                 tc.new_txn(timeout)           (ids from the durable counter)
    publishCheck(op, txn, seg)  cluster.send(key, txn), then run ("publish", seg, req, "check")
    publishPutOp / publishValidate / publishAppend
                                run that request's next stage task ("op" / "validate" / "append";
                                an append also runs the ledger's add completion)
    publishPlain(op, seg)       cluster.publish(key), then run its ("ledger-add", seg) task, whose
                                completion syncs the buffer's read position
    appendAck(op, txn, seg, pos, cumulative)
                                cluster.ack(...), then run ("ack", seg, sub, req)
    endTxn(txn, decision)       tc.end_txn(txn, commit?, reply -> client)
    tcFinalize(txn)             run the coordinator's owed ("tc-finalize", txn, ...) task: set
                                finalized_ms, then answer the client
    tcList(txn) / tcPublish(txn)
                                (bound tc = "steps") run its owed ("tc-list", txn, ...) task, which
                                reads the op records, or ("tc-publish", txn, ...), which appends
                                to the streams the listing found
    timeoutSweep(txn)           tc.abort_timed_out(txn)
    gcSweep(txn)                tc.collect(txn)
    tick                        advance the simulated clock one unit
    tcFailover                  drop the coordinator's tasks; a fresh coordinator object (fixed F9:
                                it re-drives the fan-out of decided txns with op records left)
    deliverEvent(seg)           run the broker's next header-watch delivery (pip-text; deliveries
                                of finalize-only updates, which carry no decision, run on the way)
                                or its pending coalesced stream deliveries (merged, fixed); with
                                participants = "split", only the transaction buffer's
    deliverAckEvent(seg)        participants = "split": the same for the pending-ack store of the
                                subscription (its own owner, cache and stream)
    crash(seg) / recover(seg)   broker.crash() / broker.start() (recover() and replayAsync())
    createChildren / terminateParents / casSegmentMetadata
                                the segment controller's steps 1-2, 3 and 4
    dispatch(seg)               dispatcher.read_next()
    trimLedger(seg)             cluster.trim_ledger(seg): drop what every cursor acknowledged
    pruneAborted(seg)           cluster.prune_aborted(seg): the buffer's periodic prune task

History variables (the spec's ghosts) are recorded by the bridge as an
observer: `decided` and `fincnt` from the store's change feed, `ackw` from
the ACK op records written, `late` by reading the store at the moment the
implementation admits a write or ack, `dlv` from the consumer's deliveries
with the header read at that moment, `gcops`/`gcunmat` just before a
header is collected. Positions: the implementation's entry ids start at 0,
the spec's positions at 1.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..reference.behaviour import behaviour as lookup_behaviour
from ..reference.cluster import Cluster
from ..reference.coordinator import INVALID_STATUS, NOT_FOUND
from ..reference.records import COMMITTED, OPEN, header_path, ops_prefix, segment_events, subscription_events
from ..reference.store import ChangeEvent
from .replay import StepRefused

RECOVERED = -1  # the spec's `Part.tpos` position of a txn that recovery found OPEN
UNKEYED = 99    # the spec's prune key of an aborted record that has none yet (fixed F8)

UNIT_MS = 1000
SUB = "sub"

# action -> {param: type}
ACTIONS: dict[str, dict[str, type]] = {
    "newTxn": {"txn": str},
    "publishCheck": {"op": str, "txn": str, "seg": str},
    "publishAppend": {"op": str, "txn": str, "seg": str},
    "publishPutOp": {"op": str, "txn": str, "seg": str},
    "publishValidate": {"op": str, "txn": str, "seg": str},
    "publishOpFails": {"op": str, "txn": str, "seg": str},
    "publishPlain": {"op": str, "seg": str},
    "appendAck": {"op": str, "txn": str, "seg": str, "pos": int, "cumulative": bool},
    "endTxn": {"txn": str, "decision": str},
    "tcFinalize": {"txn": str},
    "tcList": {"txn": str},
    "tcPublish": {"txn": str},
    "timeoutSweep": {"txn": str},
    "gcSweep": {"txn": str},
    "tick": {},
    "tcFailover": {},
    "deliverEvent": {"seg": str},
    "deliverAckEvent": {"seg": str},
    "crash": {"seg": str},
    "recover": {"seg": str},
    "recoverComplete": {"seg": str},
    "createChildren": {},
    "terminateParents": {},
    "casSegmentMetadata": {},
    "dispatch": {"seg": str},
    "trimLedger": {"seg": str},
    "pruneAborted": {"seg": str},
}

STAGE_TASK = {"publishPutOp": "op", "publishAppend": "append", "publishValidate": "validate"}
IN_FLIGHT = ("checked", "op", "appended", "valid")


class Pip473Bridge:
    def __init__(self, spec, *, store=None, watch_style: str = "point") -> None:
        self.spec = spec
        self.store_factory = store
        self.watch_style = watch_style
        c = spec.constants
        self.writes = {w.name: w for w in spec.writes}
        self.acks = {a.name: a for a in spec.acks}
        self.plain = {f"n{k + 1}": key for k, key in enumerate(spec.plain_keys)}
        self.txn_names = spec.txn_names
        self.seg_names = spec.seg_names
        self.pos_names = spec.pos_names
        topo = spec.topo
        self.ranges = {self.seg_names[j]: r for j, r in enumerate(topo.ranges)}
        self.parents = [self.seg_names[j] for j in topo.parents]
        self.children = {self.seg_names[j]: topo.ranges[j] for j in topo.children}
        if c.get("watches") == "zk-oneshot":  # the spec's ZooKeeper one-shot header watches
            self.watch_style = "oneshot"
        self.behaviour = lookup_behaviour(spec.variant).with_(
            txn_timeout_ms=c["timeout"] * UNIT_MS, retention_ms=c["retention"] * UNIT_MS,
            tc_steps=c.get("tc") == "steps", split_participants=c.get("participants") == "split")

    # -- validation of an untrusted trace -------------------------------------------------
    def validate(self, name: str, params: Mapping[str, Any]) -> str | None:
        want = ACTIONS.get(name)
        if want is None:
            return f"unknown action {name!r} for spec {self.spec.name}"
        if set(params) != set(want):
            return (f"action {name} takes parameters ({', '.join(want) or 'none'}), "
                    f"got ({', '.join(sorted(params)) or 'none'})")
        for p, typ in want.items():
            v = params[p]
            if typ is int and (isinstance(v, bool) or not isinstance(v, int)) or (
                    typ is not int and not isinstance(v, typ)):
                return f"action {name}: parameter {p} must be {typ.__name__}, got {type(v).__name__} {v!r}"
        ranges = {
            "txn": self.txn_names, "seg": self.seg_names, "decision": ("COMMITTED", "ABORTED"),
            "op": tuple(self.acks) if name == "appendAck" else tuple(self.plain) if name == "publishPlain"
            else tuple(self.writes),
        }
        for p, allowed in ranges.items():
            if p in params and params[p] not in allowed:
                return f"action {name}: {p}={params[p]!r} is out of range ({', '.join(allowed)})"
        if "pos" in params and not 1 <= params["pos"] <= len(self.pos_names):
            return f"action {name}: pos={params['pos']} is out of range (1..{len(self.pos_names)})"
        return None

    # -- the implementation ----------------------------------------------------------
    def start(self) -> None:
        initial = {seg: r for seg, r in self.ranges.items() if seg not in self.children}
        kw = {"store": self.store_factory()} if self.store_factory else {}
        self.cluster = Cluster(self.behaviour, initial, [SUB], watch_style=self.watch_style,
                               seed_entries=True, **kw)
        self.ids: dict[str, str] = {}      # spec txn -> implementation txn id
        self.names: dict[str, str] = {}    # and back
        self.requests: dict[str, Any] = {}  # plan op -> request
        self.client = {t: "none" for t in self.txn_names}
        self.decided = {t: "" for t in self.txn_names}
        self.fincnt = {t: 0 for t in self.txn_names}
        self.late: set[str] = set()
        self.dlv: dict[tuple[str, str], str] = {}
        self.ackw: set[tuple[str, str, str, bool]] = set()   # and whether the header was decided
        self.gcsnap: dict[str, tuple[int, int]] = {}
        self.fence: dict[str, int] = {}   # parent segment -> its entries when terminated
        self._finalized: dict[str, bool] = {}
        self.ops_created = {t: 0 for t in self.txn_names}
        self.crashes = self.failovers = self.reshape = self.plain_sent = 0
        self.cluster.store.listen(self._on_store_change)

    def _on_store_change(self, ev: ChangeEvent) -> None:
        if ev.path.startswith("/txn/") and ev.value is not None:
            t = self.names.get(ev.path.rsplit("/", 1)[1])
            if t is None:
                return
            if ev.value["state"] != OPEN and not self.decided[t]:
                self.decided[t] = ev.value["state"]
            fin = ev.value["finalized_ms"] is not None
            if fin and not self._finalized.get(t):
                self.fincnt[t] += 1
            self._finalized[t] = fin
        elif ev.path.startswith("/txn-op/") and ev.value is not None and ev.version == 0:
            t = self.names.get(ev.value["txn"])
            if t is None:
                return
            self.ops_created[t] += 1
            if ev.value["kind"] == "ack":
                self.ackw.add((t, ev.value["segment"], self.pos_names[ev.value["position"]],
                               self._header(t) != OPEN))

    def _ackcover(self) -> set:
        """Positions each txn's written acks cover (a cumulative ack: its own
        and every earlier one), by the plan's kind of each ack."""
        cum = {(self.txn_names[a.txn], self.seg_names[a.seg], a.pos) for a in self.spec.acks if a.cumulative}
        out = set()
        for t, seg, p, _ in self.ackw:
            pos = self.pos_names.index(p) + 1
            for i in range(1, pos + 1) if (t, seg, pos) in cum else (pos,):
                out.add((t, seg, self.pos_names[i - 1]))
        return out

    def _header(self, t: str) -> str:
        tid = self.ids.get(t)
        if tid is None:
            return "NONE"
        rec = self.cluster.store.get(header_path(tid))
        return rec.value["state"] if rec else "GONE"

    def _run(self, *label) -> Any:
        task = self.cluster.scheduler.find(*label)
        if task is None:
            raise StepRefused(f"the implementation has no runnable task {label}")
        self.cluster.scheduler.run(task)
        return task

    def _broker(self, seg: str):
        broker = self.cluster.brokers.get(seg)
        if broker is None or not broker.up:
            raise StepRefused(f"the broker of {seg} is not up")
        return broker

    def _admitted(self, t: str) -> None:
        """The ghost `late`: an admission while the store header is decided."""
        if self._header(t) != OPEN:
            self.late.add(t)

    def apply(self, name: str, params: Mapping[str, Any], before=None, after=None) -> None:
        c = self.cluster
        t = params.get("txn")
        tid = self.ids.get(t) if t else None
        if t and name != "newTxn" and tid is None:
            raise StepRefused(f"{t} was never created in the implementation")
        if name == "newTxn":
            tid = c.tc.new_txn(self.behaviour.txn_timeout_ms)
            self.ids[t], self.names[tid] = tid, t
            self.client[t] = "open"
        elif name == "publishCheck":
            w = self.writes[params["op"]]
            req = c.send(w.key, tid)
            if req is None:
                raise StepRefused(f"no ACTIVE segment with an up broker for key {w.key}")
            if req.segment != params["seg"]:
                raise StepRefused(f"key {w.key} routes to {req.segment}, the spec routed it to {params['seg']}")
            self.requests[params["op"]] = req
            self._run("publish", req.segment, req.rid, "check")
            if req.stage == "checked" and not self.behaviour.validate_after_op:
                self._admitted(t)
        elif name in STAGE_TASK:
            req = self.requests.get(params["op"])
            if req is None:
                raise StepRefused(f"{params['op']} was never sent")
            self._run("publish", params["seg"], req.rid, STAGE_TASK[name])
            if name == "publishAppend" and req.stage not in ("rejected",):
                self._run("ledger-add", params["seg"])
            if name == "publishValidate" and req.stage == "valid":
                self._admitted(t)
        elif name == "publishOpFails":
            req = self.requests.get(params["op"])
            if req is None:
                raise StepRefused(f"{params['op']} was never sent")
            req.op_write_fails = True   # the metadata store fails the op put
            self._run("publish", params["seg"], req.rid, "op")
        elif name == "publishPlain":
            if params["op"] != f"n{self.plain_sent + 1}":
                raise StepRefused(f"{params['op']} is not the next non-transactional send")
            seg = c.publish(self.plain[params["op"]])
            if seg != params["seg"]:
                raise StepRefused(f"{params['op']} routes to {seg}, the spec routed it to {params['seg']}")
            self._run("ledger-add", seg)
            self.plain_sent += 1
        elif name == "appendAck":
            seg, pos = params["seg"], params["pos"] - 1
            broker = self._broker(seg)
            if broker.dispatchers[SUB].cursor.read_position <= pos:
                raise StepRefused(f"the consumer has not received entry {pos} of {seg}")
            req = c.ack(seg, tid, pos, params["cumulative"], SUB)
            self.requests[params["op"]] = req
            self._run("ack", seg, SUB, req.rid)
            if req.stage == "done":
                self._admitted(t)
        elif name == "endTxn":
            commit = params["decision"] == COMMITTED
            answered: list[str] = []
            c.tc.end_txn(tid, commit, lambda r, t=t: self._told(t, r, answered))
            if not answered:
                self.client[t] = "ending-commit" if commit else "ending-abort"
        elif name == "tcFinalize":
            self._finalize(t, tid, before, after)
        elif name in ("tcList", "tcPublish"):
            self._owed(name, "tc-list" if name == "tcList" else "tc-publish", t, tid, before, after)
        elif name == "timeoutSweep":
            if not c.tc.abort_timed_out(tid):
                raise StepRefused(f"{t} is not a timed-out OPEN txn in the implementation")
        elif name == "gcSweep":
            if tid not in c.tc.collectable():
                raise StepRefused(f"{t} is not past its retention window in the implementation")
            left = [c.store.get(p).value for p in c.store.children(ops_prefix(tid))]
            owners = {v["segment"] for v in left}
            # live participants still holding t: its ops there, or a pinned read position
            unmat = sum(1 for seg, b in c.brokers.items() if b.up and _holds(b, tid) and (
                seg in owners or tid in b.tb.first or tid in b.tb.in_flight or tid in b.tb.recovery_discovered))
            ops_left = len(left)
            if c.tc.collect(tid):
                self.gcsnap[t] = (ops_left, unmat)
        elif name == "tick":
            c.scheduler.advance(UNIT_MS)
        elif name == "tcFailover":
            c.tc_failover()
            self.failovers += 1
        elif name == "deliverEvent":
            self._deliver(self._broker(params["seg"]))
        elif name == "deliverAckEvent":
            broker = self._broker(params["seg"])
            self._deliver(broker, broker.pas_owner(SUB))
        elif name == "crash":
            self._broker(params["seg"])
            c.crash(params["seg"])
            self.crashes += 1
        elif name == "recover":
            broker = c.brokers.get(params["seg"])
            if broker is None or broker.up:
                raise StepRefused(f"the broker of {params['seg']} is not down")
            c.restart(params["seg"])
        elif name == "recoverComplete":
            self._run("tb-recover", self._broker(params["seg"]).segment)
        elif name == "createChildren":
            c.create_children(self.parents, self.children)
            self.reshape = 1
        elif name == "terminateParents":
            c.controller.terminate(self.parents)
            # the observer's ghost for ParentFenced: what each parent held when terminated
            self.fence = {seg: len(c.ledgers[seg].entries) for seg in self.parents if seg in c.ledgers}
            self.reshape = 2
        elif name == "casSegmentMetadata":
            if not c.controller.seal(self.parents, list(self.children)):
                raise StepRefused("the segment-layout CAS failed")
            self.reshape = 3
        elif name == "dispatch":
            self._dispatch(params["seg"])
        elif name == "trimLedger":
            broker = self._broker(params["seg"])
            before_first = broker.ledger.storage.first_retained
            if c.trim_ledger(params["seg"]) == before_first:
                raise StepRefused(f"the ledger of {params['seg']} has nothing acknowledged to trim")
        elif name == "pruneAborted":
            self._broker(params["seg"])
            if not c.prune_aborted(params["seg"]):
                raise StepRefused(f"no aborted record of {params['seg']} is below its first retained entry")
        else:  # validate() rejects unknown actions first
            raise StepRefused(f"no mapping for action {name}")

    def _told(self, t: str, result: str, answered: list) -> None:
        answered.append(result)
        self.client[t] = {INVALID_STATUS: "told-conflict", NOT_FOUND: "told-notfound",
                          COMMITTED: "told-committed"}.get(result, "told-aborted")

    def _finalize(self, t: str, tid: str, before, after) -> None:
        sched = self.cluster.scheduler
        tasks = [task for task in sched.runnable() if task.label[:2] == ("tc-finalize", tid)]
        if not tasks:
            raise StepRefused(f"the coordinator owes no finalize for {t}")
        if len(tasks) > 1 and before is not None and after is not None:
            # two owed finalizes (a timeout's and a client's): the spec's step says which one ran
            gone = [x for x in before.tcp - after.tcp if x[1] == "fin"]
            tasks = [task for task in tasks if gone and task.label[2] == gone[0][2]] or tasks
        sched.run(tasks[0])

    def _owed(self, name: str, kind: str, t: str, tid: str, before, after) -> None:
        """Run the coordinator's owed listing or publish for t; when a
        timeout's and a client's are both owed, the spec's step says which."""
        tasks = [task for task in self.cluster.scheduler.runnable() if task.label[:2] == (kind, tid)]
        if not tasks:
            raise StepRefused(f"the coordinator owes no {name} for {t}")
        if len(tasks) > 1 and before is not None and after is not None:
            step = "list" if kind == "tc-list" else "pub"
            gone = [x for x in before.tcp - after.tcp if x[1].startswith(step)]
            tasks = [task for task in tasks if gone and task.label[2] == gone[0][2]] or tasks
        self.cluster.scheduler.run(tasks[0])

    def _deliver(self, broker, owner: str | None = None) -> None:
        """The next notification of the broker's buffer (or joint
        participant), or of the pending-ack store named by `owner`."""
        sched = self.cluster.scheduler
        owner = owner or broker.owner
        if self.behaviour.notify_by_stream:
            tasks = [task for task in sched.runnable() if task.label[:2] == ("stream", owner)]
            if not tasks:
                raise StepRefused(f"no event is pending for {broker.segment}")
            for task in tasks:
                sched.run(task)
            return
        while True:
            task = sched.find("watch", owner)
            if task is None:
                raise StepRefused(f"no header notification is pending for {broker.segment}")
            sched.run(task)
            if _is_decision(task.payload):
                return

    def _dispatch(self, seg: str) -> None:
        broker = self._broker(seg)
        cursor = broker.dispatchers[SUB].cursor
        pos = cursor.read_position
        result = self.cluster.dispatch(seg, SUB)
        if result is None:
            raise StepRefused(f"the dispatcher of {seg} has nothing readable")
        if result == "delivered":
            kind, tid, _ = broker.ledger.read(pos)
            if kind == "txn":
                t = self.names[tid]
                st = self._header(t)
                if st in ("GONE", "NONE"):
                    st = self.decided[t] or st
                self.dlv[(seg, self.pos_names[pos])] = st

    # -- the abstraction function -------------------------------------------------------
    def observe(self) -> dict:
        c = self.cluster
        store = c.store
        tn, sn, pn = self.txn_names, self.seg_names, self.pos_names
        hdr = {t: self._header(t) for t in tn}
        fin, opsleft = set(), {}
        opon, ackop = set(), set()
        for t in tn:
            tid = self.ids.get(t)
            rec = store.get(header_path(tid)) if tid else None
            if rec is not None and rec.value["finalized_ms"] is not None:
                fin.add(t)
            paths = store.children(ops_prefix(tid)) if tid else []
            opsleft[t] = len(paths)
            for p in paths:
                v = store.get(p).value
                opon.add((t, v["segment"]))
                if v["kind"] == "ack":
                    ackop.add((t, v["segment"], pn[v["position"]]))
        entry, skipped, acked = {}, set(), set()
        fenced = {(seg, pn[i]) for seg, n in self.fence.items() for i in range(n, len(c.ledgers[seg].entries))}
        up, pending, tracks, pins = set(), set(), set(), set()
        maxread, firstopen = {}, {}
        layout = c.controller.layout()
        wmark = {}
        for seg in sn:
            rec = store.get(f"/txn-watermark/{seg}")
            if rec is not None:
                wmark[seg] = rec.value["position"] + 1
            storage = c.ledgers.get(seg)
            broker = c.brokers.get(seg)
            live = broker is not None and broker.up
            first = 99
            for i, (kind, tid, _) in enumerate(storage.entries if storage else ()):
                if i < storage.first_retained:
                    continue   # trimmed
                key = (seg, pn[i])
                if kind != "txn":
                    entry[key] = "-"
                    continue
                t = self.names[tid]
                entry[key] = t
                if first == 99 and hdr[t] == OPEN:
                    first = i + 1
                if live and broker.tb.is_txn_aborted(tid):
                    skipped.add(key)
            firstopen[seg] = first
            if storage is not None and SUB in storage.cursors:
                cur = storage.cursors[SUB]
                for i in range(len(pn)):
                    if i <= cur.mark_delete or i in cur.individually_acked:
                        acked.add((seg, pn[i]))
            if not live:
                maxread[seg] = -1
                continue
            up.add(seg)
            maxread[seg] = broker.tb.get_max_read_position() + 1
            if self._pending(broker):
                pending.add(seg)
            for tid in broker.cache.open.union(*(pa.cache.open for pa in broker.pending_acks.values())):
                tracks.add((seg, self.names[tid]))
            for tid in set(broker.tb.first) | broker.tb.in_flight | broker.tb.recovery_discovered:  # pins
                tracks.add((seg, self.names[tid]))
                pins.add((seg, self.names[tid]))
        inflight = {(r.txn and self.names[r.txn], r.segment) for r in self.requests.values()
                    if r.stage in IN_FLIGHT}
        owed = [*c.scheduler.pending("tc-list"), *c.scheduler.pending("tc-publish")]
        return {
            "hdr": hdr,
            "fin": fin,
            "fincnt": dict(self.fincnt),
            "decided": dict(self.decided),
            "told": dict(self.client),
            "late": set(self.late),
            "opsleft": opsleft,
            "gcops": {t: g[0] for t, g in self.gcsnap.items()},
            "gcunmat": {t: g[1] for t, g in self.gcsnap.items()},
            "entry": entry,
            "dlv": dict(self.dlv),
            "skipped": skipped,
            "up": up,
            "maxread": maxread,
            "firstopen": firstopen,
            "tracks": tracks,
            "pins": pins,
            "sealed": {seg for seg, info in layout.items() if info["state"] == "SEALED"},
            "pending": pending,
            "ackw": {a[:3] for a in self.ackw},
            "ackafter": {a[:3] for a in self.ackw if a[3]},
            "ackcover": self._ackcover(),
            "fenced": fenced,
            "ackop": ackop,
            "acked": acked,
            "opon": opon,
            "inflight": inflight,
            "fanning": {self.names[task.label[1]] for task in owed},
            "wmark": wmark,
        }

    # -- the refinement mapping: the implementation as a spec state ----------------------
    def spec_state(self) -> dict:
        """The implementation's state in the spec's representation, field by
        field (`state.S`), except the cursor, whose compaction of individual
        acks into the mark-delete position the spec does not model (its
        covered positions are the observed `acked`). Stricter than the
        observation: the conformance test compares these too."""
        c, store = self.cluster, self.cluster.store
        ti = {t: i for i, t in enumerate(self.txn_names)}
        si = {seg: j for j, seg in enumerate(self.seg_names)}
        idx = lambda tid: ti[self.names[tid]]  # noqa: E731
        hdr = []
        for t in self.txn_names:
            tid = self.ids.get(t)
            rec = store.get(header_path(tid)) if tid else None
            if tid is None:
                hdr.append("NONE")
            elif rec is None:
                hdr.append("GONE")
            else:
                v = rec.value
                fin = v["finalized_ms"]
                hdr.append((v["state"], v["timeout_ms"] // UNIT_MS, -1 if fin is None else fin // UNIT_MS))
        ops = set()
        for tid in self.ids.values():
            for path in store.children(ops_prefix(tid)):
                v = store.get(path).value
                pos = v["position"]
                ops.add((idx(tid), int(path.rsplit("/", 1)[1]), v["kind"], si[v["segment"]],
                         0 if pos is None else pos + 1, bool(v.get("cumulative", False))))
        arec = set()
        for p in store.children("/txn-aborted/"):
            key = store.get(p).value["position"]
            arec.add((si[p.split("/")[2]], idx(p.rsplit("/", 1)[1]), UNKEYED if key is None else key + 1))
        layout = c.controller.layout()
        wmark, status, ledger, rd, part = [], [], [], [], []
        for seg in self.seg_names:
            rec = store.get(f"/txn-watermark/{seg}")
            wmark.append(rec.value["position"] + 1 if rec else -1)
            storage = c.ledgers.get(seg)
            st = layout.get(seg, {}).get("state", "-")
            status.append("TERMINATED" if st == "ACTIVE" and storage and storage.terminated else st)
            ledger.append(tuple("-" if kind != "txn" else idx(tid)
                                for kind, tid, _ in (storage.entries if storage else ())))
            rd.append(storage.cursors[SUB].read_position + 1 if storage else 1)
            broker = c.brokers.get(seg)
            part.append(self._part(broker, idx) if broker is not None and broker.up else None)
        tcp = {(idx(task.label[1]), "fin", task.label[2]) for task in c.scheduler.pending("tc-finalize")}
        tcp |= {(idx(task.label[1]), "list", task.label[2]) for task in c.scheduler.pending("tc-list")}
        # the publish step's streams as the spec names them: a digit per segment's
        # (buffer's) stream, a letter per pending-ack store's when the two are split
        split = self.behaviour.split_participants
        streams = {segment_events(seg): str(j) for j, seg in enumerate(self.seg_names)}
        streams |= {subscription_events(seg, SUB): chr(97 + j) if split else str(j)
                    for j, seg in enumerate(self.seg_names)}
        tcp |= {(idx(task.label[1]), "pub" + "".join(sorted({streams[x] for x in task.label[3]})), task.label[2])
                for task in c.scheduler.pending("tc-publish")}
        pubs = []
        for name in list(self.writes) + list(self.acks):
            req = self.requests.get(name)
            if req is None:
                pubs.append(("todo", -1, 0, -1))
                continue
            seq = int(req.op_path.rsplit("/", 1)[1]) if req.op_path else -1
            pos = (0 if req.position is None else req.position + 1)
            pubs.append((req.stage, si[req.segment], pos, seq))
        k = self.spec.constants
        return {
            "now": c.scheduler.now_ms // UNIT_MS, "hdr": tuple(hdr),
            "seqs": tuple(1 + self.ops_created[t] for t in self.txn_names),
            "ops": frozenset(ops), "arec": frozenset(arec), "wmark": tuple(wmark), "status": tuple(status),
            "ledger": tuple(ledger), "rd": tuple(rd), "reshape": self.reshape, "part": tuple(part),
            "crashes": k["crashes"] - self.crashes, "tcp": frozenset(tcp),
            "failovers": k["failovers"] - self.failovers,
            "client": tuple(self.client[t] for t in self.txn_names), "pubs": tuple(pubs),
            "fincnt": tuple(self.fincnt[t] for t in self.txn_names),
            "decided": tuple(self.decided[t] for t in self.txn_names),
            "late": frozenset(ti[t] for t in self.late),
            "dlv": frozenset((si[seg], self.pos_names.index(p) + 1, st) for (seg, p), st in self.dlv.items()),
            "ackw": frozenset((ti[t], si[seg], self.pos_names.index(p) + 1, a) for t, seg, p, a in self.ackw),
            "gcsnap": tuple(self.gcsnap.get(t, ()) for t in self.txn_names),
            "fence": tuple(self.fence.get(seg, -1) for seg in self.seg_names),
            "plain": self.plain_sent,
            "retained": tuple(c.ledgers[seg].first_retained + 1 if seg in c.ledgers else 1 for seg in self.seg_names),
        }

    def _events(self, owner: str, idx) -> tuple:
        """The spec's `events` of one participant: a pending stream delivery, or its decision watches."""
        sched = self.cluster.scheduler
        if self.behaviour.notify_by_stream:
            return (True,) if any(task.label[:2] == ("stream", owner) for task in sched.pending("stream")) else ()
        return tuple((idx(task.payload.path.rsplit("/", 1)[1]),
                      task.payload.value["state"] if task.payload.value is not None else "GONE")
                     for task in sched.pending("watch", owner) if _is_decision(task.payload))

    def _part(self, broker, idx) -> tuple:
        tb = broker.tb
        packs = frozenset((idx(tid), pos + 1, cum) for pa in broker.pending_acks.values()
                          for tid, held in pa.held.items() for pos, cum in held)
        split = self.behaviour.split_participants
        return (
            frozenset(idx(tid) for tid in broker.cache.open),
            frozenset({(idx(tid), p + 1) for tid, p in tb.first.items()} | {(idx(tid), 0) for tid in tb.in_flight}
                      | {(idx(tid), RECOVERED) for tid in tb.recovery_discovered}),
            frozenset() if self.behaviour.durable_aborted_records else frozenset(idx(tid) for tid in tb.aborted),
            packs, self._events(broker.owner, idx), -1 if tb.hold is None else tb.hold + 1, tb.ready,
            frozenset(idx(tid) for tid in broker.pending_acks[SUB].cache.open) if split else frozenset(),
            self._events(broker.pas_owner(SUB), idx) if split else (),
        )

    def state_diff(self, spec_state) -> dict:
        """{field: {"spec", "impl"}} for the spec state's fields the mapping covers."""
        mine = self.spec_state()
        theirs = spec_state._asdict()
        return {f: {"spec": theirs[f], "impl": v} for f, v in mine.items() if f in theirs and theirs[f] != v}

    def _pending(self, broker) -> bool:
        owners = {broker.owner, broker.pas_owner(SUB)}
        for task in self.cluster.scheduler.pending():
            if task.owner not in owners:
                continue
            if task.label[0] in ("stream", "tb-recover") or (task.label[0] == "watch" and _is_decision(task.payload)):
                return True   # an event to handle, or a recovery to finish
        return False


def _holds(broker, tid: str) -> bool:
    """The broker's buffer or one of its pending-ack stores believes tid OPEN."""
    return tid in broker.cache or any(tid in pa.cache for pa in broker.pending_acks.values())


def _is_decision(event: ChangeEvent | None) -> bool:
    """A header notification that tells a participant something: the decision
    CAS or the header's deletion. The coordinator's later finalize write
    (only `finalized_ms` changes) carries no decision."""
    return event is None or event.value is None or event.value.get("finalized_ms") is None
