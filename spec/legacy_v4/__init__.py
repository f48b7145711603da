"""Legacy (v4) Pulsar transactions: commit/abort markers written into each
segment's own ledger, and why sealing a segment mid-transaction stalls them."""
