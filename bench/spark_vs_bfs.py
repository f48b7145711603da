"""bfs against spark on the same models: wall time, states/s, the ratio
spark/bfs, and where Spark's time goes.

    .venv/bin/python bench/spark_vs_bfs.py                    # TwoPhase rm7 and PIP-473 fixed
    .venv/bin/python bench/spark_vs_bfs.py --case twophase-rm7 --master 'local[2]'
    .venv/bin/python bench/spark_vs_bfs.py --case pip473 --master 'local[2]'          # an hour on 2 cores
    .venv/bin/python bench/spark_vs_bfs.py --case pip473 --master 'local[2]' --max-seconds 150
    .venv/bin/python bench/spark_vs_bfs.py --case twophase-rm6 --master 'local[2]'   # a minute

Cases:
  twophase-rm6  TwoPhase with 6 RMs (TLC: 50,816 distinct, 402,306 generated)
  twophase-rm7  TwoPhase with 7 RMs (TLC: 296,448 distinct, 2,744,706 generated)
  pip473        models/pip473/fixed.toml (12,078,783 distinct, 71,167,998 generated,
                depth 30), or --pip473-model; checked in full (the model's max_depth,
                where the gate stops, is dropped) unless --max-seconds
                cuts both runs, and then the sizes of the levels both completed
                are compared

The Spark session is started before the Spark run (its JVM's start is
printed apart) and warmed up on a small model with every level on Spark
(`--cold` skips that), so Spark's figures are the search's in a steady
state, as in the later levels of a long run. Spark's time is split:
  * driver phases (wall): spark (the levels run as Spark jobs), driver (the
    levels expanded in the driver), trace;
  * the expansion's CPU by part, summed over tasks (on Spark's Python
    workers, and in the driver for small levels): unpack (packed bytes ->
    state objects), check (observe + invariants, remembered per observed
    fields), next (the spec's successors and the per-chunk dedupe), pack
    (fingerprints, encodings, Arrow tables), merge (the level's dedupe,
    visited-set lookup and Parquet write);
  * CPU seconds of the processes (bench/spark_cpu.py): the driver's Python
    process, and its Spark JVM with every process under it (the executor
    threads, the Python workers) - on a loaded machine these say more than
    wall seconds;
  * then one line per level, side by side: frontier, new, generated, Spark's
    wall and CPU seconds and side (driver or spark) and states generated per
    second, and bfs's approximate wall and CPU seconds for the same depth
    (from its progress reports, every 1,024 expansions) and rate; and both
    engines over the levels that generate 100,000 states or more (the
    issue's throughput aim): the wall ratio, and the CPU ratio, which is
    what the wall ratio would be if Spark kept its cores busy on the level
    and nothing else ran (`--master local[N]`: N cores).
The machine's other load shows in every wall figure; run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from txncheck.checker.api import check_model  # noqa: E402
from txncheck.checker.model import load_model  # noqa: E402

from spark_cpu import SparkCpu, self_cpu  # noqa: E402


class DepthClock:
    """Progress sink for bfs: the time at which each depth is first reported
    (bfs reports every 1,024 expansions, so a level's seconds are accurate to
    that many expansions)."""

    def __init__(self) -> None:
        self.t0, self.c0 = time.monotonic(), self_cpu()
        self.first: dict[int, tuple[float, float]] = {}

    def update(self, *, depth: int, **_) -> None:
        if depth not in self.first:
            self.first[depth] = (time.monotonic() - self.t0, self_cpu() - self.c0)

    def line(self, text: str) -> None:
        pass

    def done(self) -> None:
        self.end = (time.monotonic() - self.t0, self_cpu() - self.c0)

    def seconds(self) -> dict[int, tuple[float, float]]:
        """depth -> approximate (wall, CPU) seconds spent expanding that depth."""
        ds = sorted(self.first)
        ends = [self.first[d] for d in ds[1:]] + [getattr(self, "end", self.first[ds[-1]])] if ds else []
        return {d: (e[0] - self.first[d][0], e[1] - self.first[d][1]) for d, e in zip(ds, ends)}


class LevelClock:
    """Progress sink that times each Spark level: wall seconds, and CPU
    seconds of the driver and of the Spark JVM's process tree."""

    def __init__(self) -> None:
        self.cpu = SparkCpu()
        self.t, self.c = time.monotonic(), self.cpu.sample()
        self.c0 = self.c
        self.levels: list[float] = []
        self.cpus: dict[int, tuple[float, float]] = {}   # depth -> (driver, spark) CPU seconds

    def line(self, text: str) -> None:
        now, c = time.monotonic(), self.cpu.sample()
        self.levels.append(now - self.t)
        depth = int(re.match(r"depth (\d+):", text).group(1))
        self.cpus[depth] = (c[0] - self.c[0], c[1] - self.c[1])
        self.t, self.c = now, c

    def total(self) -> tuple[float, float]:
        c = self.cpu.sample()
        return c[0] - self.c0[0], c[1] - self.c0[1]

    def update(self, **_) -> None:
        pass

    def done(self) -> None:
        pass


