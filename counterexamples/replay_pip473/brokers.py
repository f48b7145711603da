"""Handlers of one participant broker: its notifications, crash and
recovery, its dispatcher, and its ledger's trimming and pruning."""

from __future__ import annotations

from ...reference.apply_chain import NORMAL
from ..replay import StepRefused
from .conventions import is_decision, sub_of
from .step import Bridge, Step


def deliver_event(b: Bridge, step: Step) -> None:
    """merged, fixed: run every pending coalesced stream delivery of the broker
    (participants = split: of its transaction buffer only).
    pip-text: run its next header-watch delivery that carries a decision; the
    finalize-only updates before it run on the way."""
    broker = b.live_broker(step.params["seg"])
    _deliver(b, broker, broker.owner)


def deliver_ack_event(b: Bridge, step: Step) -> None:
    """participants = split: the same for the subscription's pending-ack store,
    which has its own owner name, header cache and stream."""
    broker = b.live_broker(step.params["seg"])
    _deliver(b, broker, broker.pas_owner(sub_of(step.params)))


def _deliver(b: Bridge, broker, owner: str) -> None:
    sched = b.cluster.scheduler
    if b.behaviour.notify_by_stream:
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
        if is_decision(task.payload):
            return


def crash(b: Bridge, step: Step) -> None:
    """broker.crash(): caches, watches, pending events and in-flight requests are lost."""
    b.live_broker(step.params["seg"])
    b.cluster.crash(step.params["seg"])
    b.crashes += 1


def unload(b: Bridge, step: Step) -> None:
    """cluster.unload(seg): the buffer is closed, its sends go on; the rest as a crash."""
    b.live_broker(step.params["seg"])
    b.cluster.unload(step.params["seg"])
    b.unloads += 1


def recover(b: Bridge, step: Step) -> None:
    """broker.start() (pip-text: recover() and replayAsync() in one step)."""
    seg = step.params["seg"]
    broker = b.cluster.brokers.get(seg)
    if broker is None or broker.up:
        raise StepRefused(f"the broker of {seg} is not down")
    if not b.cluster.restart(seg):
        raise StepRefused(f"the unloaded instance of {seg} is not done (F10): the next owner waits")


def recover_watermark(b: Bridge, step: Step) -> None:
    """recovery = steps: run the buffer's ("tb-recover-watermark", seg) task."""
    b.run("tb-recover-watermark", b.live_broker(step.params["seg"]).segment)


def recover_aborted(b: Bridge, step: Step) -> None:
    """recovery = steps: run the buffer's ("tb-recover-aborted", seg) task."""
    b.run("tb-recover-aborted", b.live_broker(step.params["seg"]).segment)


def recover_complete(b: Bridge, step: Step) -> None:
    """merged, fixed: run the buffer's ("tb-recover", seg) task."""
    b.run("tb-recover", b.live_broker(step.params["seg"]).segment)


def recover_acks(b: Bridge, step: Step) -> None:
    """merged, fixed, split participants: run the subscription's pending-ack
    store's ("pas-recover", seg, sub) task, its own replay."""
    b.run("pas-recover", b.live_broker(step.params["seg"]).segment, sub_of(step.params))


def dispatch(b: Bridge, step: Step) -> None:
    """dispatcher.read_next(); a delivered txn entry goes into the ghost `dlv`
    with the header read at that moment (the decision, once collected)."""
    seg, sub = step.params["seg"], sub_of(step.params)
    broker = b.live_broker(seg)
    pos = broker.dispatchers[sub].cursor.read_position
    result = b.cluster.dispatch(seg, sub)
    if result is None:
        raise StepRefused(f"the dispatcher of {seg} has nothing readable")
    if result == "delivered":
        kind, tid, _ = broker.ledger.read(pos)
        if kind == "txn":
            t = b.names[tid]
            st = b.header(t)
            if st in ("GONE", "NONE"):
                st = b.decided[t] or st
            b.dlv.add(((seg, b.pos_names[pos]), st))


