"""Handlers of the client's sends and acks: a transactional send runs its
request's stages one task at a time (check, op, validate, append), a plain
send and an ack run whole."""

from __future__ import annotations

from ...reference.records import OPEN
from ..replay import StepRefused
from .conventions import sub_of
from .step import Bridge, Step


def publish_check(b: Bridge, step: Step) -> None:
    """cluster.send(key, txn), then run the request's ("publish", seg, req, "check") task."""
    op, seg = step.params["op"], step.params["seg"]
    w = b.writes[op]
    req = b.cluster.send(w.key, step.tid)
    if req is None:
        raise StepRefused(f"no ACTIVE segment with an up broker for key {w.key}")
    if req.segment != seg:
        raise StepRefused(f"key {w.key} routes to {req.segment}, the spec routed it to {seg}")
    b.requests[op] = req
    b.run("publish", req.segment, req.rid, "check")
    if req.stage == "read" and (not b.spec.check_steps or req.answer != OPEN):
        # the spec joins the read's callback with the read (check = atomic), and a
        # decided answer's callback (a terminal entry, then the rejection) with it always
        b.run("publish", req.segment, req.rid, "cache")
    if req.stage == "checked" and not b.behaviour.validate_after_op:
        b.note_admission(step.txn)


def publish_cache(b: Bridge, step: Step) -> None:
    """check = steps: run the request's "cache" task, its header read's callback."""
    req = _sent(b, step.params["op"])
    b.run("publish", step.params["seg"], req.rid, "cache")


def _sent(b: Bridge, op: str):
    req = b.requests.get(op)
    if req is None:
        raise StepRefused(f"{op} was never sent")
    return req


def publish_put_op(b: Bridge, step: Step) -> None:
    """Run the request's "op" stage: the op record's sequential put."""
    req = _sent(b, step.params["op"])
    b.run("publish", step.params["seg"], req.rid, "op")


def publish_validate(b: Bridge, step: Step) -> None:
    """Run the request's "validate" stage (fixed F1: the header re-read after the op put)."""
    req = _sent(b, step.params["op"])
    b.run("publish", step.params["seg"], req.rid, "validate")
    if req.stage == "valid":
        b.note_admission(step.txn)


def publish_append(b: Bridge, step: Step) -> None:
    """Run the request's "append" stage, then the ledger's add completion unless
    it was rejected, and (track = atomic) the add's callback."""
    req = _sent(b, step.params["op"])
    b.run("publish", step.params["seg"], req.rid, "append")
    if req.stage != "rejected":
        b.run("ledger-add", step.params["seg"])
    if req.stage == "added" and not b.spec.track_steps:
        b.run("append-callback", step.params["seg"], req.rid)


def publish_track(b: Bridge, step: Step) -> None:
    """Run the ("append-callback", seg, request) task: the add's callback (track = steps)."""
    req = _sent(b, step.params["op"])
    b.run("append-callback", step.params["seg"], req.rid)


def publish_op_fails(b: Bridge, step: Step) -> None:
    """The metadata store fails the request's op put: run its "op" stage with the failure set."""
    req = _sent(b, step.params["op"])
    req.op_write_fails = True
    b.run("publish", step.params["seg"], req.rid, "op")


def publish_plain(b: Bridge, step: Step) -> None:
    """cluster.publish(key), then its ("ledger-add", seg) task, and (sync =
    atomic) the ("plain-sync", seg) task of its callback, which syncs the
    buffer's read position. Plain sends go in plan order."""
    op, want = step.params["op"], step.params["seg"]
    if op != f"n{b.plain_sent + 1}":
        raise StepRefused(f"{op} is not the next non-transactional send")
    seg = b.cluster.publish(b.plain[op])
    if seg != want:
        raise StepRefused(f"{op} routes to {seg}, the spec routed it to {want}")
    b.run("ledger-add", seg)
    if not b.spec.sync_steps:
        b.run("plain-sync", seg)
    b.plain_sent += 1


def append_ack(b: Bridge, step: Step) -> None:
    """cluster.ack(...) of an entry the consumer received, then run ("ack", seg, sub, req)."""
    seg, pos, sub = step.params["seg"], step.params["pos"] - 1, sub_of(step.params)
    broker = b.live_broker(seg)
    if broker.dispatchers[sub].cursor.read_position <= pos:
        raise StepRefused(f"the consumer has not received entry {pos} of {seg}")
    req = b.cluster.ack(seg, step.tid, pos, step.params["cumulative"], sub)
    b.requests[step.params["op"]] = req
    b.run("ack", seg, sub, req.rid)
    if req.stage in ("done", "op"):   # admitted ("op": merged with apply = steps, its put done)
        b.note_admission(step.txn)


def append_ack_open(b: Bridge, step: Step) -> None:
    """merged, apply = steps: run the ack request's ("ack-open", seg, sub, req) task: the put completed,
    the txn joins the store's open set."""
    req = _sent(b, step.params["op"])
    b.run("ack-open", step.params["seg"], sub_of(step.params), req.rid)
