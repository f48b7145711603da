"""bfs against spark on the same models: wall time, states/s, the ratio
spark/bfs, and where Spark's time goes.

    .venv/bin/python bench/spark_vs_bfs.py                    # TwoPhase rm7 and the largest PIP-473 model
    .venv/bin/python bench/spark_vs_bfs.py --case twophase-rm7 --master 'local[2]'
    .venv/bin/python bench/spark_vs_bfs.py --case pip473 --max-seconds 300
    .venv/bin/python bench/spark_vs_bfs.py --case twophase-rm6 --master 'local[2]'   # a minute

Cases:
  twophase-rm6  TwoPhase with 6 RMs (TLC: 50,816 distinct, 402,306 generated)
  twophase-rm7  TwoPhase with 7 RMs (TLC: 296,448 distinct, 2,744,706 generated)
  pip473        the shipped PIP-473 safety model with the most states among those
                a bfs probe of --probe-states completes (models/pip473/*.toml without
                temporal properties), or --pip473-model; checked in full unless
                --max-seconds cuts both runs

Spark's time is split three ways:
  * driver phases (wall): expand (the mapPartitions job that runs the spec),
    dedupe+write (shuffle by fingerprint, anti-join with the visited set,
    Parquet write), count, trace;
  * worker CPU (summed over tasks): decode (bytes -> state objects), check
    (observe + invariants), next (the spec's successors), encode+emit
    (canonical encoding of candidates and handing rows to the JVM), and the
    rest of each task (reading rows from the JVM);
  * per-level overhead: the wall time of the cheapest level, which is mostly
    job scheduling since its frontier is tiny;
  * then one line per level, side by side: frontier, new, generated, Spark's
    seconds and side (driver or spark) and states generated per second, and
    bfs's approximate seconds for the same depth (from its progress reports,
    every 1,024 expansions) and rate; and both rates over the levels that
    generate 100,000 states or more (the issue's throughput aim).
The machine's other load shows in every figure; run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from txncheck.checker.api import check_model  # noqa: E402
from txncheck.checker.model import find_models, load_model  # noqa: E402


class DepthClock:
    """Progress sink for bfs: the time at which each depth is first reported
    (bfs reports every 1,024 expansions, so a level's seconds are accurate to
    that many expansions)."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.first: dict[int, float] = {}

    def update(self, *, depth: int, **_) -> None:
        self.first.setdefault(depth, time.monotonic() - self.t0)

    def line(self, text: str) -> None:
        pass

    def done(self) -> None:
        self.end = time.monotonic() - self.t0

    def seconds(self) -> dict[int, float]:
        """depth -> approximate seconds spent expanding that depth."""
        ds = sorted(self.first)
        ends = [self.first[d] for d in ds[1:]] + [getattr(self, "end", self.first[ds[-1]])] if ds else []
        return {d: e - self.first[d] for d, e in zip(ds, ends)}


class LevelClock:
    """Progress sink that times each Spark level."""

    def __init__(self) -> None:
        self.t = time.monotonic()
        self.levels: list[float] = []

    def line(self, text: str) -> None:
        now = time.monotonic()
        self.levels.append(now - self.t)
        self.t = now

    def update(self, **_) -> None:
        pass

    def done(self) -> None:
        pass


def twophase_rm7():
    m = load_model(ROOT / "models" / "classic" / "twophase-rm6.toml")
    return replace(m, constants={"rm": 7}, path=m.path.with_name("twophase-rm7.toml"))


def largest_pip473(probe_states: int):
    """The PIP-473 safety model with the most states among those bfs explores
    completely within `probe_states` (larger ones are listed, not chosen)."""
    best, best_n = None, -1
    for p in find_models(ROOT / "models" / "pip473"):
        m = load_model(p)
        if m.raw.get("temporal"):
            continue
        o = check_model(m, max_states=probe_states, keep_graph=False).outcome
        print(f"  probe {p.relative_to(ROOT)}: {o.verdict}, {o.distinct_states:,} distinct", flush=True)
        if o.verdict == "ok" and o.distinct_states > best_n:
            best, best_n = m, o.distinct_states
    return best


def run(model, engine: str, args) -> tuple:
    clock = LevelClock() if engine == "spark" else DepthClock()
    opts = {"master": args.master} if engine == "spark" else {}
    t0 = time.monotonic()
    o = check_model(model, engine=engine, keep_graph=False, max_seconds=args.max_seconds,
                    progress=clock, options=opts).outcome
    wall = time.monotonic() - t0
    return o, wall, clock


