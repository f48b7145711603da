"""Handlers of the transaction coordinator (TC V5) and of the simulated clock."""

from __future__ import annotations

from ...reference.coordinator import INVALID_STATUS, NOT_FOUND
from ...reference.records import COMMITTED, ops_prefix, segment_events, subscription_events
from ..replay import StepRefused
from .conventions import UNIT_MS, holds, sub_of
from .step import Bridge, Step


# the coordinator's answer -> the spec's client state
TOLD = {INVALID_STATUS: "told-conflict", NOT_FOUND: "told-notfound", COMMITTED: "told-committed"}


def new_txn(b: Bridge, step: Step) -> None:
    """tc.new_txn(timeout); the id comes from the store's durable counter."""
    t = step.txn
    tid = b.cluster.tc.new_txn(b.behaviour.txn_timeout_ms)
    b.ids[t], b.names[tid] = tid, t
    b.client[t] = "open"


def end_txn(b: Bridge, step: Step) -> None:
    """tc.end_txn(txn, commit?, reply -> client); no reply yet leaves the client ending."""
    t = step.txn
    commit = step.params["decision"] == COMMITTED
    answered: list[str] = []

    def told(result: str) -> None:
        answered.append(result)
        b.client[t] = TOLD.get(result, "told-aborted")

    b.cluster.tc.end_txn(step.tid, commit, told)
    if not answered:
        b.client[t] = "ending-commit" if commit else "ending-abort"


def _owed(b: Bridge, step: Step, kind: str, what: str, spec_step: str, stream: str | None = None) -> None:
    """Run the coordinator's owed (kind, txn, answer, ...) task (of `stream`
    when given). When two are owed (a timeout's and a client's), the spec's
    step says which one ran."""
    sched = b.cluster.scheduler
    tasks = [task for task in sched.runnable() if task.label[:2] == (kind, step.tid)
             and (stream is None or task.label[3] == stream)]
    if not tasks:
        raise StepRefused(f"the coordinator owes no {what} for {step.txn}")
    if len(tasks) > 1 and step.before is not None and step.after is not None:
        gone = [x for x in step.before.tcp - step.after.tcp if x[1].startswith(spec_step)]
        tasks = [task for task in tasks if gone and task.label[2] == gone[0][2]] or tasks
    sched.run(tasks[0])


def tc_finalize(b: Bridge, step: Step) -> None:
    """Run the coordinator's owed ("tc-finalize", txn, ...) task: set
    finalized_ms, then answer the client."""
    _owed(b, step, "tc-finalize", "finalize", "fin")


def tc_list(b: Bridge, step: Step) -> None:
    """tc = steps: run the owed ("tc-list", txn, ...) task, which reads the txn's op records."""
    _owed(b, step, "tc-list", "op listing", "list")


def tc_publish(b: Bridge, step: Step) -> None:
    """tc = steps: run the owed ("tc-publish", txn, ...) task, which appends to the listed streams."""
    _owed(b, step, "tc-publish", "publish", "pub")


def tc_publish_to(b: Bridge, step: Step) -> None:
    """tc = publishes: run the owed ("tc-publish-to", txn, answer, stream)
    task of the stream the step names."""
    seg = step.params["seg"]
    prefix = segment_events(seg) if step.params["to"] == "buffer" else subscription_events(seg, sub_of(step.params))
    _owed(b, step, "tc-publish-to", f"publish to {prefix}", "pub", stream=prefix)


def timeout_sweep(b: Bridge, step: Step) -> None:
    """tc.abort_timed_out(txn)."""
    if not b.cluster.tc.abort_timed_out(step.tid):
        raise StepRefused(f"{step.txn} is not a timed-out OPEN txn in the implementation")


def gc_sweep(b: Bridge, step: Step) -> None:
    """tc.collect(txn); just before, the ghost `gcsnap` records the ops left and
    the live participants that have not materialized the txn."""
    c, t, tid = b.cluster, step.txn, step.tid
    if tid not in c.tc.collectable():
        raise StepRefused(f"{t} is not past its retention window in the implementation")
    left = [c.store.get(p).value for p in c.store.children(ops_prefix(tid))]
    owners = {v["segment"] for v in left}
    # live participants still holding t: its ops there, or a known or recovered position (an entry
    # with no op and no position yet is a send the coordinator cannot know of)
    unmat = sum(1 for seg, br in c.brokers.items() if br.up and holds(br, tid) and (
        seg in owners or tid in br.tb.first or tid in br.tb.recovery_discovered))
    ops_left = len(left)
    if c.tc.collect(tid):
        b.gcsnap[t] = (ops_left, unmat)


def tick(b: Bridge, step: Step) -> None:
    """Advance the simulated clock one unit."""
    b.cluster.scheduler.advance(UNIT_MS)


def tc_failover(b: Bridge, step: Step) -> None:
    """Drop the coordinator's tasks; a fresh coordinator object resumes from
    the store (fixed F9, with tc = steps: it re-drives the fan-out of decided
    txns whose op records remain)."""
    b.cluster.tc_failover()
    b.failovers += 1
