"""The standard PIP-473 model on a standalone Spark cluster: per-level
figures, a checkpoint and a resume in the middle, the bounded-depth verdict,
and a projection of the time on 8, 32 and 128 cores.

    # the lead's run, on a quiet machine: 2 hours, resumed after the first hour
    .venv/bin/python bench/spark_cluster.py --max-seconds 7200 --out bench-cluster.json
    # a test of the script at a small depth: a few minutes
    .venv/bin/python bench/spark_cluster.py --max-states 60000 --resume-at 8000 --driver-below 0

What it does:
  1. starts tests/spark/cluster.py's cluster: a master and `--workers` (2)
     workers of one core and `--worker-memory` each, on 127.0.0.1;
  2. run 1: `txncheck check MODEL --engine spark --master spark://... --checkpoint
     DIR --json` as a user runs it, stopped by its budget between two levels
     (`--resume-at` distinct states, or half of `--max-seconds`): exit 3,
     incomplete, the checkpoint on disk;
  3. run 2: `--resume DIR` in a new process with the rest of the budget
     (`--max-states`; with `--max-seconds`, SIGINT when the whole budget is
     spent: it reports the levels it completed, and the level it was
     expanding, which did not fit, is not counted);
  4. while each runs, per level (each progress line the CLI prints closes one):
     wall seconds; CPU seconds of the driver's process tree and of the
     executors (executor JVMs and Python workers, under the workers); peak
     memory per role: driver Python and driver JVM (RSS), executor JVMs (RSS,
     the largest), Python workers (summed PSS of each worker's, the largest);
  5. prints one line per level (states, candidates and shuffle bytes from the
     report's `spark.per_level`, the level's Parquet bytes on disk), the
     bounded-depth verdict of the last run, and the projection.

The projection (`project`): a level k that ran on Spark took W_k executor
CPU seconds, shuffled S_k bytes, and wrote L_k bytes of Parquet. On N cores,

    T_k(N) = W_k / (N eta) + S_k (1 - 1/m) / (m B) + (L_k + L_{k-1} + 8 D_k) / D + F

with m = N / 8 machines of 8 cores, B = 1.25 GB/s per machine (10 GbE,
full bisection), D = 1 GB/s of shared storage for the level written, the
frontier read and the visited fingerprints (8 bytes for each of the D_k
distinct states). eta, the parallel efficiency, is measured here: the
executors' CPU over their cores x the wall of the Spark levels (but each
run's first, which also starts the executors' Python workers), so every
overhead of this run counts against it. F, a fixed cost per level that more
cores do not shrink (two stages of tasks to schedule, the driver's manifest
write), is an assumption: `--fixed-seconds`, 2 s by default, several times
what a small level costs on `local[2]` (docs/performance.md, "Spark levels").
A level expanded in the driver costs what it cost here. Levels beyond the
last one measured (to `--project-depth`, 17: issue 40's bar) grow as the
last one did: new states per frontier state, generated per frontier state,
CPU, shuffle and Parquet bytes per state all as measured on the last level.
Every figure is printed with its inputs; a loaded machine shows in eta (CPU
seconds are much less affected than wall seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from spark_cpu import TICK  # noqa: E402
from spark_memory import _cmdline, _pss, role, versions  # noqa: E402

MODEL = ROOT / "models" / "pip473" / "fixed-standard.toml"
INTERVAL = 0.5   # seconds between two reads of /proc
EXECUTOR_ARGS = "--conf spark.executor.memory={mem} --conf spark.executor.cores=1 pyspark-shell"
GB = 1e9
ASSUME = {"cores_per_machine": 8, "network_bytes_per_s": 1.25 * GB, "storage_bytes_per_s": 1.0 * GB}


# -- /proc: CPU and memory per role ---------------------------------------------------------
def _proc(pid: int) -> tuple[int, int, float, int, int] | None:
    """(parent, process group, CPU seconds of its own, RSS KiB, start time in ticks)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    f = text[text.rfind(")") + 2:].split()
    return (int(f[1]), int(f[2]), (int(f[11]) + int(f[12])) / TICK, int(f[21]) * os.sysconf("SC_PAGE_SIZE") // 1024,
            int(f[19]))


