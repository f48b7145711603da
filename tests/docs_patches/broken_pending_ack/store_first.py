"""The deliberate break shared by the divergence example of docs/guide.md
(through sitecustomize.py here) and tests/test_replay_pip473.py's
test_divergence_names_the_step_and_the_fields: a pending-ack store that
checks the txn's header with a store read before it takes an ack, where the
merged variant takes it with no check."""


def store_first(original):
    """Wrap MetadataPendingAckStore._ack (`original`) with the header check."""
    def ack(self, req):
        if self.cache.read(req.txn) != "OPEN":
            req.stage, req.result = "rejected", "TxnConflict"
            req.done(req)
            return
        original(self, req)
    return ack
