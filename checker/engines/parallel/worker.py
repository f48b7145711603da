"""A worker's side of the fingerprint search: its `Part` of a level, which it
expands in batches, checking each successor that is new, and the loop
(`serve`) a forked worker process runs.

Per batch of its level's states, a part generates the successors, numbers
their fields (`records.Fields`) and fingerprints them, drops repeats within
the batch, then asks the visited set (the levels before, read from the
coordinator's table) and its own table of this level's proposals (in one
process both are the coordinator's table, which the proposals join as they
come). A successor new to both is proposed: checked at once (invariants,
witnesses) and kept, as a row, in its proposals for the next level. At the
end of the level, a state that several workers proposed stays with one of
them (`share`), and the rest are dropped; the kept proposals become the
part's next level, and their parent pointers go to the trail on disk.
"""

from __future__ import annotations

import signal
import sys
import time
import traceback
from collections import Counter
from itertools import compress
from operator import is_not, itemgetter
from typing import Iterator

import numpy as np

from ....spec.api import Spec, SpecError
from ... import failures, reductions
from ...errors import CheckerError, explained
from ...exploration import peak_memory_mb
from ...job import Job
from ...verdicts import PartVerdicts, Verdicts, row_positions
from . import moves
from .records import Fields, Level, kept_rows, rows_of
from .table import FingerprintTable, contains_in, open_shared
from .trail import Trail
from .wire import Accepted, Batch, Closed, recv, send

BATCH = 1024  # states expanded between looks at the tables (and messages)
KEEP = 1 << 17  # rows of a level kept in memory before its chunks go to disk
MEMO = 1 << 16  # verdicts remembered per generation (checker/verdicts.py): PIP-473 reuses about one in ten