class Roles(threading.Thread):
    """Reads /proc every INTERVAL s: the driver's tree (`driver`: the CLI's
    pid) and the workers' trees. `cut()` closes a window and returns
    its CPU seconds per side and peak memory per role (MiB)."""

    def __init__(self, driver: int, groups: set[int]) -> None:   # groups: the worker JVMs (group leaders)
        super().__init__(daemon=True)
        self.driver, self.groups = driver, groups
        self.cpu_lock = threading.Lock()
        self.roles: dict[int, str | None] = {}
        self.peak: dict[str, float] = {}
        self.seen: dict[tuple[int, int], tuple[str, float]] = {}   # (pid, start) -> (side, CPU s)
        self.cpu0 = self.cpu_now()
        self.halt = threading.Event()
        self.lock = threading.Lock()

    def members(self) -> dict[int, tuple[str, tuple]]:
        """pid -> (side, /proc figures) of the driver's tree and of each
        worker's tree (its executor JVM, and the Python daemon, which moves
        to a process group of its own, with its workers)."""
        procs = {int(n): p for n in os.listdir("/proc") if n.isdigit() and (p := _proc(int(n))) is not None}
        kids: dict[int, list[int]] = {}
        for pid, p in procs.items():
            kids.setdefault(p[0], []).append(pid)
        out = {}
        todo = [(self.driver, "driver")] + [(g, "executors") for g in self.groups]
        while todo:
            pid, side = todo.pop()
            if pid in procs:
                out[pid] = (side, procs[pid])
                todo += [(c, side) for c in kids.get(pid, [])]
        return out

    def role_of(self, pid: int) -> str | None:
        """spark_memory.role's, and "driver-python" for the CLI's processes (the
        command runs in a child of the one started: checker/supervisor.py)."""
        r = self.roles.get(pid)
        if r is None:
            cmd = _cmdline(pid)
            r = role(cmd) or ("driver-python" if "txncheck.checker.cli" in cmd else None)
            if r is not None:
                self.roles[pid] = r
        return r

    def cpu_now(self) -> dict[str, float]:
        """CPU seconds so far: the driver's tree; the executors' JVMs and
        Python workers. Each process counts its own CPU as last read, also
        once it is gone (so a JVM that exits with its run, or a Python
        worker, is neither lost nor counted again in its parent's)."""
        with self.cpu_lock:   # the sampling thread and cut() both read
            for pid, (side, p) in self.members().items():
                if side == "driver" or self.role_of(pid) in ("executor-jvm", "python-worker"):
                    self.seen[(pid, p[4])] = (side, p[2])
            cpu = {"driver": 0.0, "executors": 0.0}
            for side, c in self.seen.values():
                cpu[side] += c
            return cpu

    def sample(self) -> None:
        self.cpu_now()   # keeps every process's CPU as last read
        mem: dict[str, float] = {}
        workers: dict[int, float] = {}
        for pid, (side, p) in self.members().items():
            r = self.role_of(pid)
            if r == "python-worker":
                key = p[0] if self.role_of(p[0]) == "python-worker" else pid   # one daemon's workers together
                workers[key] = workers.get(key, 0.0) + _pss(pid) / 1024
            elif r is not None:
                mem[r] = max(mem.get(r, 0.0), p[3] / 1024)
        if workers:
            mem["python-workers"] = max(workers.values())
        with self.lock:
            for r, v in mem.items():
                self.peak[r] = max(self.peak.get(r, 0.0), v)

    def run(self) -> None:
        while not self.halt.is_set():
            self.sample()
            self.halt.wait(INTERVAL)

    def cut(self) -> dict:
        self.sample()
        cpu = self.cpu_now()
        with self.lock:
            out = {"cpu_" + k: round(cpu[k] - self.cpu0[k], 2) for k in cpu}
            out["memory_mib"] = {r: round(v) for r, v in self.peak.items()}
            self.peak = {}
        self.cpu0 = cpu
        return out

    def stop(self) -> None:
        self.halt.set()
        self.join()