def trim_ledger(b: Bridge, step: Step) -> None:
    """cluster.trim_ledger(seg): drop what every cursor acknowledged."""
    seg = step.params["seg"]
    broker = b.live_broker(seg)
    before_first = broker.ledger.storage.first_retained
    if b.cluster.trim_ledger(seg) == before_first:
        raise StepRefused(f"the ledger of {seg} has nothing acknowledged to trim")


def prune_aborted(b: Bridge, step: Step) -> None:
    """cluster.prune_aborted(seg): the buffer's periodic prune task."""
    seg = step.params["seg"]
    b.live_broker(seg)
    if not b.cluster.prune_aborted(seg):
        raise StepRefused(f"no aborted record of {seg} is below its first retained entry")


# -- bound apply = "steps": a decision applied in the code's stages, by the live or the closed instance --

def _run_stage(b: Bridge, step: Step, *label, every: bool = False) -> None:
    """Run the runnable task with this label owned by the segment's live
    instance, or (`closed`) by its unloaded one; `every`: each such task (two
    reads of one header in flight, issued by two events, return together as
    the spec's one read: the second finds the first's apply queued)."""
    seg = step.params["seg"]
    broker = b.cluster.brokers.get(seg)
    if broker is None:
        raise StepRefused(f"no broker of {seg}")
    closed = step.params["closed"]
    ran = False
    for task in b.cluster.scheduler.runnable():
        mine = task.owner.startswith(f"{broker.owner}/closed") if closed else task.owner == broker.owner
        if mine and task.label == label:
            b.cluster.scheduler.run(task)
            ran = True
            if not every:
                return
    if not ran:
        raise StepRefused(f"the {'closed' if closed else 'live'} instance of {seg} has no runnable task {label}")


def reconcile_read(b: Bridge, step: Step) -> None:
    """Run the buffer's ("tb-read", seg, txn) task: its reconcile read of the header returns."""
    _run_stage(b, step, "tb-read", step.params["seg"], step.tid, every=True)


def apply_aborted_record(b: Bridge, step: Step) -> None:
    """Run the apply chain's ("tb-apply", seg, txn, "record") task: the aborted record's put."""
    _run_stage(b, step, "tb-apply", step.params["seg"], step.tid, "record")


def apply_watermark(b: Bridge, step: Step) -> None:
    """Run the apply chain's ("tb-apply", seg, txn, "watermark") task: the watermark CAS."""
    _run_stage(b, step, "tb-apply", step.params["seg"], step.tid, "watermark")


def plain_watermark(b: Bridge, step: Step) -> None:
    """Run the apply chain's ("tb-apply", seg, NORMAL, "watermark") task: a normal publish's watermark CAS."""
    _run_stage(b, step, "tb-apply", step.params["seg"], NORMAL, "watermark")


def plain_sync(b: Bridge, step: Step) -> None:
    """Run the ("plain-sync", seg) task: a plain entry's add callback (sync = steps)."""
    _run_stage(b, step, "plain-sync", step.params["seg"])


def apply_delete_ops(b: Bridge, step: Step) -> None:
    """Run the apply chain's ("tb-apply", seg, txn, "delete") task: the WRITE ops' delete."""
    _run_stage(b, step, "tb-apply", step.params["seg"], step.tid, "delete")


def ack_reconcile_read(b: Bridge, step: Step) -> None:
    """Run the pending-ack store's ("pas-read", seg, sub, txn) task (apply = steps: one subscription)."""
    _run_stage(b, step, "pas-read", step.params["seg"], "sub", step.tid, every=True)


def ack_delete_ops(b: Bridge, step: Step) -> None:
    """Run the pending-ack store's ("pas-delete", seg, sub, txn) task: its ACK ops' delete."""
    _run_stage(b, step, "pas-delete", step.params["seg"], "sub", step.tid)
