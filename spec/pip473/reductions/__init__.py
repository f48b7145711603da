"""The reductions' contracts with the checker for PIP-473: footprints for
partial-order reduction (--por), plan classes and renaming for symmetry
(--symmetry). Each is audited on reachable states by its test."""
