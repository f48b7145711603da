"""The table of PIP-473 actions: each spec action (spec/pip473/ACTIONS.md)
with its parameters, which `Pip473Bridge.validate` checks on an untrusted
trace, and the handler that drives it into `reference/`.

A handler is `handler(bridge, step)`. It drives the implementation through
the same step or raises `StepRefused` (the replay's divergence) when the
implementation cannot take it. Each handler's docstring says what it calls.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

from . import brokers, controller, coordinator, sends
from .step import Bridge, Step


class Action(NamedTuple):
    params: dict[str, type]
    handler: Callable[[Bridge, Step], None]
    optional: dict[str, type] = {}   # parameters a label may leave out (sub: sub1 unless named)


SUBSCRIPTION = {"sub": str}


SEND = {"op": str, "txn": str, "seg": str}

TABLE: dict[str, Action] = {
    # the client's sends and acks
    "publishCheck": Action(SEND, sends.publish_check),
    "publishPutOp": Action(SEND, sends.publish_put_op),
    "publishValidate": Action(SEND, sends.publish_validate),
    "publishAppend": Action(SEND, sends.publish_append),
    "publishOpFails": Action(SEND, sends.publish_op_fails),
    "publishPlain": Action({"op": str, "seg": str}, sends.publish_plain),
    "appendAck": Action({"op": str, "txn": str, "seg": str, "pos": int, "cumulative": bool}, sends.append_ack,
                        SUBSCRIPTION),
    # the coordinator and the clock
    "newTxn": Action({"txn": str}, coordinator.new_txn),
    "endTxn": Action({"txn": str, "decision": str}, coordinator.end_txn),
    "tcFinalize": Action({"txn": str}, coordinator.tc_finalize),
    "tcList": Action({"txn": str}, coordinator.tc_list),
    "tcPublish": Action({"txn": str}, coordinator.tc_publish),
    "timeoutSweep": Action({"txn": str}, coordinator.timeout_sweep),
    "gcSweep": Action({"txn": str}, coordinator.gc_sweep),
    "tick": Action({}, coordinator.tick),
    "tcFailover": Action({}, coordinator.tc_failover),
    # one participant broker
    "deliverEvent": Action({"seg": str}, brokers.deliver_event),
    "deliverAckEvent": Action({"seg": str}, brokers.deliver_ack_event, SUBSCRIPTION),
    "crash": Action({"seg": str}, brokers.crash),
    "recover": Action({"seg": str}, brokers.recover),
    "recoverWatermark": Action({"seg": str}, brokers.recover_watermark),
    "recoverAborted": Action({"seg": str}, brokers.recover_aborted),
    "recoverComplete": Action({"seg": str}, brokers.recover_complete),
    "dispatch": Action({"seg": str}, brokers.dispatch, SUBSCRIPTION),
    "trimLedger": Action({"seg": str}, brokers.trim_ledger),
    "pruneAborted": Action({"seg": str}, brokers.prune_aborted),
    # the segment controller's split or merge
    "createChildren": Action({}, controller.create_children),
    "terminateParents": Action({}, controller.terminate_parents),
    "casSegmentMetadata": Action({}, controller.cas_segment_metadata),
}

# action -> {param: type}
ACTIONS: dict[str, dict[str, type]] = {name: a.params for name, a in TABLE.items()}