def report(name: str, model, args) -> None:
    print(f"\n== {name}: {model.path.name} ({model.variant}, {model.constants})", flush=True)
    ob, wb, bfs_clock = run(model, "bfs", args)
    print(f"bfs   {ob.verdict:<10} {ob.distinct_states:>10,} distinct {ob.states_generated:>11,} generated "
          f"depth {ob.depth:>3}  wall {wb:8.1f}s  {ob.states_generated / wb:>10,.0f} states/s", flush=True)
    os_, ws, clock = run(model, "spark", args)
    print(f"spark {os_.verdict:<10} {os_.distinct_states:>10,} distinct {os_.states_generated:>11,} generated "
          f"depth {os_.depth:>3}  wall {ws:8.1f}s  {os_.states_generated / ws:>10,.0f} states/s", flush=True)
    same = (ob.verdict, ob.distinct_states, ob.states_generated, ob.depth) == \
        (os_.verdict, os_.distinct_states, os_.states_generated, os_.depth)
    print(f"ratio spark/bfs: wall x{ws / wb:.1f}, throughput x{(os_.states_generated / ws) / (ob.states_generated / wb):.3f}"
          f"; figures {'identical' if same else 'DIFFER (budget cut?)'}")
    sp = os_.extra.get("spark", {})
    phases = sp.get("phase_seconds", {})
    print("spark driver phases (wall s): " + ", ".join(f"{k} {v:.1f}" for k, v in phases.items()))
    for label, key in (("spark worker CPU (s, all tasks)", "worker_seconds"),
                       ("driver expansion of small levels (CPU s)", "driver_expansion_seconds")):
        parts = dict(sp.get(key, {}))
        if not parts:
            continue
        task = parts.pop("task", 0.0)
        rest = task - sum(parts.values())
        print(f"{label}: " + ", ".join(f"{k} {v:.1f}" for k, v in parts.items())
              + f", reading rows/other {rest:.1f} (tasks {task:.1f})")
    if clock and clock.levels:
        lv = clock.levels
        print(f"spark levels: {len(lv)}, cheapest {min(lv):.2f}s, dearest {max(lv):.2f}s, "
              f"fixed overhead ~{min(lv) * len(lv):.1f}s of {ws:.1f}s")
    levels_side_by_side(sp.get("per_level", []), bfs_clock.seconds(), wb)


def levels_side_by_side(per_level: list, bfs_seconds: dict, bfs_wall: float) -> None:
    """One line per level: frontier, new, generated, each engine's seconds and
    states generated per second; then both engines' throughput over the levels
    of 100,000 generated states or more."""
    if not per_level:
        return
    print(f"{'depth':>5} {'frontier':>9} {'new':>9} {'generated':>10} {'spark s':>8} {'where':>6} "
          f"{'spark gen/s':>12} {'bfs s~':>7} {'bfs gen/s~':>11}")
    big = [0, 0.0, 0.0]   # generated, spark s, bfs s over the large levels
    for x in per_level:
        g = x.get("generated") or 0
        b = bfs_seconds.get(x["depth"])
        sr = f"{g / x['seconds']:,.0f}" if x["seconds"] > 0 else ""
        br = f"{g / b:,.0f}" if b else ""
        bs = f"{b:.2f}" if b is not None else ""
        print(f"{x['depth']:>5} {x['frontier']:>9,} {'' if x['new'] is None else format(x['new'], ','):>9} {g:>10,} "
              f"{x['seconds']:>8.2f} {x['where']:>6} {sr:>12} {bs:>7} {br:>11}")
        if g >= 100_000 and b:
            big[0] += g
            big[1] += x["seconds"]
            big[2] += b
    if big[0]:
        print(f"levels of 100,000+ generated: spark {big[0] / big[1]:,.0f} gen/s, bfs ~{big[0] / big[2]:,.0f} gen/s, "
              f"ratio {big[2] / big[1]:.2f}")
    else:
        print("no level generated 100,000 states or more")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", action="append", choices=["twophase-rm6", "twophase-rm7", "pip473"],
                    help="which case (repeatable; default both)")
    ap.add_argument("--master", default="local[*]")
    ap.add_argument("--pip473-model", metavar="TOML", help="the PIP-473 model to use (default: probe for the largest)")
    ap.add_argument("--probe-states", type=int, default=200000,
                    help="largest-model probe: bfs budget per model (default 200000)")
    ap.add_argument("--max-seconds", type=float, default=None, help="budget per engine run (incomplete when hit)")
    args = ap.parse_args()
    cases = args.case or ["twophase-rm7", "pip473"]
    if "twophase-rm6" in cases:
        report("TwoPhase, 6 RMs", load_model(ROOT / "models" / "classic" / "twophase-rm6.toml"), args)
    if "twophase-rm7" in cases:
        report("TwoPhase, 7 RMs", twophase_rm7(), args)
    if "pip473" in cases:
        if args.pip473_model:
            m = load_model(args.pip473_model)
        else:
            print(f"\nfinding the largest PIP-473 safety model that bfs completes within {args.probe_states:,} states:")
            m = largest_pip473(args.probe_states)
        if m is None:
            print("no PIP-473 safety model shipped")
        else:
            report("largest PIP-473 model", m, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
