"""PIP-473's components as the PIP names them (the TC, the transaction buffer,
the pending-ack store, the dispatcher, the store and its indexes, segments):
the action bodies, each computing one step of the state (spec.py's module map)."""
