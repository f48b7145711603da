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
them (`keeper`), and the rest are dropped; the kept proposals become the
part's next level, and their parent pointers go to the trail on disk.
"""

from __future__ import annotations

import signal
import time
from collections import Counter
from itertools import compress
from operator import is_not, itemgetter

import numpy as np

from ... import reductions
from ...errors import explained
from ...exploration import peak_memory_mb
from ...job import Job
from ...verdicts import PartVerdicts, Verdicts, row_positions
from .records import Fields, Level, kept_rows, rows_of
from .table import FingerprintTable, contains_in, open_shared
from .trail import Trail
from .wire import recv, send

BATCH = 1024  # states expanded between looks at the tables (and messages)
KEEP = 1 << 17  # rows of a level kept in memory before its chunks go to disk
MEMO = 1 << 16  # verdicts remembered per generation (checker/verdicts.py): PIP-473 reuses about one in ten


class Part:
    """One worker's part of the search: the level it expands, its proposals
    for the next, the field numbering of its states, its checks."""

    def __init__(self, job: Job, spec, folder: str) -> None:
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

    def expand(self, limit: int):
        """Expand this part's level, `limit` states at a time: yields a head
        per batch (counts, new actions, the first violation or deadlock
        found, the witnesses found), the last with done=True."""
        fields, verdicts, pending, mine = self.fields, self.verdicts, self.pending, self.mine
        nxt, canonical = self.successors, self.canonical
        number, fprint, state_of, ids, fkeys = fields.row, fields.fingerprint, fields.state, fields.ids, fields.keys
        action_ids, new_actions = self.action_ids, self.new_actions
        props = self.proposals
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
                head = {"generated": seq - seq0, "coverage": Counter(gen_aids), "left": left, "done": False,
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
                        bad, holds = vkey(row, t)
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

    def done(self) -> dict:
        """The last head of a level (expanded, or stopped early)."""
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
    def accept(self, others: list, weights: list | None = None) -> dict:
        """Keep the proposals this part is the keeper of (`keeper`), given the
        other workers' proposal tables [(worker, path, log2)] and the
        workers' weights, as the next level; their parent pointers go to the trail."""
        views = [(w, open_shared(path, log2)) for w, path, log2 in others]
        nxt = Level(self.folder, f"w{self.worker}-l{self.depth + 1}n", self.keep)
        kept_by_action: Counter = Counter()
        widths = self.fields.widths
        for chunk in self.proposals:
            fps = np.frombuffer(chunk.fps, dtype=np.uint64)
            keep = keeper(self.worker, fps, views, weights)
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
        spill = self.proposals.disk_bytes + self.level_disk  # what this level and its proposals took on disk
        self.level_disk = self.level.disk_bytes
        self.proposals = None
        self.depth += 1
        return {"kept": len(self.level), "kept_by_action": dict(kept_by_action),
                "fields": self.fields.size(), "disk": spill}

    def drop_table(self) -> None:
        if self.mine is not None and not self.direct:  # the caller's visited table stays open
            self.mine.close()
        self.mine = None


def keeper(me: int, fps: np.ndarray, views: list, weights: list | None = None) -> np.ndarray:
    """Which of worker `me`'s proposals it keeps. A state several workers
    proposed goes to one of them by weighted rendezvous hashing: each
    proposer w draws a score weight[w] / -ln(u), u a uniform number from the
    state's fingerprint and w, and the highest keeps it; so worker w keeps a
    share weight[w] / (sum over the proposers) of the states it shares, and
    every worker reaches the same choice from fingerprints alone, whatever
    the timing. The coordinator sets the weights to balance the next level
    (`balance`)."""
    if not views:
        return np.ones(fps.size, dtype=bool)
    n = 1 + max(max(w for w, _ in views), me)
    weights = weights or [1.0] * n
    mine = _score(fps, me, weights[me])
    keep = np.ones(fps.size, dtype=bool)
    for w, v in views:
        hit = contains_in(v, fps)
        other = _score(fps, w, weights[w])
        beats = other > mine if w > me else other >= mine  # a tie goes to the lower worker
        keep &= ~(hit & beats)
    return keep


_MIX = (np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53), np.uint64(33))


def _score(fps: np.ndarray, w: int, weight: float) -> np.ndarray:
    x = fps ^ np.uint64((w + 1) * 0x9E3779B97F4A7C15 % (1 << 64))
    with np.errstate(over="ignore"):
        x = (x ^ (x >> _MIX[2])) * _MIX[0]
        x = (x ^ (x >> _MIX[2])) * _MIX[1]
    x ^= x >> _MIX[2]
    u = ((x >> np.uint64(11)).astype(np.float64) + 0.5) / float(1 << 53)
    return max(weight, 1e-9) / -np.log(u)


def balance(tables: list, costs: list) -> list[float]:
    """The keeper weights that make the workers' next levels cost about the
    same: `tables` are each worker's proposals (its fingerprints, and its
    table's slots), `costs`
    each one's CPU seconds per state in the level just expanded (0: not
    known). With two workers the split of the shared states is exact; with
    more, each gets its deficit over what it alone proposed."""
    n = len(tables)
    if n < 2 or not all(costs):
        return [1.0] * n
    alone, shared = [], []
    for w, (vals, _) in enumerate(tables):
        other = np.zeros(vals.size, dtype=bool)
        for v, (_, slots) in enumerate(tables):
            if v != w:
                other |= contains_in(slots, vals)
        alone.append(int(vals.size - other.sum()))
        shared.append(int(other.sum()))
    total = sum(alone) + (shared[0] if n == 2 else sum(shared) / 2)
    inv = [1 / c for c in costs]
    target = [total * x / sum(inv) for x in inv]
    if n == 2:
        s = shared[0]
        if not s:
            return [1.0, 1.0]
        tau = min(max((target[0] - alone[0]) / s, 0.001), 0.999)
        return [tau, 1 - tau]
    return [max(t - a, 1.0) / max(sh, 1) for t, a, sh in zip(target, alone, shared)]


def serve(conn, part: Part) -> None:
    """A worker's loop: expand on demand, accept, report its peak memory."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator handles Ctrl-C
    try:
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
                send(conn, part.accept(head["others"], head.get("weights")))
            elif cmd == "drop":
                part.drop_table()
                send(conn, {})
            elif cmd == "quit":
                part.drop_table()
                send(conn, {"peak_memory_mb": peak_memory_mb()})
                return
            # a "stop" that crossed the last batch of a level is ignored
    except (EOFError, OSError):  # the coordinator is gone
        return
    except Exception as exc:  # reported by the coordinator as one line
        exc = explained(part.job.spec, exc)  # a user spec's bug, named by its guard
        try:
            send(conn, {"error": f"{type(exc).__name__}: {exc}"})
        except OSError:
            pass