# -- one run of the CLI -----------------------------------------------------------------------
def run_cli(args, cluster, ck: Path, resume: bool, budget: list[str], hard: float | None = None) -> dict:
    """One CLI run; `hard`: a monotonic time at which it gets SIGINT (it
    then reports the levels it completed, incomplete, and exits 3)."""
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1",
           "PYSPARK_SUBMIT_ARGS": EXECUTOR_ARGS.format(mem=args.executor_memory),
           "TXNCHECK_SPARK_PARTITIONS": str(args.partitions)}
    if args.driver_below is not None:
        env["TXNCHECK_SPARK_DRIVER_BELOW"] = str(args.driver_below)
    where = ["--resume", str(ck)] if resume else ["--checkpoint", str(ck)]
    argv = [sys.executable, "-m", "txncheck.checker.cli", "check", str(args.model), "--engine", "spark",
            "--master", cluster.master, *where, "--out", str(ck.parent / "out"), "--json", *budget]
    print("$ " + " ".join(argv[1:]), flush=True)
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, env=env, cwd=ck.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, stdin=subprocess.DEVNULL)
    groups = {p.pid for n, p in cluster.procs.items() if n.startswith("worker")}
    roles = Roles(proc.pid, groups)
    roles.start()
    timer = None
    if hard is not None:
        timer = threading.Timer(max(0.0, hard - time.monotonic()), proc.send_signal, (signal.SIGINT,))
        timer.start()
    windows, errors = {}, []
    try:
        for line in proc.stderr:   # one progress line per level: "depth K: ..."
            if line.startswith("depth "):
                k = int(line.split()[1].rstrip(":"))
                windows[k] = {**roles.cut(), "wall": round(time.monotonic() - t0, 1)}
                print("  " + line.rstrip(), flush=True)
            else:
                errors.append(line)
        out = proc.stdout.read()
        proc.wait()
    finally:
        if timer is not None:
            timer.cancel()
        roles.stop()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if proc.returncode == 3 and not out.strip() and hard is not None and time.monotonic() >= hard:
        print("  (the budget ran out before this run completed a level)", flush=True)
        return None
    if proc.returncode not in (0, 1, 3) or not out.strip():
        raise RuntimeError(f"exit {proc.returncode}: {''.join(errors)[-3000:]}")
    doc = json.loads(out)
    if proc.returncode == 3 and doc["verdict"] != "incomplete":
        raise RuntimeError(f"exit 3: {''.join(errors)[-3000:]}")
    doc["_windows"], doc["_wall"], doc["_exit"] = windows, time.monotonic() - t0, proc.returncode
    return doc


def level_bytes(ck: Path, k: int) -> int:
    return sum(p.stat().st_size for p in (ck / f"level-{k:04d}").glob("part-*.parquet"))


# -- the per-level table ------------------------------------------------------------------
def rows_of(runs: list[dict], ck: Path) -> list[dict]:
    """One row per level expanded, in order over both runs: the report's
    figures, this bench's window (CPU, memory) and the Parquet bytes the
    level wrote; `distinct_before`: the states of the levels before it."""
    levels = runs[-1]["spark"]["levels"]
    rows = []
    for run_no, doc in enumerate(runs, 1):
        for x in doc["spark"]["per_level"]:
            k = x["depth"]
            rows.append({**x, **doc["_windows"].get(k, {}), "run": run_no,
                         "bytes": level_bytes(ck, k + 1) if x["new"] else 0, "distinct_before": sum(levels[:k - 1])})
    return rows


def print_rows(rows: list[dict]) -> None:
    head = (f"{'run':>3} {'depth':>5} {'frontier':>10} {'new':>11} {'generated':>12} {'candidates':>11} "
            f"{'shuffle MB':>10} {'parquet MB':>10} {'wall s':>8} {'exec CPU':>8} {'drv CPU':>7} "
            f"{'gen/CPU-s':>9} {'where':>6}  memory MiB (driver Python, driver JVM, executor JVM, Python workers)")
    print(head)
    for r in rows:
        mem = r.get("memory_mib", {})
        m = ", ".join(str(mem.get(k, "-")) for k in ("driver-python", "driver-jvm", "executor-jvm", "python-workers"))
        secs = r["seconds"]
        rate = f"{(r.get('generated') or 0) / r['cpu_executors']:,.0f}" \
            if r["where"] == "spark" and r.get("cpu_executors") else ""
        new = f"{r['new']:,}" if r["new"] is not None else ""
        print(f"{r['run']:>3} {r['depth']:>5} {r['frontier']:>10,} {new:>11} "
              f"{r.get('generated', 0) or 0:>12,} {r.get('candidates', 0):>11,} "
              f"{r.get('shuffle_bytes', 0) / 1e6:>10.1f} {r['bytes'] / 1e6:>10.1f} {secs:>8.1f} "
              f"{r.get('cpu_executors', 0):>8.1f} {r.get('cpu_driver', 0):>7.1f} {rate:>9} {r['where']:>6}  {m}")


