"""`bfs --workers N`: the bfs search with each BFS level expanded by N forked
worker processes, for machines with more than one core.

* The coordinator (this process) owns the visited set: 64-bit stable
  fingerprints with parent pointers, as `--fingerprints` keeps them, so a
  counterexample is rebuilt the same way, by re-executing the spec.
* A worker holds its part of the current level. It expands it in batches,
  drops the successors equal to a state it holds, fingerprints the rest and
  sends (fingerprint, parent, action) to the coordinator. States never cross
  a process boundary; only integers do (actions as literals, read back
  with `ast.literal_eval`). Nothing is pickled.
* At the end of a level the coordinator keeps the fingerprints it had not
  seen. A new state stays with a worker that generated it; one that several
  generated goes to the one with most steps into it, within its share of
  the level (`assign`): shares are in inverse proportion to each worker's
  cost per state in the level just expanded (`shares`). Each worker then
  checks the invariants and witnesses on its new part.
* A worker only knows the states it holds, so it canonicalizes and
  fingerprints some successors that the other workers hold. The first
  split gives each worker a contiguous slice of the level, and `assign`
  keeps a shared state with most of its parents, so siblings, and most
  duplicates, stay together. On the first 2.7 million states of the larger
  PIP-473 model that is 1.37 fingerprints per new state (1.63 when shared
  states went to the worker holding fewest; 1.0 in process).
* Levels are synchronized, so depth and the shortest counterexample are as
  in bfs, and the run is deterministic: the states of a level, their ids and
  the reported violation (the lowest id) do not depend on timing.
* The search starts in process and forks the workers once a level holds
  `SPLIT_AT` states (and two per worker), so small models never fork.

The parts: `worker.py` (a worker's part of a level, and its loop),
`wire.py` (the messages), `assignment.py` (which worker keeps which new
state), `coordinator.py` (the visited set, the levels, the outcome).
"""

from __future__ import annotations

from ...exploration import gc_paused
from ...job import Job, Outcome
from .assignment import assign, shares  # noqa: F401 - tests call them as parallel.assign / parallel.shares
from .coordinator import Coordinator


def run(job: Job) -> Outcome:
    """`bfs --workers N`, N > 1 (checker.engines chooses it)."""
    job.validate("bfs")
    with gc_paused():
        return Coordinator(job).run()
