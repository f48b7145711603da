"""A deliberately broken reference implementation, for the divergence example
of docs/guide.md ("Reading a divergence").

tests/docs_examples.py's `broken-pending-ack` setup puts this folder on
PYTHONPATH for that example's commands, so Python imports this module at
start-up. It makes the pending-ack store check the txn's header with a
store read before it takes an ack, where the merged variant takes it without
a check (the spec admits it from the header the broker cached): the spec and
the implementation then disagree, and replay reports where. It is the patch
of tests/test_replay_pip473.py's test_divergence_names_the_step_and_the_fields.
"""

from txncheck.reference.pending_ack import MetadataPendingAckStore

_original = MetadataPendingAckStore._ack   # an AttributeError here fails the example: the patch is stale


def _store_first(self, req):
    if self.cache.read(req.txn) != "OPEN":
        req.stage, req.result = "rejected", "TxnConflict"
        req.done(req)
        return
    _original(self, req)


MetadataPendingAckStore._ack = _store_first
