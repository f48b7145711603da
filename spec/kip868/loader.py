"""The broker's metadata loader (KIP-868 "Record Visibility").

Records are applied to a pending delta and a new image is published only
outside a transaction, as Kafka's MetadataBatchLoader does:

* `load_batch` replays one committed batch record by record. A Begin that is
  not the very first record since the last publish first publishes what is
  pending, so records that precede a transaction never wait for it.
* `flush` runs once after each commit callback: it publishes the delta when
  no transaction is open, publishes an empty change when the last marker
  was an Abort (so the offset moves on), and publishes nothing while a
  transaction is open.

The two variants differ only in what an Abort does to the pending delta:
`kafka-loader` keeps it (the delta is dropped only by the next publish of an
empty change, at flush); `clearing-loader` clears it at once. `dropping`
(the spec's `dropping-loader`, a deliberately broken loader) clears it on
End as well, so a committed transaction never reaches the image: it keeps
every safety property and must fail the completeness one.
"""

from __future__ import annotations

from typing import NamedTuple

from .records import ABORT, BEGIN, END

NONE, STARTED, CONTINUED, ENDED, ABORTED = "none", "started", "continued", "ended", "aborted"
IN_TXN = (STARTED, CONTINUED)


class Loader(NamedTuple):
    txn_state: str            # MetadataBatchLoader.TransactionState
    delta: frozenset          # records applied since the last publish
    pending: bool             # a batch was loaded since the last publish (numBatches > 0)
    image: frozenset          # the published MetadataImage (data records)
    image_offset: int         # its last contained offset
    loaded: int               # batches handed to the loader so far
    fault: str                # the first replay error, "" if none


INITIAL = Loader(NONE, frozenset(), False, frozenset(), -1, 0, "")


def _publish(ld: Loader, delta: frozenset, offset: int, published: list) -> Loader:
    published.append(delta - ld.image)
    return ld._replace(txn_state=NONE, delta=frozenset(), pending=False,
                       image=ld.image | delta, image_offset=offset)


def _replay(ld: Loader, rec: tuple, clearing: bool, dropping: bool = False) -> Loader:
    kind, st = rec[0], ld.txn_state
    if kind == BEGIN:
        if st in IN_TXN:
            return _fault(ld, f"nested Begin(t{rec[1]})")
        return ld._replace(txn_state=STARTED)
    if kind == END:
        if st not in IN_TXN:
            return _fault(ld, f"End(t{rec[1]}) without Begin")
        return ld._replace(txn_state=ENDED, delta=frozenset() if dropping else ld.delta)
    if kind == ABORT:
        if st not in IN_TXN:
            return _fault(ld, f"Abort(t{rec[1]}) without Begin")
        if clearing:
            return ld._replace(txn_state=ABORTED, delta=frozenset())
        return ld._replace(txn_state=ABORTED)
    # a metadata record
    if st == STARTED:
        st = CONTINUED
    elif st in (ENDED, ABORTED):
        st = NONE
    return ld._replace(txn_state=st, delta=ld.delta | {rec})


def _fault(ld: Loader, msg: str) -> Loader:
    return ld if ld.fault else ld._replace(fault=msg)


def load_batch(ld: Loader, batch: tuple, base_offset: int, clearing: bool, published: list,
               dropping: bool = False) -> Loader:
    """MetadataBatchLoader.loadBatch: replay one batch; `published` collects
    the deltas of any images published on the way."""
    for index, rec in enumerate(batch):
        ld = _replay(ld, rec, clearing, dropping)
        if ld.txn_state == STARTED and (index > 0 or ld.pending):
            # Publish what preceded the Begin, then carry on inside the transaction.
            ld = _publish(ld, ld.delta, base_offset + index - 1, published)._replace(txn_state=STARTED)
    return ld._replace(pending=True, loaded=ld.loaded + 1)


def flush(ld: Loader, last_offset: int, published: list) -> Loader:
    """MetadataBatchLoader.maybeFlushBatches, after each commit callback."""
    st = ld.txn_state
    if st in IN_TXN:
        return ld
    if st == ABORTED:
        return _publish(ld, frozenset(), last_offset, published)
    return _publish(ld, ld.delta, last_offset, published)

