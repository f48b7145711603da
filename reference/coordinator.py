"""`TransactionCoordinatorV5` (PIP-473, "Components / Transaction Coordinator
V5"; "Flows / End-txn"; "Recovery / TC failover"). Every operation reads or
CAS's a metadata-store record; the coordinator keeps no log and no
participant list. Its only memory is the work it owes after a decision
(setting `finalized_ms`, then answering the client), held as a scheduler
task ("tc-finalize", txn, the answer owed or ""): a failover loses it.

In the merged behaviour the coordinator also fans the decision out to the
participants' event streams right after its CAS (protocol notes, point 3),
and re-drives that fan-out on an idempotent retry and from the GC sweep.
With `tc_steps` (the merged `endTransaction` as it runs) the fan-out is two
more owed tasks, ("tc-list", txn, answer) reading the op records, then
("tc-publish", txn, answer, streams) appending to the streams it found; the
finalize task comes after them. With `tc_publishes` each stream's publish is
a task of its own, ("tc-publish-to", txn, answer, stream), as
`fanOutEvents` fires them in parallel and answers once all have landed.
"""

from __future__ import annotations

from typing import Callable

from .env import Env
from .records import (ABORTED, COMMITTED, COUNTER_PATH, OPEN, TXN_BY_DEADLINE, TXN_BY_FINAL_STATE,
                      header_path, ops_prefix, segment_events, subscription_events)
from .store import BadVersion
from .store.api import NEW

INVALID_STATUS = "InvalidTxnStatus"
NOT_FOUND = "TransactionNotFound"

Reply = Callable[[str], None]


