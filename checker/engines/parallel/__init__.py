"""`bfs --workers N`: the bfs search with each BFS level expanded by N forked
worker processes, for machines with more than one core.

* The coordinator (this process) owns the visited set: 64-bit stable
  fingerprints with parent pointers, as `--fingerprints` keeps them, so a
  counterexample is rebuilt the same way, by re-executing the spec.
* A worker holds its part of the current level. It expands it in batches,
  looks each successor up in the coordinator's table (the levels before)
  and in its own table of the level, and checks and keeps the new ones as
  rows; the coordinator and the other workers read its table through
  `memfd`, and it writes its parent pointers to the trail. Between the
  coordinator and a worker travel JSON headers (wire.py declares every
  command and reply: counts, CPU seconds, paths, an error's text) and
  arrays of integers (fingerprints, rows; actions as literals, read back
  with `ast.literal_eval`). Nothing is pickled.
* At the end of a level the coordinator keeps the fingerprints it had not
  seen. A new state stays with a worker that proposed it. The workers
  decide in turn (`worker.share`): each drops what an earlier one kept,
  keeps what no later one proposed, and of the states that a later worker
  proposed too keeps the first ones of its order, as many as its quota
  (`worker.quotas`: what makes the next level's parts cost the same, from
  each worker's CPU seconds per state in the level just expanded). Keeping
  a run of a worker's order keeps families of states together, so the
  other worker seldom generates them too. When the parts would still cost
  more than 2% apart, the heaviest worker gives the tail of its part to
  the lightest (`moves.py`: encoded values through a file, checked as
  untrusted input by the taker).
* A worker only knows the states it holds, so it canonicalizes, numbers
  and fingerprints some successors that another worker holds; keeping
  families together makes them few (docs/performance.md has the figures).
* Levels are synchronized, so depth and the shortest counterexample are as
  in bfs, and the counts of a complete run are bfs's. Which worker keeps a
  state depends on the measured CPU times, so of several shortest
  counterexamples two runs may report different ones.
* The search starts in process and forks the workers once a level holds
  `SPLIT_AT` states (and two per worker), so small models never fork.

The parts: `worker.py` (a worker's part of a level, and its loop),
`wire.py` (the messages), `moves.py` (states moved between workers),
`coordinator.py` (the visited set, the levels, the outcome).
"""

from __future__ import annotations

from ...exploration import gc_paused
from ...job import Job, Outcome
from .coordinator import Coordinator


def run(job: Job) -> Outcome:
    """`bfs --workers N`, N > 1 (checker.engines chooses it)."""
    job.validate("bfs")
    with gc_paused():
        return Coordinator(job).run()
