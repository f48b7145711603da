"""PIP-473's data model in the metadata store ("Detailed Design / Data Model"):
paths, record shapes and the four secondary indexes, plus the records the
merged code adds (event streams, aborted records, max-read watermarks).

Every txn record is co-located under `partitionKey = txnId`.
"""

from __future__ import annotations

from .store import Index, MetadataStore

OPEN, COMMITTED, ABORTED = "OPEN", "COMMITTED", "ABORTED"
TERMINAL = (COMMITTED, ABORTED)


def header_path(txn: str) -> str:
    return f"/txn/{txn}"


def ops_prefix(txn: str) -> str:
    return f"/txn-op/{txn}/"


def txn_of_op(path: str) -> str:
    return path.split("/")[2]


def segment_events(segment: str) -> str:
    return f"/txn-events/segment/{segment}/"


def subscription_events(segment: str, subscription: str) -> str:
    return f"/txn-events/subscription/{segment}/{subscription}/"


def aborted_prefix(segment: str) -> str:
    return f"/txn-aborted/{segment}/"


def watermark_path(segment: str) -> str:
    return f"/txn-watermark/{segment}"


def segment_path(segment: str) -> str:
    return f"/segments/{segment}"


COUNTER_PATH = "/txn-coordinator/next-id"

WRITES_BY_SEGMENT = Index(
    "writes-by-segment", "/txn-op/",
    lambda v: (v["segment"], v["txn"]) if v["kind"] == "write" else None)
ACKS_BY_SEGMENT_SUBSCRIPTION = Index(
    "acks-by-segment-subscription", "/txn-op/",
    lambda v: (v["segment"], v["subscription"], v["txn"]) if v["kind"] == "ack" else None)
TXN_BY_DEADLINE = Index(
    "txn-by-deadline", "/txn/",
    lambda v: (v["timeout_ms"], v["txn"]) if v["state"] == OPEN else None)
TXN_BY_FINAL_STATE = Index(
    "txn-by-final-state", "/txn/",
    lambda v: (v["state"], v["finalized_ms"], v["txn"])
    if v["state"] in TERMINAL and v["finalized_ms"] is not None else None)


def install_indexes(store: MetadataStore) -> None:
    for idx in (WRITES_BY_SEGMENT, ACKS_BY_SEGMENT_SUBSCRIPTION, TXN_BY_DEADLINE, TXN_BY_FINAL_STATE):
        store.add_index(idx)
