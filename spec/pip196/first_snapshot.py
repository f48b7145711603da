"""The window while TopicTransactionBuffer writes its first snapshot (bound
`first_snapshot_window`, variant merged), as apache/pulsar@001c89c2cb1a
TopicTransactionBuffer.java has it:

  * appendBufferToTxn (L300-L410): while the buffer is NoSnapshot (or a
    first snapshot is being written) a transactional append is queued in
    `pendingAppendingTxnBufferTasks`; the first such append moves the
    buffer to FirstSnapshotting and calls takeFirstSnapshot() (L383-L396),
    which writes the index (L412-L432) and turns the buffer Ready; then the
    queued appends are issued in order (flushPendingTasks, L339-L374).
  * abortTxn (L527-L576) writes no abort marker when the buffer is not
    Ready ("no message sent, need not to add abort mark by txn timeout",
    L534-L538), and so records no low water mark either; commitTxn
    (L484-L524) writes its marker in any state.
  * internalAppendBufferToTxn (L435-L460) rejects the append of a txn at or
    below the low water mark the buffer recorded; otherwise the entry lands
    and handleTransactionMessage (L462-L471) tracks it as ongoing unless it
    is known aborted, which holds maxReadPosition before it.
  * handleLowWaterMark (L584-L612), run after a marker is written, aborts
    the first ongoing txn if it is at or below the recorded low water mark.
  * getMaxReadPosition returns EARLIEST while the first snapshot is written
    (read at apache/pulsar@000d1f2bfc56; not re-read at 001c89c2).

So an abort that reaches the topic while the append of the same txn is
queued (or still on its way) leaves no trace, and the append then lands as
an ongoing txn that nothing ends: the read position stays before it until a
later txn of the same coordinator ends on this topic with a low water mark
at or above it. `NoEndedTxnHoldsRead` states that no txn whose end request
on this topic completed (so the coordinator will not send it again) holds
the read position. Bound `late_sends` lets the coordinator's
abort (its timeout) reach the topic before the send does. A commit (bound
`commits`) reaching the topic while the append is queued, which only a client
that commits before its send completes can cause, writes its marker before
the entry lands and pins the read position the same way. Bound
`end_waits_first_snapshot` is a candidate fix: an end that finds the buffer
not Ready is queued behind the pending appends (starting the first snapshot
if none runs) and writes its marker once the buffer is Ready; it completes
the coordinator's request only then, so an end lost with the queue in a
crash is sent again by the coordinator's retry (TxnEndRetry).

Modelling choices: the queued appends land in one step once the snapshot
is written (the flush issues them under one lock, so no marker can come
between them); the coordinator's low water mark is the largest k such that
every txn up to k has ended, taken before the ending txn is removed.
"""

from __future__ import annotations

ABORT_TASK, COMMIT_TASK, WRITE_TASK = "A", "C", "W"
FIRST = "first-snapshotting"   # TopicTransactionBuffer's FirstSnapshotting state


def tc_low_water_mark(tc_ended: frozenset, workload: tuple) -> int:
    """The coordinator's low water mark: every txn up to it has ended."""
    k = 0
    for t in workload:
        if t not in tc_ended:
            break
        k = t
    return k


def land(spec, s, tasks):
    """flushPendingTasks: the queued appends (and, with the fix, ends) in order."""
    for kind, t, lwm in tasks:
        if kind == ABORT_TASK:
            s = spec.abort_marker(s, t, lwm)
        elif kind == COMMIT_TASK:
            s = spec.commit_marker(s, t, lwm)
        elif t > s.lwm:
            s = spec.append_data(s, t)
        # else: internalAppendBufferToTxn rejects a txn at or below the low water mark
    return s


def _queue(s, task):
    nxt = s._replace(pending=s.pending + (task,))
    if s.phase != FIRST:  # the first queued task starts the first snapshot, which captures maxReadPosition now
        nxt = nxt._replace(phase=FIRST, snap=(s.unsealed, s.max_read))
    return nxt


def window_steps(spec, s):
    """Steps of a buffer that is NoSnapshot or writing its first snapshot."""
    c = spec.constants
    for t in spec.workload:
        if t not in s.sent:
            # appendBufferToTxn: queued.
            yield spec.a_write[t], _queue(s._replace(sent=s.sent | {t}), (WRITE_TASK, t, 0))
        decisions = ()
        if t not in s.tc_ended and (t in s.sent or c["late_sends"]):
            decisions = ("commit", "abort") if c["commits"] and t in s.sent else ("abort",)
        for d in decisions:
            ended = s._replace(tc_ended=s.tc_ended | {t})
            lwm = tc_low_water_mark(s.tc_ended, spec.workload)
            if c["end_waits_first_snapshot"]:
                yield spec.a_end[(t, d)], _queue(ended, (COMMIT_TASK if d == "commit" else ABORT_TASK, t, lwm))
            elif d == "commit":
                # commitTxn writes its marker whatever the state, then handleLowWaterMark.
                yield spec.a_end[(t, d)], spec.commit_marker(ended, t, lwm)
            else:
                # "no message sent": no marker, no low water mark; the request completes
                yield spec.a_end[(t, d)], ended._replace(acked=s.acked | {t})
    if s.phase == FIRST:
        # takeFirstSnapshot: the index record is written, the buffer is Ready, the
        # queued tasks are issued.
        ready = spec.write_index(s, s.snap)._replace(phase="ready", snap=None, pending=())
        yield spec.a["FirstSnapshotWritten"], land(spec, ready, s.pending)


def low_water_mark_abort(spec, s):
    """handleLowWaterMark after a marker: abort the first ongoing txn at or
    below the recorded low water mark."""
    if s.ongoing and s.ongoing[0][0] <= s.lwm:
        t = s.ongoing[0][0]
        yield spec.a_lwm_abort[t], spec.abort_marker(s, t, s.lwm)


def end_retries(spec, s):
    """With the fix: the coordinator re-sends an abort that no marker recorded
    and no queue holds (its request failed when a crash lost the queue)."""
    marked = {t for k, t, _ in s.ledger if k not in ("D", "N")}
    queued = {t for k, t, _ in s.pending if k != WRITE_TASK}
    for t in sorted(s.tc_ended - marked - queued):
        lwm = tc_low_water_mark(s.tc_ended - {t}, spec.workload)
        if s.phase == "ready":
            yield spec.a_end_retry[t], spec.abort_marker(s, t, lwm)
        else:
            yield spec.a_end_retry[t], _queue(s, (ABORT_TASK, t, lwm))
