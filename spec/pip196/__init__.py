"""PIP-196: the transaction buffer's aborted-txn list persisted as immutable
snapshot segments plus an index record, and its crash recovery."""
