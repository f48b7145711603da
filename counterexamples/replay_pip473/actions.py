"""The table of PIP-473 actions: each spec action (spec/pip473/catalog.py)
with its parameters, which `Pip473Bridge.validate` checks on an untrusted
trace, and the handler that drives it into `reference/`.

A handler is `handler(bridge, step)`. It drives the implementation through
the same step or raises `StepRefused` (the replay's divergence) when the
implementation cannot take it. Each handler's docstring says what it calls.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

from ...spec.pip473 import catalog
from . import brokers, controller, coordinator, sends
from .step import Bridge, Step


class Action(NamedTuple):
    params: dict[str, type]
    handler: Callable[[Bridge, Step], None]
    optional: dict[str, type] = {}   # parameters a label may leave out (sub: sub1 unless named)


# spec action -> its handler; the parameters come from the spec's catalog
# (spec/pip473/catalog.py), and tests/test_replay_pip473.py checks that every
# action there has a handler here and no handler is left over.
HANDLERS: dict[str, Callable[[Bridge, Step], None]] = {
    # the client's sends and acks
    "publishCheck": sends.publish_check,
    "publishCache": sends.publish_cache,
    "publishPutOp": sends.publish_put_op,
    "publishValidate": sends.publish_validate,
    "publishAppend": sends.publish_append,
    "publishOpFails": sends.publish_op_fails,
    "publishTrack": sends.publish_track,   # bound track = steps
    "publishPlain": sends.publish_plain,
    "plainSync": brokers.plain_sync,   # bound sync = steps
    "appendAck": sends.append_ack,
    "appendAckOpen": sends.append_ack_open,
    # the coordinator and the clock
    "newTxn": coordinator.new_txn,
    "endTxn": coordinator.end_txn,
    "tcFinalize": coordinator.tc_finalize,
    "tcList": coordinator.tc_list,
    "tcPublish": coordinator.tc_publish,
    "tcPublishTo": coordinator.tc_publish_to,
    "timeoutSweep": coordinator.timeout_sweep,
    "gcSweep": coordinator.gc_sweep,
    "tick": coordinator.tick,
    "tcFailover": coordinator.tc_failover,
    # one participant broker
    "deliverEvent": brokers.deliver_event,
    "deliverAckEvent": brokers.deliver_ack_event,
    "crash": brokers.crash,
    "unload": brokers.unload,
    "recover": brokers.recover,
    "recoverWatermark": brokers.recover_watermark,
    "recoverAborted": brokers.recover_aborted,
    "recoverComplete": brokers.recover_complete,
    "recoverAcks": brokers.recover_acks,
    "dispatch": brokers.dispatch,
    "trimLedger": brokers.trim_ledger,
    "pruneAborted": brokers.prune_aborted,
    # bound apply = steps: the stages of a decision's apply, live or closed instance
    "reconcileRead": brokers.reconcile_read,
    "applyAbortedRecord": brokers.apply_aborted_record,
    "applyWatermark": brokers.apply_watermark,
    "plainWatermark": brokers.plain_watermark,
    "applyDeleteOps": brokers.apply_delete_ops,
    "ackReconcileRead": brokers.ack_reconcile_read,
    "ackDeleteOps": brokers.ack_delete_ops,
    # the segment controller's split or merge
    "createChildren": controller.create_children,
    "terminateParents": controller.terminate_parents,
    "casSegmentMetadata": controller.cas_segment_metadata,
}

TABLE: dict[str, Action] = {a.name: Action(dict(a.params), HANDLERS[a.name], dict(a.optional))
                            for a in catalog.ACTIONS if a.name in HANDLERS}

# action -> {param: type}
ACTIONS: dict[str, dict[str, type]] = {name: a.params for name, a in TABLE.items()}
