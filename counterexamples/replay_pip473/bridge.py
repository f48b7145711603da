"""Pip473Bridge: one replay's implementation, its ghosts, and the dispatch of
each spec action to its handler in `actions.TABLE`."""

from __future__ import annotations

from typing import Any, Mapping

from ...reference.behaviour import behaviour as lookup_behaviour
from ...reference.cluster import Cluster
from ...reference.records import OPEN, header_path
from ...reference.store import ChangeEvent
from ..replay import StepRefused
from . import abstraction
from .actions import TABLE
from .conventions import SUBS, UNIT_MS
from .step import Step


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
            tc_steps=c.get("tc") in ("steps", "publishes"),
            tc_publishes=c.get("tc") == "publishes", split_participants=c.get("participants") == "split",
            recovery_steps=c.get("recovery") == "steps", apply_steps=c.get("apply") == "steps",
            producers_gated=c.get("producers") == "gated")

    # -- validation of an untrusted trace -------------------------------------------------
    def validate(self, name: str, params: Mapping[str, Any]) -> str | None:
        action = TABLE.get(name)
        if action is None:
            return f"unknown action {name!r} for spec {self.spec.name}"
        want = action.params
        if not set(want) <= set(params) <= set(want) | set(action.optional):
            return (f"action {name} takes parameters ({', '.join([*want, *action.optional]) or 'none'}), "
                    f"got ({', '.join(sorted(params)) or 'none'})")
        for p, typ in {**want, **action.optional}.items():
            if p not in params:
                continue
            v = params[p]
            if typ is int and (isinstance(v, bool) or not isinstance(v, int)) or (
                    typ is not int and not isinstance(v, typ)):
                return f"action {name}: parameter {p} must be {typ.__name__}, got {type(v).__name__} {v!r}"
        ranges = {
            "txn": self.txn_names, "seg": self.seg_names, "decision": ("COMMITTED", "ABORTED"),
            "sub": tuple(f"sub{x + 1}" for x in range(1, self.spec.subs)),   # sub1 is left unnamed
            "op": tuple(self.acks) if name == "appendAck" else tuple(self.plain) if name == "publishPlain"
            else tuple(self.writes),
            "to": ("buffer", "acks"),
        }
        for p, allowed in ranges.items():
            if p in params and params[p] not in allowed:
                return f"action {name}: {p}={params[p]!r} is out of range ({', '.join(allowed)})"
        types = {**want, **action.optional}
        unranged = [p for p in params if p not in ranges and p != "pos" and types[p] is not bool]
        if unranged:     # a parameter renamed in the catalog and not here would go unchecked
            return f"action {name}: parameter {unranged[0]} has no range in the replay's bridge (bridge.validate)"
        if "pos" in params and not 1 <= params["pos"] <= len(self.pos_names):
            return f"action {name}: pos={params['pos']} is out of range (1..{len(self.pos_names)})"
        return None

    # -- the implementation ----------------------------------------------------------
    def start(self) -> None:
        initial = {seg: r for seg, r in self.ranges.items() if seg not in self.children}
        kw = {"store": self.store_factory()} if self.store_factory else {}
        self.cluster = Cluster(self.behaviour, initial, list(SUBS[:self.spec.subs]),
                               watch_style=self.watch_style, seed_entries=True, **kw)
        self.ids: dict[str, str] = {}      # spec txn -> implementation txn id
        self.names: dict[str, str] = {}    # and back
        self.requests: dict[str, Any] = {}  # plan op -> request
        self.client = {t: "none" for t in self.txn_names}
        self.decided = {t: "" for t in self.txn_names}
        self.fincnt = {t: 0 for t in self.txn_names}
        self.late: set[str] = set()
        self.dlv: set[tuple[tuple[str, str], str]] = set()   # ((seg, pos), header state) per delivery
        # (txn, segment, position, whether the header was decided, spec subscription index)
        self.ackw: set[tuple[str, str, str, bool, int]] = set()
        self.gcsnap: dict[str, tuple[int, int]] = {}
        self.fence: dict[str, int] = {}   # parent segment -> its entries when terminated
        self._finalized: dict[str, bool] = {}
        self.ops_created = {t: 0 for t in self.txn_names}
        self.crashes = self.failovers = self.reshape = self.plain_sent = self.unloads = 0
        self.cluster.store.listen(self._on_store_change)

    def apply(self, name: str, params: Mapping[str, Any], before=None, after=None) -> None:
        """Drive one spec step; `before`/`after` are the spec's states around it."""
        action = TABLE.get(name)
        if action is None:   # validate() rejects unknown actions first
            raise StepRefused(f"no mapping for action {name}")
        t = params.get("txn")
        tid = self.ids.get(t) if t else None
        if t and name != "newTxn" and tid is None:
            raise StepRefused(f"{t} was never created in the implementation")
        action.handler(self, Step(params, t, tid, before, after))

    # -- the ghost recorder ------------------------------------------------------------
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
                               self.header(t) != OPEN, SUBS.index(ev.value["subscription"])))

    def note_admission(self, t: str) -> None:
        """The ghost `late`: an admission while the store header is decided."""
        if self.header(t) != OPEN:
            self.late.add(t)

    # -- what the handlers share ------------------------------------------------------
    def header(self, t: str) -> str:
        """The state of `t`'s header in the store: NONE before newTxn, GONE once collected."""
        tid = self.ids.get(t)
        if tid is None:
            return "NONE"
        rec = self.cluster.store.get(header_path(tid))
        return rec.value["state"] if rec else "GONE"

    def run(self, *label) -> Any:
        """Run the scheduler's runnable task with this label; refuse the step if there is none."""
        task = self.cluster.scheduler.find(*label)
        if task is None:
            raise StepRefused(f"the implementation has no runnable task {label}")
        self.cluster.scheduler.run(task)
        return task

    def live_broker(self, seg: str):
        broker = self.cluster.brokers.get(seg)
        if broker is None or not broker.up:
            raise StepRefused(f"the broker of {seg} is not up")
        return broker

    # -- the abstraction function and the refinement mapping ----------------------------
    def observe(self) -> dict:
        return abstraction.observe(self)

    def spec_state(self) -> dict:
        return abstraction.spec_state(self)

    def state_diff(self, spec_state) -> dict:
        """{field: {"spec", "impl"}} for the spec state's fields the mapping covers."""
        mine = self.spec_state()
        theirs = spec_state._asdict()
        return {f: {"spec": theirs[f], "impl": v} for f, v in mine.items() if f in theirs and theirs[f] != v}
