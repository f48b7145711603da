"""What the engines share, below the engines and the reductions: the explored
state space with its exact visited set (`Exploration`), the TLC statistics
(`action_coverage`), and the outcome every exhaustive search reports
(`search_outcome`).

The exact visited set is a dict (state -> index): states are canonical
immutable values, so dict equality is state equality and there are no
fingerprint collisions. Stable fingerprints (`encoding.fingerprint`) are
computed only where a state leaves the process: graph nodes, traces,
checkpoints and Spark. See docs/adr/0001-state-encoding.md. The
fingerprint-only visited set (`--fingerprints`) subclasses `Exploration` in
checker/reductions/fingerprints.py.

Edges are kept as three compact integer arrays (source index, target index,
action id), one entry per generated successor, duplicates included. The
networkx `DiGraph` with fingerprint nodes is materialized from them on demand
(`Exploration.graph()`), which keeps the hot loop free of networkx calls.
"""

from __future__ import annotations

import gc
import resource
from array import array
from contextlib import contextmanager
from typing import TYPE_CHECKING

from .encoding import Fingerprinter
from .job import Outcome, Path, Verdict, Violation, ViolationKind

if TYPE_CHECKING:
    from ..spec.api import Spec


class Exploration:
    """The explored state space: states, parent pointers and edge arrays."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.states: list = []
        self.index: dict = {}
        self.parent = array("q")
        self.parent_action = array("q")
        self.src = array("L")
        self.dst = array("L")
        self.act = array("L")
        self.actions: list = []  # action id -> action
        self.action_ids: dict = {}
        self.levels: list[int] = []  # start index of each BFS level
        self.edges_kept = True
        self._fps: list[int] | None = None

    def path_to(self, j: int) -> Path:
        out = []
        while j >= 0:
            a = self.parent_action[j]
            out.append((self.actions[a] if a >= 0 else None, self.states[j]))
            j = self.parent[j]
        out.reverse()
        return out

    def fingerprints(self) -> list[int]:
        if self._fps is None or len(self._fps) != len(self.states):
            self._fps = list(map(Fingerprinter(), self.states))
        return self._fps

    def graph(self, max_depth: int | None = None):
        """The state graph as a networkx DiGraph: fingerprint nodes, and edges
        labelled with the list of actions that connect the two states."""
        import networkx as nx

        if not self.edges_kept:
            raise RuntimeError("the state graph was not kept for this run (it outgrew the graph limit)")
        fps = self.fingerprints()
        limit = len(self.states)
        if max_depth is not None and max_depth < len(self.levels):
            limit = self.levels[max_depth]
        g = nx.DiGraph()
        for i in range(limit):
            g.add_node(fps[i], index=i, initial=self.parent[i] < 0)
        labels = [format_action(a) for a in self.actions]
        for s, d, a in zip(self.src, self.dst, self.act):
            if s >= limit or d >= limit:
                continue
            u, v = fps[s], fps[d]
            data = g.get_edge_data(u, v)
            if data is None:
                g.add_edge(u, v, actions=[labels[a]])
            elif labels[a] not in data["actions"]:
                data["actions"].append(labels[a])
        return g


def format_action(a) -> str:
    name, params = a
    if not params:
        return name
    return f"{name}(" + ", ".join(f"{k}={v}" for k, v in params) + ")"


def action_coverage(actions: list, generated_by_aid, parent_action) -> dict[str, dict[str, int]]:
    """Per action name, sorted: successors generated, and distinct states
    first reached by it (from the parent-action array)."""
    coverage: dict[str, dict[str, int]] = {}
    for aid, n in generated_by_aid.items():
        c = coverage.setdefault(actions[aid][0], {"generated": 0, "distinct": 0})
        c["generated"] += n
    for aid in parent_action:
        if aid >= 0:
            coverage.setdefault(actions[aid][0], {"generated": 0, "distinct": 0})["distinct"] += 1
    return dict(sorted(coverage.items()))


def peak_memory_mb() -> float:
    """This process's peak resident memory in MiB: Linux's VmHWM, the peak of
    its own address space. ru_maxrss would do elsewhere, but on Linux a
    process started from a larger one inherits that one's peak in it (exec
    keeps the old address space's high-water mark): a run started by pytest
    or a bench would report their memory."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


@contextmanager
def gc_paused():
    """States are acyclic tuples: the cyclic GC would only rescan millions of
    long-lived objects (10-20% of a PIP-473 run), so it is off while exploring
    (in forked workers too, which inherit the setting)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def search_outcome(*, violation: Violation | None, incomplete: str | None, found_witnesses: dict[str, bool],
                   **figures) -> Outcome:
    """The outcome of an exhaustive search: the violation found, else every
    witness never seen (only when the search finished), and the verdict."""
    violations = [violation] if violation else []
    if violation is None and incomplete is None:
        violations += [Violation(n, ViolationKind.WITNESS) for n, ok in found_witnesses.items() if not ok]
    verdict = Verdict.VIOLATION if violations else (Verdict.INCOMPLETE if incomplete else Verdict.OK)
    return Outcome(verdict=verdict, violations=violations, incomplete_reason=incomplete,
                   witnesses_found=found_witnesses, **figures)