class Part:
    """One worker's part of the search: the level it expands, its proposals
    for the next, the field numbering of its states, its checks."""

    def __init__(self, job: Job, spec: Spec, folder: str) -> None:
        self.job, self.spec, self.folder, self.keep = job, spec, folder, KEEP
        self.worker = 0
        self.successors, self.canonical = reductions.representatives(spec)
        self.fields = Fields()
        self.action_ids: dict = {}
        self.new_actions: list[str] = []
        self.pending = set(job.witnesses)
        witness_check = job.witness_checker(self.pending) if self.pending else None
        self.verdicts = Verdicts(spec, job.invariant_checker(), witness_check, self.pending, limit=MEMO)
        self.trail = Trail(folder)
        self.level = Level(folder, "w0-l1", self.keep)
        self.depth = 1
        self.level_disk = 0  # bytes of this level's chunks on disk
        self.proposals: Level | None = None
        self.mine: FingerprintTable | None = None  # this level's proposals (or the visited set: `begin`)
        self.direct = False
        self.glob = None  # the visited set of the levels before: slots
        self.claimed: FingerprintTable | None = None  # what `accept` kept of what a later worker proposed
        por = reductions.por_layer(spec)
        if por is not None:
            por.seen = self._seen

    # -- the first level, and the split -------------------------------------------
    def seed(self, states, fps) -> None:
        """The initial states (distinct, checked by the caller) as this part's level."""
        self.level = Level(self.folder, "w0-l1", self.keep)
        for s, f in zip(states, fps):
            self.level.append(self.fields.row(s), f)
        self.level.close()

    def split(self, n: int) -> list["Part"]:
        """This part's level dealt into n parts, each with a copy of the rest
        (a forked process gets its own anyway)."""
        parts = []
        for w, level in enumerate(self.level.split(n, self.fields.widths)):
            part = object.__new__(Part)
            part.__dict__.update(self.__dict__)
            part.worker, part.level = w, level
            parts.append(part)
        return parts

    # -- expanding a level ---------------------------------------------------------
    def begin(self, glob_slots, shared: bool, visited: FingerprintTable | None = None) -> None:
        """Start expanding: `glob_slots` are the visited set's (the levels
        before); `shared`: other processes will read this level's proposals.
        In one process the caller passes its `visited` table instead, and
        the proposals go straight into it: no table of the level, no join."""
        self.glob = glob_slots
        self.proposals = Level(self.folder, f"w{self.worker}-l{self.depth + 1}", self.keep, trail=True)
        self.drop_table()
        self.direct = visited is not None
        self.mine = visited if self.direct else FingerprintTable(shared=shared)
        self.seq = 0  # successors generated in this level, for the order of what is found
        self.expanded = len(self.level)
        self.cpu0 = time.process_time()

    def expand(self, limit: int) -> Iterator[Batch]:
        """Expand this part's level, `limit` states at a time: yields a head
        per batch (counts, new actions, the first violation or deadlock
        found, the witnesses found), the last with done=True."""
        fields, verdicts, pending, mine = self.fields, self.verdicts, self.pending, self.mine
        nxt, canonical = self.successors, self.canonical
        number, fprint, state_of, ids, fkeys = fields.row, fields.fingerprint, fields.state, fields.ids, fields.keys
        action_ids, new_actions = self.action_ids, self.new_actions
        props = self.proposals
        assert mine is not None and props is not None, "begin() opened the level"
        deadlocks = self.job.deadlock
        left = len(self.level)
        vkey = None  # the observed fields' numbers in a row, the verdicts' key
        for chunk in self.level:
            rows = list(rows_of(chunk, fields.widths))
            fps = chunk.fps
            for lo in range(0, len(rows), limit):
                gen_aids: list[int] = []  # per successor of the batch, in order: its action id
                cand: dict = {}  # state -> (row, state, parent fp, action id, order, fp), first found
                deadlock = None
                seq0 = seq = self.seq
                for k in range(lo, min(lo + limit, len(rows))):
                    prow, pf = rows[k], fps[k]
                    s = state_of(prow)
                    stype, slen = type(s), len(s) if isinstance(s, tuple) else -1
                    n = 0
                    for a, t in nxt(s):
                        n += 1
                        aid = action_ids.get(a)
                        if aid is None:
                            aid = action_ids[a] = len(action_ids)
                            new_actions.append(repr(a))
                        gen_aids.append(aid)
                        if canonical is not None:
                            t = canonical(t)
                        if t in cand:  # found before in this batch: Python's equality is the rows'
                            continue
                        if canonical is not None:
                            row = number(t)
                            f = fprint(row)
                        elif type(t) is stype and len(t) == slen:  # fields.row's fast path, inline
                            row, f = prow.copy(), pf
                            for i in compress(range(slen), map(is_not, t, s)):
                                v = t[i]
                                x = ids[i].get(v)
                                if x is None:
                                    x = fields.number(i, v)
                                key = fkeys[i]
                                f ^= key[row[i + 1]] ^ key[x]  # the field's key swapped
                                row[i + 1] = x
                        else:
                            row = number(t, s, prow)
                            f = fprint(row)
                        cand[t] = (row, t, pf, aid, 2 * (seq + n), f)
                    seq += n
                    if n == 0 and deadlocks and deadlock is None:
                        deadlock = [pf, 2 * seq + 1]  # after the successors before it
                self.seq = seq
                left -= min(limit, len(rows) - lo)
                head: Batch = {"generated": seq - seq0, "coverage": Counter(gen_aids), "left": left, "done": False,
                               "violation": None, "deadlock": deadlock, "witnesses": [], "proposed": 0}
                found = []  # (order, witness)
                if cand:
                    items = list(cand.values())
                    keys = np.fromiter((c[5] for c in items), dtype=np.uint64, count=len(items))
                    idx = np.flatnonzero(~contains_in(self.glob, keys)) if self.glob is not None else np.arange(len(items))
                    idx = idx[mine.add(keys[idx])]
                    if vkey is None and idx.size:
                        vkey = self._verdicts_of_rows(items[idx[0]][1])
                    orders, new_aids = [], []
                    for i in idx.tolist():
                        row, t, pf, aid, g, _ = items[i]
                        f = int(keys[i])
                        props.append(row, f, pf, aid)
                        orders.append(g)
                        new_aids.append(aid)
                        bad, holds = vkey(row, t)  # type: ignore[misc]  # made above, idx being non-empty
                        if bad is not None and head["violation"] is None:
                            head["violation"] = [f, pf, aid, bad, g]
                        if pending:
                            for name in holds:
                                if name in pending:
                                    pending.discard(name)
                                    found.append((g, name))
                    head["proposed"] = len(orders)
                    head["new_by_action"] = Counter(new_aids)
                first = min([x[-1] for x in (head["violation"], deadlock) if x is not None], default=None)
                if first is not None:
                    # what bfs has counted when it stops there: the successors up to this
                    # one (a deadlock: before it), the actions of those before it, the new
                    # states up to it, the witnesses they satisfy
                    upto = first // 2 - seq0
                    kept = sum(1 for g in orders if g <= first) if cand else 0
                    head["cut"] = {"generated": upto, "coverage": Counter(gen_aids[:upto - (first % 2 == 0)]),
                                   "proposed": kept, "new_by_action": Counter(new_aids[:kept]) if cand else {}}
                    found = [x for x in found if x[0] <= first]
                head["witnesses"] = [name for _, name in found]
                head["actions"], self.new_actions = self.new_actions, []
                new_actions = self.new_actions
                yield head
        yield self.done()

    def _verdicts_of_rows(self, t):
        """verdicts(row, t): by parts, when the spec observes in parts;
        else Verdicts remembered under the observed fields' numbers."""
        verdicts, job = self.verdicts, self.job
        positions = row_positions(t)
        if positions is not None and not job.z3_eval and self.spec.observation_parts() is not None:
            pv = PartVerdicts(self.spec, job.properties, {n: job.witnesses[n] for n in job.witnesses},
                              self.pending, positions, MEMO)
            return pv
        pos = verdicts.positions(t)
        if pos is None:
            return lambda row, t: verdicts(t)
        key = itemgetter(*[p + 1 for p in pos])
        return lambda row, t: verdicts.keyed(key(row), t)

    def done(self) -> Batch:
        """The last head of a level (expanded, or stopped early)."""
        assert self.proposals is not None and self.mine is not None, "begin() opened the level"
        self.proposals.close()
        return {"generated": 0, "coverage": {}, "left": 0, "done": True, "violation": None,
                "deadlock": None, "witnesses": [], "proposed": 0, "actions": [],
                "table": [self.mine.path, self.mine.log2],
                "cpu": time.process_time() - self.cpu0, "expanded": self.expanded}

    def _seen(self, t) -> bool:
        """Whether state `t` was visited: the POR proviso's question."""
        f = np.array([self.fields.fingerprint(self.fields.row(t))], dtype=np.uint64)
        if self.glob is not None and contains_in(self.glob, f)[0]:
            return True
        return self.mine is not None and bool(self.mine.contains(f)[0])

    # -- the end of a level -----------------------------------------------------------
    def accept(self, later=(), taken=(), quota: int | None = None) -> Accepted:
        """Keep this part's share of its proposals as the next level (the
        rule is `share`'s); their parent pointers go to the trail. `later`:
        the later workers' proposal tables [(path, log2)]; `taken`: the
        earlier workers' tables of what they kept of what a later worker
        proposed; `quota`: how many of this part's proposals that a later
        worker proposed too it keeps. Returns, with the counts, this part's
        table of those it kept (`claimed`), for the workers after it."""
        later = [open_shared(path, log2) for path, log2 in later]
        taken = [open_shared(path, log2) for path, log2 in taken]
        claimed = FingerprintTable(shared=True) if later else None
        left = quota
        nxt = Level(self.folder, f"w{self.worker}-l{self.depth + 1}n", self.keep)
        kept_by_action: Counter = Counter()
        widths = self.fields.widths
        proposals = self.proposals
        assert proposals is not None, "begin() opened the level"
        for chunk in proposals:
            fps = np.frombuffer(chunk.fps, dtype=np.uint64)
            keep, mine, left = share(fps, later, taken, left)
            if mine.size:   # only of the later workers' tables
                assert claimed is not None
                claimed.add(mine)
            if keep.all():
                nxt.extend(type(chunk)(chunk.rows, chunk.fps))
                kept_fps, kept_p, kept_a = chunk.fps, chunk.pfps, chunk.aids
            else:
                idx = np.flatnonzero(keep)
                nxt.extend(kept_rows(chunk, keep, idx, widths))
                kept_fps = fps[idx]
                kept_p = np.frombuffer(chunk.pfps, dtype=np.uint64)[idx]
                kept_a = np.frombuffer(chunk.aids, dtype=np.uint32)[idx]
            if len(kept_fps):
                self.trail.write(self.depth + 1, self.worker, kept_fps, kept_p, kept_a)
                kept_by_action.update(np.asarray(kept_a, dtype=np.uint32).tolist())
        self.level = nxt.close()
        spill = proposals.disk_bytes + self.level_disk  # what this level and its proposals took on disk
        self.level_disk = self.level.disk_bytes
        self.proposals = None
        self.depth += 1
        self.claimed = claimed
        return {"kept": len(self.level), "kept_by_action": dict(kept_by_action),
                "fields": self.fields.size(), "disk": spill,
                "claimed": [claimed.path, claimed.log2] if claimed is not None else None}

    def drop_table(self) -> None:
        if self.mine is not None and not self.direct:  # the caller's visited table stays open
            self.mine.close()
        self.mine = None
        if self.claimed is not None:
            self.claimed.close()
            self.claimed = None