class TransactionCoordinatorV5:
    def __init__(self, env: Env, owner: str = "tc") -> None:
        self.env = env
        self.owner = owner
        self.b = env.behaviour

    # -- client commands ------------------------------------------------------------
    def new_txn(self, timeout_ms: int | None = None) -> str:
        """NEW_TXN. Ids come from a durable counter (CAS), never reused."""
        store = self.env.store
        while True:
            rec = store.get(COUNTER_PATH)
            n = rec.value["next"] if rec else 1
            try:
                store.put(COUNTER_PATH, {"next": n + 1}, expected_version=rec.version if rec else NEW)
                break
            except BadVersion:
                continue
        txn = f"t{n}"
        now = self.env.now_ms
        timeout = self.b.txn_timeout_ms if timeout_ms is None else timeout_ms
        store.put(header_path(txn), {"txn": txn, "state": OPEN, "timeout_ms": now + timeout,
                                     "created_ms": now, "finalized_ms": None},
                  expected_version=NEW, partition_key=txn)
        return txn

    def end_txn(self, txn: str, commit: bool, reply: Reply) -> None:
        """END_TXN: one CAS OPEN -> COMMITTED | ABORTED. The client is answered
        after `finalized_ms` is set (two later tasks), or at once on an error."""
        target = COMMITTED if commit else ABORTED
        rec = self.env.store.get(header_path(txn))
        if rec is None:
            reply(NOT_FOUND)
            return
        state = rec.value["state"]
        if state == OPEN:
            if not self._decide(txn, target):
                return self.end_txn(txn, commit, reply)  # lost a race: answer from the new state
        elif state == target:
            if self.b.notify_by_stream and not self.b.tc_steps:
                self.fan_out(txn)  # idempotent retry re-drives the fan-out
        else:
            reply(INVALID_STATUS)
            return
        self._owe_fan_out(txn, lambda: reply(target), target)

    def _decide(self, txn: str, target: str) -> bool:
        rec = self.env.store.get(header_path(txn))
        try:
            value = {**rec.value, "state": target}
            if self.b.cas_finalizes:  # merged: one header update, state and finalizedAt
                value["finalized_ms"] = self.env.now_ms
            self.env.store.put(rec.path, value, expected_version=rec.version)
        except BadVersion:
            return False
        if self.b.notify_by_stream and not self.b.tc_steps:
            self.fan_out(txn)
        return True

    def _owe_fan_out(self, txn: str, then: Callable[[], None] | None, answer: str = "") -> None:
        """tc_steps: list the op records, then publish, then finalize; else finalize only."""
        if not (self.b.tc_steps and self.b.notify_by_stream):
            return self._owe_finalize(txn, then, answer)

        def listing() -> None:
            streams = tuple(sorted(self._streams(txn)))

            if self.b.tc_publishes:   # fired in parallel; the answer waits for all
                return self._owe_publishes(txn, then, answer, streams)

            def publish() -> None:
                for prefix in streams:
                    self.env.streams.append(prefix, {"txn": txn})
                self._owe_finalize(txn, then, answer)

            self.env.scheduler.submit(("tc-publish", txn, answer, streams), publish, owner=self.owner)

        self.env.scheduler.submit(("tc-list", txn, answer), listing, owner=self.owner)

    def _owe_publishes(self, txn: str, then: Callable[[], None] | None, answer: str,
                       streams: tuple[str, ...]) -> None:
        """`fanOutEvents` as the code runs it: one publish per stream, all
        started at once, each landing on its own ("tc-publish-to", txn,
        answer, stream); once the last has landed (at once when none was
        listed), the finalize task."""
        left = set(streams)
        if not left:
            return self._owe_finalize(txn, then, answer)

        def landed(prefix: str) -> None:
            self.env.streams.append(prefix, {"txn": txn})
            left.discard(prefix)
            if not left:
                self._owe_finalize(txn, then, answer)

        for prefix in streams:
            self.env.scheduler.submit(("tc-publish-to", txn, answer, prefix), lambda p=prefix: landed(p),
                                      owner=self.owner)

    def _owe_finalize(self, txn: str, then: Callable[[], None] | None, answer: str = "") -> None:
        def finalize() -> None:
            rec = self.env.store.get(header_path(txn))
            if rec is not None and rec.value["finalized_ms"] is None:
                try:
                    self.env.store.put(rec.path, {**rec.value, "finalized_ms": self.env.now_ms},
                                       expected_version=rec.version)
                except BadVersion:
                    pass  # someone else finalized it
            if then is not None:
                then()  # ack the client once finalized_ms is set

        self.env.scheduler.submit(("tc-finalize", txn, answer), finalize, owner=self.owner)

    def _streams(self, txn: str) -> set[str]:
        """The participants' streams: one per written segment and per (segment, subscription)."""
        targets = set()
        for path in self.env.store.children(ops_prefix(txn)):
            v = self.env.store.get(path).value
            if v["kind"] == "write":
                targets.add(segment_events(v["segment"]))
            else:
                targets.add(subscription_events(v["segment"], v["subscription"]))
        return targets

    def fan_out(self, txn: str) -> int:
        """merged: one event per written segment and per (segment, subscription)."""
        targets = self._streams(txn)
        for prefix in sorted(targets):
            self.env.streams.append(prefix, {"txn": txn})
        return len(targets)

    # -- sweeps ---------------------------------------------------------------------
    def timed_out(self) -> list[str]:
        """idx:txn-by-deadline, range-queried for timeout_ms <= now."""
        return [txn for (_, txn), _ in self.env.store.scan(TXN_BY_DEADLINE.name, None, (self.env.now_ms,))]

    def abort_timed_out(self, txn: str) -> bool:
        """Timeout sweep, one txn: the same CAS flow, then finalize."""
        if txn not in self.timed_out() or not self._decide(txn, ABORTED):
            return False
        self._owe_fan_out(txn, None)
        return True

    def collectable(self) -> list[str]:
        """idx:txn-by-final-state, range-queried for finalized past retention."""
        horizon = self.env.now_ms - self.b.retention_ms
        out = []
        for state in (ABORTED, COMMITTED):
            for (_, finalized, txn), _ in self.env.store.scan(TXN_BY_FINAL_STATE.name, (state,), (state,)):
                if finalized is not None and finalized <= horizon:
                    out.append(txn)
        return sorted(out, key=lambda t: (len(t), t))

    def collect(self, txn: str) -> bool:
        """GC sweep, one txn ("Garbage collection", phase 2). Text: force-delete
        leftover op records, then delete the header. Merged: leftovers re-drive
        the fan-out and keep the header; it goes only when no op remains.
        Returns True when the header was deleted."""
        store = self.env.store
        if txn not in self.collectable():
            return False
        leftovers = store.children(ops_prefix(txn))
        if leftovers and self.b.gc_redrive:
            self.fan_out(txn)
            return False
        for p in leftovers:
            store.delete(p)
        rec = store.get(header_path(txn))
        try:
            store.delete(rec.path, expected_version=rec.version)
        except BadVersion:
            return False
        return True

    def sweep(self) -> None:
        """One periodic pass: timeouts, then GC."""
        for txn in self.timed_out():
            self.abort_timed_out(txn)
        for txn in self.collectable():
            self.collect(txn)

    def start_sweeps(self) -> None:
        def tick() -> None:
            self.sweep()
            self.start_sweeps()

        self.env.scheduler.call_later(self.b.sweep_period_ms, ("tc-sweep",), tick, owner=self.owner)

    def failover(self) -> int:
        """The coordinator's broker goes away: its owed work is lost. A new
        coordinator needs nothing but the store."""
        return self.env.scheduler.drop_owner(self.owner)

    def take_over(self) -> None:
        """F9 (with tc_steps): before serving, re-drive the fan-out of every
        decided txn (idx:txn-by-final-state) whose op records remain."""
        if not (self.b.takeover_redrive and self.b.tc_steps and self.b.notify_by_stream):
            return
        for state in (ABORTED, COMMITTED):
            for (_, _, txn), _ in self.env.store.scan(TXN_BY_FINAL_STATE.name, (state,), (state,)):
                if self.env.store.children(ops_prefix(txn)):
                    self._owe_fan_out(txn, None)
