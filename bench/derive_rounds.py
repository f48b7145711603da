"""Where a derivation spends its rounds (ADR 0011): per widening round of
`derive(spec)`, the CPU seconds and peak memory so far, and each place of
the state the round's successors did not fit (by field name, the kind of
value that did not fit, and a sequence's capacity or a set's universe size
after widening). A shape that
never settles shows the same places widening round after round.

    .venv/bin/python bench/derive_rounds.py MODEL [--rounds N] [--parts]

With --parts, each exploration (a part of `next`, a part of `observe`, a
lemma) also prints its runs and CPU seconds, or the error that stopped it:
issue 52's measurement of the standard bounds,
    .venv/bin/python bench/derive_rounds.py models/pip473/fixed-standard.toml --parts

Issue 52's measurement of PIP-473:
    .venv/bin/python bench/derive_rounds.py models/pip473/append-before-op-fixed.toml --agree

With --agree, `observe` is not derived (PIP-473's does not end yet, ADR
0011) and the derived `next` is compared with the spec's on every
reachable state of the model (agreement.py), transitions only; with
--agree --observe, `observe` is derived and compared too.

With --observe-on N, `next` is not derived: the shape is the one inferred
from N sampled states, and only `observe` and the lemmas are derived on it
(with --parts, each timed): a quick look at whether they fit the budgets
before the rounds of `next` are paid for.

With --sizes, each of the spec's properties and lemmas stated over the derived cells is
printed with its size (distinct Z3 nodes), largest first, and the largest
actions' updates: a proof's queries grow with them (ADR 0011: Atomicity
over fixed-standard's derived cells, 105,517 nodes, was no query Z3
answered). `--observe-on 100000 --sizes` shows them without `next`.
"""

from __future__ import annotations

import argparse
import resource
import time

from txncheck.checker.model import load_model
from txncheck.checker.symbolic import agreement
from txncheck.checker.symbolic.derive import relation
from txncheck.checker.symbolic.derive.shapes import Record, Seq, Set, Union


def place(shape, path: tuple) -> tuple[str, object]:
    """(a readable name of `path` in `shape`, the shape there)."""
    name = ""
    for step in path:
        if isinstance(shape, Record):
            fields = getattr(shape.cls, "_fields", None)
            name += f".{fields[step]}" if fields else f"[{step}]"
            shape = shape.items[step]
        elif isinstance(shape, Seq):
            name += "[i]"
            shape = shape.elem
        elif isinstance(shape, Union):
            name += f"<alt {step}>"
            shape = shape.alts[step]
    return name.lstrip(".") or "state", shape


