"""`txncheck new NAME [--dir DIR]`: a first spec and its model files.

Writes DIR/NAME/ (default DIR: the current folder) with a spec file, a model
that finds a planted bug (`NAME-racy.toml`, [expect] a violation) and one that
passes (`NAME.toml`). The spec is a two-process lock whose `racy` variant
checks the lock and takes it in two steps. Nothing is overwritten.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..model import ModelError

SPEC = '''"""{cls}: two processes share a lock (written by `txncheck new`).

In variant "racy" a process checks that the lock is free and takes it in a
second step, so both can pass the check: MutualExclusion fails. In "fixed"
the check and the take are one atomic step.

`txncheck prove {name}.toml` proves the fixed lock's properties for every
reachable state from this code: LockHasAHolder is inductive by itself;
MutualExclusion needs the lemma CritHoldsTheLock, which the model's [prove]
table names (drop it, with --without, to see the counterexample to
induction that calls for it).
"""

from __future__ import annotations

from typing import NamedTuple

import z3

from txncheck.spec.api import Bound, Spec
from txncheck.spec.schema import Bool, Enum


class State(NamedTuple):
    pc: tuple[str, ...]  # per process: "idle", "checked" or "crit"
    lock: bool


class {cls}(Spec):
    name = "{name}"
    variants = ("fixed", "racy")
    bounds = {{"procs": Bound(2, "number of processes", lo=1, hi=5)}}

    def setup(self) -> None:
        self.procs = tuple(f"p{{i}}" for i in range(1, self.constants["procs"] + 1))
        sc = self.schema
        sc.enum("Proc", self.procs)
        sc.enum("Pc", ("idle", "checked", "crit"))
        pc = sc.fun("pc", "Proc", Enum("Pc"))
        lock = sc.var("lock", Bool())    # observed too: a proof's lemmas name every field (txncheck prove --infer)
        crit = sc.const("Pc", "crit")
        self.invariants["MutualExclusion"] = sc.forall(
            ("Proc", "Proc"), lambda a, b: z3.Implies(z3.And(a != b, pc(a) == crit), pc(b) != crit))
        # the lock is taken only by a process that enters the critical section
        self.invariants["LockHasAHolder"] = z3.Implies(lock, sc.exists("Proc", lambda p: pc(p) == crit))
        # Lemmas, for `txncheck prove`: facts the proof assumes and proves with the properties.
        self.lemmas["CritHoldsTheLock"] = sc.forall("Proc", lambda p: z3.Implies(pc(p) == crit, lock))

    def init_states(self):
        yield State(("idle",) * len(self.procs), False)

    def next(self, s: State):
        for i, p in enumerate(self.procs):
            at = lambda label: s.pc[:i] + (label,) + s.pc[i + 1:]
            if s.pc[i] == "idle" and not s.lock:
                if self.variant == "racy":
                    yield ("Check", (("p", p),)), State(at("checked"), s.lock)
                else:
                    yield ("Acquire", (("p", p),)), State(at("crit"), True)
            if s.pc[i] == "checked":
                yield ("Take", (("p", p),)), State(at("crit"), True)
            if s.pc[i] == "crit":
                yield ("Release", (("p", p),)), State(at("idle"), False)

    def state_vars(self, s: State):
        """The state as a trace shows it: each process's pc by its name, so a
        step reads `pc[p1] = crit` (without this, a NamedTuple's fields)."""
        return {{"pc": dict(zip(self.procs, s.pc)), "lock": s.lock}}

    def observe(self, s: State):
        return {{"pc": dict(zip(self.procs, s.pc)), "lock": s.lock}}
'''

MODEL = '''description = "{desc}"
spec = "{name}.py:{cls}"   # a file next to this one; checking runs its code
variant = "{variant}"
[constants]
procs = 2
[expect]
{expect}
{prove}'''


def register(sub) -> None:
    p = sub.add_parser("new", help="write a first spec and model files into a new folder NAME")
    p.add_argument("name", help="the spec's name (letters, digits, underscores)")
    p.add_argument("--dir", default=".", help="where to create the folder (default: the current folder)")
    p.set_defaults(run=run)


def run(args) -> int:
    name = args.name
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ModelError(f"{name}: a spec name is letters, digits and underscores, not starting with a digit")
    folder = Path(args.dir) / name
    if folder.exists():
        raise ModelError(f"{folder}: already exists; nothing written")
    cls = "".join(part[:1].upper() + part[1:] for part in name.split("_") if part) or "Spec"
    files = {
        f"{name}.py": SPEC.format(cls=cls, name=name),
        f"{name}.toml": MODEL.format(name=name, cls=cls, variant="fixed", expect='verdict = "ok"',
                                     desc="the lock taken atomically: mutual exclusion holds",
                                     prove='[prove]  # txncheck prove: the lemmas its proof assumes (and proves)\n'
                                           'lemmas = ["CritHoldsTheLock"]\n'),
        f"{name}-racy.toml": MODEL.format(
            name=name, cls=cls, variant="racy",
            expect='verdict = "violation"\nproperty = "MutualExclusion"\nlength = 5',
            desc="check, then take: both processes reach the critical section", prove=""),
    }
    folder.mkdir(parents=True)
    for fname, text in files.items():
        (folder / fname).write_text(text, encoding="utf-8")
    print(f"wrote {folder}/: {', '.join(files)}")
    print(f"next: txncheck check {folder / (name + '-racy.toml')}   (finds the planted bug)")
    print(f"      txncheck check --all {folder}                (both models meet their [expect])")
    print(f"      txncheck prove {folder / (name + '.toml')}           (the fixed lock, proved for every state)")
    return 0
