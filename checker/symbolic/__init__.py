"""Symbolic checking with a spec's transition relation in Z3 (spec/symbolic.py):
the agreement of the relation with the spec (`agreement`), proofs by
induction with counterexamples to induction (`induction`), and bounded
checking to a depth (`bounded`). `txncheck prove` is the command."""
