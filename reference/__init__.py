"""The reference implementation of PIP-473: executable models of the real
components, shaped like Pulsar's classes rather than like the spec.

    store/               MetadataStore interface, in-memory backend, watch styles
    scheduler.py         deterministic scheduler and simulated clock
    ledger.py            ManagedLedger, cursors (mark-delete, individual acks)
    header_cache.py      a broker's txn-header cache and how it learns decisions
    transaction_buffer.py  MetadataTransactionBuffer (publish path, max read position)
    pending_ack.py       MetadataPendingAckStore
    coordinator.py       TransactionCoordinatorV5 (end-txn, timeout and GC sweeps)
    dispatcher.py        the unchanged dispatcher, and the consumer
    segment_controller.py  split/merge in PIP-468 order
    broker.py            one participant broker: crash and recovery
    cluster.py           a whole deployment on one scheduler
    behaviour.py         pip-text, merged, fixed as flags

It knows nothing of the spec; `counterexamples/replay_pip473/` maps spec
actions onto it.
"""