def share(fps: np.ndarray, later: list, taken: list, left: int | None):
    """Which of a worker's proposals `fps` (a chunk, in the order it proposed
    them) it keeps. The workers decide in turn: a state that an earlier
    worker kept (`taken`) is dropped; one that no later worker proposed
    (`later`) is kept; of those that a later worker proposed too, the first
    `left` are kept and the rest are left to the later workers. So a state
    that several workers proposed goes to one of them; given the quotas
    (which come from measured CPU times: `quotas`), the choice depends on
    the workers' orders of proposal only. Keeping a run of the worker's order, rather than states
    chosen by hashing, keeps the families of states together: a state's
    siblings and its successors' other parents stay in one worker, and the
    other seldom generates them too (ADR 0005).
    Returns the mask, the kept fingerprints a later worker proposed too,
    and what is left of the quota."""
    keep = np.ones(fps.size, dtype=bool)
    for slots in taken:
        keep &= ~contains_in(slots, fps)
    if not later:
        return keep, fps[:0], left
    also = np.zeros(fps.size, dtype=bool)
    for slots in later:
        also |= contains_in(slots, fps)
    also &= keep
    if left is not None:
        first = also & (np.cumsum(also) <= left)
        keep &= ~also | first
        left -= int(first.sum())
        also = first
    return keep, fps[also], left


