"""What it would cost to move a state from one worker to another at a level's end.

Issue 40's two workers drift apart in the late levels (docs/performance.md);
moving a run of states from the heavier worker to the lighter one would
correct that, but a worker's rows are numbers of its own field values, so a
moved state must be encoded. This measures the parts such a move would use,
on a level of the model's own states: the giver encodes each distinct field
value among the moved rows once (`encoding.encode`) and learns their classes
(`revive.Shapes`); the receiver decodes them (`encoding.decode`, which
checks untrusted bytes), revives the classes, rebuilds the states and numbers
them into its `Fields`. The receiver starts knowing no value, so its figure
is an upper bound. CPU microseconds per moved state.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from txncheck.checker.encoding import decode, encode
from txncheck.checker.engines.parallel.records import Fields
from txncheck.checker.revive import Shapes
from txncheck.checker.model import load_model

HEADER = "| model | states moved | distinct field values per state | giver µs/state | receiver µs/state |"


def a_level(spec, want: int) -> list:
    """The first BFS level past `want` states, cut to `want`."""
    level = list(spec.init_states())
    seen = set(level)
    while len(level) < want:
        nxt = []
        for s in level:
            for _, t in spec.next(s):
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        if not nxt:
            break
        level = nxt
    return level[:want]


def measure(model: Path, want: int) -> dict:
    spec = load_model(model).instantiate()
    states = a_level(spec, want)
    giver = Fields()
    rows = [giver.row(s) for s in states]
    c0 = time.process_time()
    shapes, sent = Shapes(), {}
    for row in rows:
        for i, x in enumerate(row[1:]):
            if (i, x) not in sent:
                v = giver.values[i][x]
                shapes.learn_field(i, v)
                sent[(i, x)] = encode(v)
    shapes.learn_top(states[0])
    shapes.freeze()
    c1 = time.process_time()
    receiver = Fields()
    values = {k: shapes.revive_field(k[0], decode(b)) for k, b in sent.items()}
    moved = [shapes.make_top([values[(i, x)] for i, x in enumerate(row[1:])]) for row in rows]
    for s in moved:
        receiver.row(s)
    c2 = time.process_time()
    if moved != states:
        sys.exit(f"{model}: a moved state differs from the one sent")
    n = len(states)
    return {"model": model, "n": n, "values": len(sent) / n, "giver": 1e6 * (c1 - c0) / n,
            "receiver": 1e6 * (c2 - c1) / n}


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", type=Path, help="model files (.toml)")
    ap.add_argument("--states", type=int, default=20000, help="states moved (a level cut to this many)")
    args = ap.parse_args(argv)
    print(HEADER)
    print("|---|---:|---:|---:|---:|")
    for m in args.models:
        r = measure(m, args.states)
        print(f"| {m} | {r['n']:,} | {r['values']:.2f} | {r['giver']:.1f} | {r['receiver']:.1f} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
