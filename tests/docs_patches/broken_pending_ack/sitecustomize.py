"""A deliberately broken reference implementation, for the divergence example
of docs/guide.md ("Reading a divergence").

tests/docs_examples.py's `broken-pending-ack` setup puts this folder on
PYTHONPATH for that example's commands, so Python imports this module at
start-up and installs store_first.py's pending-ack store, which checks the
txn's header before it takes an ack (the spec admits it from the header the
broker cached): the spec and the implementation then disagree, and replay
reports where.
"""

from store_first import store_first

from txncheck.reference.pending_ack import MetadataPendingAckStore

# an AttributeError here fails the example: the patch is stale
MetadataPendingAckStore._ack = store_first(MetadataPendingAckStore._ack)