# -- the projection -----------------------------------------------------------------------
def project(rows: list[dict], cores: int, targets: list[int], depth_to: int, fixed: float) -> dict:
    """Projected seconds for each N in `targets` (see the module doc)."""
    spark = [r for r in rows if r["where"] == "spark" and r.get("cpu_executors") and r["new"] is not None]
    driver = [r for r in rows if r["where"] == "driver"]
    if not spark:
        return {"error": "no level ran on Spark: nothing to project from"}
    # eta: how busy the executor cores were over the Spark levels (a run's first also starts
    # the executors' Python workers: left out unless it is all there is)
    later = [r for r in spark if any(q["run"] == r["run"] and q["depth"] < r["depth"] for q in spark)] or spark
    eta = min(1.0, sum(r["cpu_executors"] for r in later) / (cores * sum(r["seconds"] for r in later)))
    F = fixed
    last = spark[-1]
    per_state = {   # per frontier state of the last measured level
        "new": last["new"] / last["frontier"], "generated": last["generated"] / last["frontier"],
        "cpu": last["cpu_executors"] / last["frontier"], "shuffle": last["shuffle_bytes"] / last["frontier"],
        "parquet": last["bytes"] / max(1, last["new"]),
    }
    levels = [dict(r) for r in spark]
    frontier, depth, seen = last["new"], last["depth"] + 1, last["distinct_before"] + last["frontier"]
    prev_bytes = last["bytes"]
    while depth <= depth_to and frontier > 0:
        new = frontier * per_state["new"]
        levels.append({"depth": depth, "frontier": frontier, "new": new, "generated": frontier * per_state["generated"],
                       "cpu_executors": frontier * per_state["cpu"], "shuffle_bytes": frontier * per_state["shuffle"],
                       "bytes": new * per_state["parquet"], "prev_bytes": prev_bytes, "distinct_before": seen,
                       "extrapolated": True})
        seen += frontier
        prev_bytes = new * per_state["parquet"]
        frontier, depth = new, depth + 1
    in_driver = sum(r["seconds"] for r in driver)
    out = {"F": F, "eta": eta, "measured_cores": cores, "per_state": per_state, "driver_levels_s": in_driver,
           "assumptions": ASSUME, "levels": [(r["depth"], r["frontier"], r.get("extrapolated", False)) for r in levels],
           "seconds": {}}
    prev = {r["depth"]: r["bytes"] for r in rows}
    for n in targets:
        m = max(1.0, n / ASSUME["cores_per_machine"])
        measured = extra = 0.0
        for r in levels:
            read = r.get("prev_bytes", prev.get(r["depth"] - 1, 0))
            t = (r["cpu_executors"] / (n * eta)
                 + r["shuffle_bytes"] * (1 - 1 / m) / (m * ASSUME["network_bytes_per_s"])
                 + (r["bytes"] + read + 8 * r["distinct_before"]) / ASSUME["storage_bytes_per_s"] + F)
            if r.get("extrapolated"):
                extra += t
            else:
                measured += t
        out["seconds"][n] = {"measured_levels": in_driver + measured, "to_depth": in_driver + measured + extra}
    return out