def size(shape) -> str:
    if isinstance(shape, Seq):
        return f"capacity {shape.cap}"
    if isinstance(shape, Set):
        return f"{len(shape.universe)} elements"
    return type(shape).__name__


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--rounds", type=int, default=relation.MAX_ROUNDS)
    ap.add_argument("--agree", action="store_true", help="derive next only; compare it on every reachable state")
    ap.add_argument("--observe", action="store_true", help="with --agree: derive and compare observe too")
    ap.add_argument("--parts", action="store_true",
                    help="also print each exploration (next's parts, observe's, the lemmas): runs and CPU s")
    ap.add_argument("--sizes", action="store_true",
                    help="print each property's, lemma's and action's size over the derived cells")
    ap.add_argument("--observe-on", type=int, metavar="N",
                    help="skip next: derive observe and the lemmas on the shape of N sampled states")
    args = ap.parse_args()
    relation.MAX_ROUNDS = args.rounds
    if args.observe_on:
        relation.DerivedRelation.samples = args.observe_on

        def no_next(self):
            self._yields, self._raises = [], []
            return []

        relation.DerivedRelation._derive_next = no_next
    spec = load_model(args.model).instantiate()
    t0 = time.process_time()
    widened: dict = {}
    real = relation.widen_all

    def widen_all(shape, places):
        out = real(shape, places)
        for path, v in places:   # named in the shape the round found them in
            name, _ = place(shape, path)
            widened[path] = (name, type(v).__name__, out)
        return out

    def report(n: int) -> None:
        mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        print(f"round {n}: {time.process_time() - t0:.1f} CPU s, {mb} MB", flush=True)
        for path, (name, kind, shape) in sorted(widened.items(), key=str):
            try:
                there = size(place(shape, path)[1])
            except (IndexError, AttributeError):   # a union made above it this round
                there = "under a new union"
            print(f"  widened {name} (by a {kind}): {there}")
        widened.clear()

    relation.widen_all = widen_all
    real_layout, rounds = relation.Layout, [0]

    def layout(shape, *a, **kw):
        if rounds[0]:
            report(rounds[0])
        rounds[0] += 1
        return real_layout(shape, *a, **kw)

    relation.Layout = layout
    if args.parts:
        explore = relation.DerivedRelation._explore

        def explore_and_say(self, body):
            t = time.process_time()
            fn = (body.__defaults__ or (None,))[0]
            fn = getattr(fn, "func", fn)    # a partial: its function
            what = getattr(fn, "__qualname__", "") if callable(fn) else current[0]
            try:
                ex = explore(self, body)
            except Exception as exc:
                print(f"  exploration {self.stats.get('parts', 0)} {what}: {str(exc)[:160]}, "
                      f"{time.process_time() - t:.1f} CPU s", flush=True)
                raise
            print(f"  exploration {self.stats.get('parts', 0)} {what}: {ex.runs} runs, {ex.runs_inner} in summaries, "
                  f"{len(ex.events)} events, {time.process_time() - t:.1f} CPU s", flush=True)
            return ex

        relation.DerivedRelation._explore = explore_and_say
        current = [""]
        derive_lemma = relation.DerivedRelation._derive_lemma

        def lemma_and_say(self, name, lemma):
            current[0] = f"lemma {name}"
            return derive_lemma(self, name, lemma)

        relation.DerivedRelation._derive_lemma = lemma_and_say
    if args.agree and not args.observe:
        relation.DerivedRelation._derive_observe = lambda self: []
        agreement.Agreement._observation = lambda self, s, here, now: []
    try:
        rel = relation.derive(spec)
        print(f"derived: {len(rel.actions())} actions, {len(rel.schema.symbols)} cells, {rel.stats['rounds']} rounds, "
              f"{time.process_time() - t0:.1f} CPU s", flush=True)
    except Exception as exc:      # the spec's one-line error (SpecError) or the shape's
        report(rounds[0])
        print(f"not derived: {str(exc).splitlines()[0]}")
        return
    if args.sizes:
        sizes(rel, spec.invariants)
    if args.agree:
        t1 = time.process_time()
        n, bad = agreement.disagreements(rel, agreement.reachable(spec), stop_after=10)
        print(f"{'next and observe agree' if args.observe else 'next agrees'}: {n} reachable states, {len(bad)} disagreements, {time.process_time() - t1:.1f} CPU s")
        for b in bad:
            print(f"  {str(b)[:300]}")


def nodes(*terms) -> int:
    """Distinct Z3 nodes of terms (their DAG's size)."""
    seen: set = set()
    todo = list(terms)
    while todo:
        e = todo.pop()
        if e.get_id() not in seen:
            seen.add(e.get_id())
            todo.extend(e.children())
    return len(seen)


def sizes(rel, properties: dict) -> None:
    f = rel.frame("s")
    clauses = {**{n: rel.property(f, p) for n, p in properties.items()},
               **{n: rel.lemma(f, p) for n, p in rel.lemmas.items()}}
    print("clauses over the derived cells, in Z3 nodes:")
    for n, k in sorted(((n, nodes(c)) for n, c in clauses.items()), key=lambda x: -x[1]):
        print(f"  {k:>9,}  {n}")
    acts = [(a.label, nodes(*a.step(f)[1].values())) for a in rel.actions()]
    if acts:
        print("largest updates, in Z3 nodes:")
        for label, k in sorted(acts, key=lambda x: -x[1])[:10]:
            print(f"  {k:>9,}  {label[0]}{dict(label[1])}")


if __name__ == "__main__":
    main()
