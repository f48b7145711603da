"""PIP-473's hand-written symbolic relation (Pip473Relation in relation.py),
which `prove` uses: the spec's actions as guarded updates of Z3 cells. It
imports the protocol's constants and the properties' table; the spec never
imports it (tests/test_layers.py)."""