def print_projection(p: dict, depth_to: int, rows: list[dict]) -> None:
    if "error" in p:
        print(f"projection: {p['error']}")
        return
    a = p["assumptions"]
    ps = p["per_state"]
    measured_to = max(r["depth"] for r in rows if r["where"] == "spark")
    print(f"\nprojection (bench/spark_cluster.py `project`): T_k(N) = W_k/(N eta) + S_k(1-1/m)/(m B) + "
          f"(L_k + L_k-1 + 8 D_k)/D + F per Spark level, the driver's levels as measured "
          f"({p['driver_levels_s']:.0f} s)")
    print(f"  eta {p['eta']:.2f} (the executor cores' utilisation on the Spark levels here, "
          f"{p['measured_cores']} cores), F {p['F']:.1f} s per level (--fixed-seconds); "
          f"m = N/{a['cores_per_machine']} machines, B {a['network_bytes_per_s'] / GB:.2f} GB/s per machine, "
          f"D {a['storage_bytes_per_s'] / GB:.2f} GB/s shared storage")
    ext = [d for d, _, e in p["levels"] if e]
    if ext:
        print(f"  levels {ext[0]}..{ext[-1]} extrapolated from level {measured_to}: per frontier state "
              f"{ps['new']:.2f} new, {ps['generated']:.2f} generated, {ps['cpu'] * 1e6:.0f} executor CPU-us, "
              f"{ps['shuffle']:.0f} shuffle bytes; {ps['parquet']:.0f} Parquet bytes per new state; sizes "
              + ", ".join(f"{d}: {f:,.0f}" for d, f, e in p["levels"] if e))
    if ext:
        d, f, _ = p["levels"][-1]
        print(f"  level {d} would hold {f:,.0f} frontier states: {f * ps['shuffle'] / 1e12:.2f} TB shuffled, "
              f"{f * ps['new'] * ps['parquet'] / 1e9:.0f} GB of Parquet written, "
              f"{f * ps['cpu'] / 3600:,.0f} executor CPU-hours")
    print(f"  {'cores':>6} {'levels measured (to depth ' + str(measured_to) + ')':>34} {'to depth ' + str(depth_to):>16}")
    for n, s in p["seconds"].items():
        print(f"  {n:>6} {s['measured_levels'] / 60:>31.1f} min {s['to_depth'] / 3600:>14.2f} h")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=str(MODEL))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--worker-memory", default="6g", help="each worker's memory (Spark's --memory)")
    ap.add_argument("--executor-memory", default="2g")
    ap.add_argument("--partitions", type=int, default=64,
                    help="TXNCHECK_SPARK_PARTITIONS: a merge task holds 1/P of a level's candidates")
    ap.add_argument("--driver-below", type=int, default=None, metavar="N", help="TXNCHECK_SPARK_DRIVER_BELOW")
    budget = ap.add_mutually_exclusive_group(required=True)
    budget.add_argument("--max-seconds", type=float,
                        help="both runs' wall budget: run 1 stops between levels after half of it, run 2 gets "
                             "SIGINT at its end (its level in progress then is lost: it did not fit)")
    budget.add_argument("--max-states", type=int, help="run 2 stops at this many distinct states")
    ap.add_argument("--resume-at", type=int, help="with --max-states: run 1 stops at this many distinct states")
    ap.add_argument("--project-depth", type=int, default=17)
    ap.add_argument("--fixed-seconds", type=float, default=2.0,
                    help="the projection's fixed cost per Spark level (scheduling, the driver's writes)")
    ap.add_argument("--keep", metavar="DIR", help="keep the checkpoint in DIR (default: a temporary folder)")
    ap.add_argument("--out", metavar="JSON", help="write every figure to this file")
    args = ap.parse_args(argv)
    if args.max_states is not None and args.resume_at is None:
        ap.error("--max-states needs --resume-at")
    from tests.spark.cluster import Cluster

    t0 = time.monotonic()
    print(versions(), flush=True)
    with tempfile.TemporaryDirectory(prefix="txncheck-spark-cluster-") as tmp:
        folder = Path(args.keep or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "cluster").mkdir(exist_ok=True)
        cluster = Cluster(folder / "cluster", workers=args.workers, memory=args.worker_memory).start()
        ck = folder / "run"
        try:
            end = None
            if args.max_seconds is not None:   # run 1 stops between levels after half; run 2 is cut at the end
                end = time.monotonic() + args.max_seconds
                first = ["--max-seconds", f"{args.max_seconds / 2:g}"]
            else:
                first = ["--max-states", str(args.resume_at)]
            runs = [run_cli(args, cluster, ck, False, first, end)]
            print(f"run 1: {runs[0]['verdict']} ({runs[0]['incomplete_reason']}), "
                  f"{runs[0]['distinct_states']:,} distinct; resuming", flush=True)
            second = ["--max-states", str(args.max_states)] if end is None else []
            if end is None or time.monotonic() < end:
                resumed = run_cli(args, cluster, ck, True, second, end)
                if resumed is not None:
                    runs.append(resumed)
        finally:
            cluster.stop()
            if left := cluster.alive():
                print(f"cluster processes left running: {left}", file=sys.stderr)
        rows = rows_of(runs, ck)
    last = runs[-1]
    print(f"\n{Path(args.model).name} on a standalone cluster of {args.workers} one-core workers "
          f"(worker memory {args.worker_memory}, executors {args.executor_memory}), P = {args.partitions}; "
          f"run 1 stopped at {runs[0]['distinct_states']:,} distinct"
          + (", run 2 resumed it" if len(runs) > 1 else "; run 2 completed no level within the budget"))
    print_rows(rows)
    sp = last["spark"]
    print(f"\nverdict: {last['verdict']}" + (f" ({last['incomplete_reason']})" if last["incomplete_reason"] else "")
          + f"; {last['distinct_states']:,} distinct, {last['states_generated']:,} generated, "
          f"{last['seconds']:.0f} s in the engine over both runs")
    if last["verdict"] == "incomplete" and sp.get("checked_depth"):
        d = sp["checked_depth"]
        print(f"  every state up to depth {d} was checked: no violation within {d - 1} steps of an initial state")
    p = project(rows, args.workers, [8, 32, 128], args.project_depth, args.fixed_seconds)
    print_projection(p, args.project_depth, rows)
    print(f"\nbench wall time {time.monotonic() - t0:.0f} s (the cluster's start included)")
    if args.out:
        Path(args.out).write_text(json.dumps({"rows": rows, "runs": [
            {k: v for k, v in r.items() if not k.startswith("_")} for r in runs], "projection": p}, indent=1,
            default=str))
    return 0 if last["verdict"] in ("ok", "incomplete") else 1


if __name__ == "__main__":
    sys.exit(main())