def quotas(tables: list, costs: list) -> list:
    """For each worker but the last, how many of its proposals that a later
    worker proposed too it keeps (`share`), so that the next level's parts
    cost about the same: `tables` are each worker's proposals (its
    fingerprints, and its table's slots), in worker order, and `costs` each
    one's cost per state in the level just expanded (0: not known, even
    parts). With two workers the split is exact, as far as the states that
    both proposed allow; with more it ignores the states an earlier worker
    keeps. The last worker's entry is None: it keeps what is left."""
    n = len(tables)
    sizes, also = [], []
    for w, (vals, _) in enumerate(tables):
        hit = np.zeros(vals.size, dtype=bool)
        for _, slots in tables[w + 1:]:
            hit |= contains_in(slots, vals)
        sizes.append(int(vals.size))
        also.append(int(hit.sum()))
    total = sum(sizes) - sum(also)  # each state once, the last worker's copy of each shared one
    inv = [1 / c for c in costs] if all(costs) else [1.0] * n
    out = []
    for w in range(n - 1):
        target = total * inv[w] / sum(inv)
        out.append(int(min(max(round(target - (sizes[w] - also[w])), 0), also[w])))
    return out + [None]


def serve(conn, part: Part) -> None:
    """A worker's loop: expand on demand, accept, report its peak memory.
    A failure goes to the coordinator as failures.classify's line and exit
    code, so it is what the same failure would be in one process: a spec's
    bug exit 2, a disk that refuses a write exit 3 naming the file."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator handles Ctrl-C
    try:
        _serve(conn, part)
    except Closed:  # the coordinator is gone
        return
    except BaseException as exc:  # noqa: BLE001 - reported, whatever it is (a spec's sys.exit too)
        exc = explained(part.job.spec, exc)  # a user spec's bug, named by its guard
        code, line = failures.classify(exc, (CheckerError, SpecError))
        if failures.debugging():
            traceback.print_exception(exc, file=sys.stderr)
        try:
            send(conn, {"error": line, "exit": code})
        except Closed:
            pass


def _serve(conn, part: Part) -> None:
    while True:
        head, _ = recv(conn)
        cmd = head["cmd"]
        if cmd == "expand":
            part.begin(open_shared(*head["visited"]), True)
            for out in part.expand(BATCH):
                if not out["done"] and conn.poll() and recv(conn)[0]["cmd"] == "stop":
                    send(conn, out)
                    out = part.done()
                send(conn, out)
                if out["done"]:
                    break
        elif cmd == "accept":
            send(conn, part.accept(head["later"], head["taken"], head["quota"]))
        elif cmd == "give":
            send(conn, moves.give(part, head["count"], head["path"]))
        elif cmd == "take":
            send(conn, moves.take(part, head["path"]))
        elif cmd == "drop":
            part.drop_table()
            send(conn, {})
        elif cmd == "quit":
            part.drop_table()
            send(conn, {"peak_memory_mb": peak_memory_mb()})
            return
        # a "stop" that crossed the last batch of a level is ignored
