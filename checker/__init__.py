"""The engines, the invariant compiler, reports and the txncheck CLI; nothing protocol-specific."""