def twophase_rm7():
    m = load_model(ROOT / "models" / "classic" / "twophase-rm6.toml")
    return replace(m, constants={"rm": 7}, path=m.path.with_name("twophase-rm7.toml"))


def start_spark(master: str, warm_up: bool) -> None:
    """Start the session, and unless told not to, warm it up: TwoPhase with 5
    RMs with every level on Spark starts the Python workers and lets the
    JVM compile the shuffle's code, as the first minutes of a long run do."""
    import os

    from txncheck.checker.engines.spark.session import spark_session
    from txncheck.checker.engines.spark.driver import ENV

    t0, c0 = time.monotonic(), self_cpu()
    spark_session(master)
    print(f"Spark session on {master} started in {time.monotonic() - t0:.1f} s wall, "
          f"{self_cpu() - c0:.1f} s driver CPU", flush=True)
    if not warm_up:
        return
    cpu = SparkCpu()
    t0, c0 = time.monotonic(), cpu.sample()
    saved = os.environ.get(ENV)
    os.environ[ENV] = "0"
    try:
        m = replace(load_model(ROOT / "models" / "classic" / "twophase-rm6.toml"), constants={"rm": 5})
        check_model(m, engine="spark", keep_graph=False)
    finally:
        if saved is None:
            os.environ.pop(ENV)
        else:
            os.environ[ENV] = saved
    c = cpu.sample()
    print(f"warm-up (TwoPhase 5 RMs, every level on Spark): {time.monotonic() - t0:.1f} s wall, "
          f"{c[0] - c0[0] + c[1] - c0[1]:.1f} s CPU", flush=True)


def run(model, engine: str, args) -> tuple:
    if engine == "spark":
        start_spark(args.master, not args.cold)
    clock = LevelClock() if engine == "spark" else DepthClock()
    opts = {"master": args.master} if engine == "spark" else {}
    t0, c0 = time.monotonic(), self_cpu()
    o = check_model(model, engine=engine, keep_graph=False, max_seconds=args.max_seconds,
                    progress=clock, options=opts).outcome
    wall = time.monotonic() - t0
    clock.cpu_total = clock.total() if engine == "spark" else (self_cpu() - c0, 0.0)
    return o, wall, clock


def report(name: str, model, args) -> None:
    print(f"\n== {name}: {model.path.name} ({model.variant}, {model.constants})", flush=True)
    ob, wb, bfs_clock = run(model, "bfs", args)
    print(f"bfs   {ob.verdict:<10} {ob.distinct_states:>10,} distinct {ob.states_generated:>11,} generated "
          f"depth {ob.depth:>3}  wall {wb:8.1f}s  {ob.states_generated / wb:>10,.0f} states/s  "
          f"CPU {bfs_clock.cpu_total[0]:.1f}s", flush=True)
    os_, ws, clock = run(model, "spark", args)
    cd, cs = clock.cpu_total
    print(f"spark {os_.verdict:<10} {os_.distinct_states:>10,} distinct {os_.states_generated:>11,} generated "
          f"depth {os_.depth:>3}  wall {ws:8.1f}s  {os_.states_generated / ws:>10,.0f} states/s  "
          f"CPU {cd + cs:.1f}s (driver {cd:.1f}, JVM and Python workers {cs:.1f})", flush=True)
    same = (ob.verdict, ob.distinct_states, ob.states_generated, ob.depth) == \
        (os_.verdict, os_.distinct_states, os_.states_generated, os_.depth)
    print(f"ratio spark/bfs: wall x{ws / wb:.1f}, throughput x{(os_.states_generated / ws) / (ob.states_generated / wb):.3f}"
          f"; figures {'identical' if same else 'differ'}")
    if not same:
        print(level_sizes(ob, os_))
    sp = os_.extra.get("spark", {})
    phases = sp.get("phase_seconds", {})
    print("spark driver phases (wall s): " + ", ".join(f"{k} {v:.1f}" for k, v in phases.items()))
    for label, key in (("expansion CPU on Spark's Python workers (s, all tasks)", "worker_seconds"),
                       ("expansion CPU of the small levels, in the driver (s)", "driver_expansion_seconds")):
        parts = dict(sp.get(key, {}))
        if parts:
            print(f"{label}: " + ", ".join(f"{k} {v:.1f}" for k, v in parts.items())
                  + f" (sum {sum(parts.values()):.1f})")
    bfs_seconds = bfs_clock.seconds()
    if ob.verdict != "ok":   # bfs stopped in the middle of its last depth: no figure for it
        bfs_seconds = {d: x for d, x in bfs_seconds.items() if d < ob.depth}
    levels_side_by_side(sp.get("per_level", []), clock.cpus, bfs_seconds, cores(os_.extra))


def level_sizes(ob, os_) -> str:
    """When a budget cut either run: the sizes of the levels both completed, compared."""
    lv = list(ob.exploration.levels) if ob.exploration is not None else []
    bfs = [b - a for a, b in zip(lv, lv[1:])]   # bfs's levels before the one it was expanding
    spark = os_.extra.get("spark", {}).get("levels", [])
    n = min(len(bfs), len(spark))
    if n == 0:
        return "no complete level to compare"
    if bfs[:n] == spark[:n]:
        return f"sizes of levels 1..{n}, complete in both runs: identical ({spark[n - 1]:,} states at depth {n})"
    return f"sizes of levels 1..{n} DIFFER: bfs {bfs[:n]}, spark {spark[:n]}"


def cores(extra: dict) -> int:
    """The cores of a local master (the CPU ratio's N)."""
    import os

    master = extra.get("spark", {}).get("master", "")
    m = re.fullmatch(r"local\[(\d+)\]", master)
    return int(m.group(1)) if m else (os.cpu_count() or 1) if master == "local[*]" else 1


def levels_side_by_side(per_level: list, spark_cpu: dict, bfs_seconds: dict, n_cores: int) -> None:
    """One line per level: frontier, new, generated, each engine's wall and
    CPU seconds and states generated per second; then both engines over the
    levels of 100,000 generated states or more."""
    if not per_level:
        return
    print(f"{'depth':>5} {'frontier':>9} {'new':>9} {'generated':>10} {'candidates':>10} {'spark s':>8} {'CPU s':>6} "
          f"{'where':>6} {'spark gen/s':>12} {'bfs s~':>7} {'CPU s~':>6} {'bfs gen/s~':>11}")
    big = [0, 0.0, 0.0, 0.0, 0.0]   # generated, spark wall, spark CPU, bfs wall, bfs CPU over the large levels
    for x in per_level:
        g = x.get("generated") or 0
        b = bfs_seconds.get(x["depth"])
        c = sum(spark_cpu.get(x["depth"], (0.0, 0.0)))
        sr = f"{g / x['seconds']:,.0f}" if x["seconds"] > 0 else ""
        br = f"{g / b[0]:,.0f}" if b and b[0] else ""
        bs, bc = (f"{b[0]:.2f}", f"{b[1]:.2f}") if b is not None else ("", "")
        cand = f"{x['candidates']:,}" if "candidates" in x else ""
        print(f"{x['depth']:>5} {x['frontier']:>9,} {'' if x['new'] is None else format(x['new'], ','):>9} {g:>10,} "
              f"{cand:>10} {x['seconds']:>8.2f} {c:>6.2f} {x['where']:>6} {sr:>12} {bs:>7} {bc:>6} {br:>11}")
        if g >= 100_000 and b:
            for i, v in enumerate((g, x["seconds"], c, b[0], b[1])):
                big[i] += v
    if big[0]:
        g, sw, sc, bw, bc = big
        print(f"levels of 100,000+ generated: spark {g / sw:,.0f} gen/s, bfs ~{g / bw:,.0f} gen/s, "
              f"ratio {bw / sw:.2f} (wall)")
        print(f"  CPU on those levels: spark {sc:.1f} s (driver, JVM, Python workers), bfs ~{bc:.1f} s; "
              f"ratio at {n_cores} busy core{'s' if n_cores > 1 else ''} {n_cores * bc / sc:.2f} (CPU)")
    else:
        print("no level generated 100,000 states or more")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", action="append", choices=["twophase-rm6", "twophase-rm7", "pip473"],
                    help="which case (repeatable; default both)")
    ap.add_argument("--master", default="local[*]")
    ap.add_argument("--pip473-model", metavar="TOML", default=str(ROOT / "models" / "pip473" / "fixed.toml"),
                    help="the PIP-473 model (default models/pip473/fixed.toml)")
    ap.add_argument("--max-seconds", type=float, default=None, help="budget per engine run (incomplete when hit)")
    ap.add_argument("--cold", action="store_true",
                    help="no warm-up: the measured run also pays the Python workers' start and the JVM's compiling")
    args = ap.parse_args()
    cases = args.case or ["twophase-rm7", "pip473"]
    if "twophase-rm6" in cases:
        report("TwoPhase, 6 RMs", load_model(ROOT / "models" / "classic" / "twophase-rm6.toml"), args)
    if "twophase-rm7" in cases:
        report("TwoPhase, 7 RMs", twophase_rm7(), args)
    if "pip473" in cases:
        m = load_model(args.pip473_model)   # in full: without the max_depth at which the gate stops fixed.toml
        report("PIP-473", replace(m, raw={k: v for k, v in m.raw.items() if k != "max_depth"}), args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
