"""Peak memory of the spark engine's processes against distinct states.

    .venv/bin/python bench/spark_memory.py                          # TwoPhase 5, 6, 7 RMs, standalone cluster
    .venv/bin/python bench/spark_memory.py --master 'local[2]'      # embedded Spark: the executor is the driver's JVM
    .venv/bin/python bench/spark_memory.py --rm 6 --rm 7 --driver-below 0   # every level on the executors

Each model is checked by the CLI as a user runs it (`txncheck check MODEL
--engine spark --checkpoint DIR --json`), in a process of its own, while
this process reads /proc every 0.2 s and keeps, per role, the peak resident
set size (RSS):

  * driver Python: the CLI's process (the larger of its VmHWM and the
    report's own `peak_memory_mb`);
  * driver JVM: its SparkSubmit JVM (VmHWM). On local[N] the executor lives
    in this JVM, so its tasks' memory is counted here;
  * executors: on the cluster (default), each executor JVM, by the worker it
    runs on (VmHWM), and apart its Python workers (pyspark.daemon and the
    workers it forks): the peak of their summed proportional set size (PSS;
    the forked workers share the daemon's pages, which RSS would count in
    each). On local[N] the Python workers are the driver JVM's.

The cluster is tests/spark/cluster.py's: a master and two workers of one
core each on 127.0.0.1, started from pyspark's own bin/spark-class;
executors of 512 MiB; everything it started is stopped at the end. The
driver has spark.driver.memory 1g (checker/engines/spark/session.py).

Every model is also checked by bfs in this process, before its Spark run
(fingerprints, no graph): the counts must be equal, or the bench says so
and exits 1. `driver MiB / M states` is the growth of the driver's peak
(Python + JVM) from the first row, per million distinct states more; a flat
driver shows as a figure near zero. Nothing here asserts a time; the
machine's other load shows in the wall seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

INTERVAL = 0.2   # seconds between two reads of /proc
GUARD = 3600     # seconds: a hang guard for one run, never a timing check
TWOPHASE = ROOT / "models" / "classic" / "twophase-rm6.toml"
EXECUTOR_ARGS = "--conf spark.executor.memory=512m --conf spark.executor.cores=1 pyspark-shell"
COLUMNS = ("model", "distinct", "generated", "depth", "levels on Spark", "wall s",
           "driver Python", "driver JVM", "executor JVMs", "Python workers (PSS)", "driver MiB / M states")


# -- /proc ------------------------------------------------------------------
def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, process group) of a process, or None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()
    return int(fields[1]), int(fields[2])


def _memory(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) in KiB; zeros for a process that is gone (or a zombie)."""
    rss = hwm = 0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("VmHWM:"):
                hwm = int(line.split()[1])
    except OSError:
        pass
    return rss, hwm


def _pss(pid: int) -> int:
    """Proportional set size in KiB (a page shared by n processes counts 1/n
    in each); 0 for a process that is gone."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def role(cmd: list[str]) -> str | None:
    """What a Spark process is, from its command line: "driver-jvm",
    "executor-jvm", "python-worker", or None (a shell wrapper, Spark's
    launcher, a master or worker daemon)."""
    if not cmd or not cmd[0]:
        return None
    if os.path.basename(cmd[0]) == "java":
        if "org.apache.spark.deploy.SparkSubmit" in cmd:
            return "driver-jvm"
        if "org.apache.spark.executor.CoarseGrainedExecutorBackend" in cmd:
            return "executor-jvm"
        return None
    if any(a.startswith("pyspark.daemon") or a.startswith("pyspark.worker") for a in cmd):
        return "python-worker"
    return None


class Sampler(threading.Thread):
    """Peak RSS per role of the driver's process tree and, on a cluster, of
    the workers' process groups (`groups`: process group -> worker name),
    read every INTERVAL seconds until `stop()`. Peaks in MiB:
    `driver_python`, `driver_jvm`, `driver_workers` (the summed Python
    workers of the driver JVM), and `executors`: worker name -> (JVM, summed
    Python workers)."""

    def __init__(self, driver: int, groups: dict[int, str] | None = None) -> None:
        super().__init__(daemon=True)
        self.driver, self.groups = driver, groups or {}
        self.hwm: dict[str, int] = {}      # role key -> peak KiB of one process (VmHWM)
        self.sums: dict[str, int] = {}     # role key -> peak KiB of a group's summed PSS
        self.roles: dict[int, str | None] = {}
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.is_set():
            self.sample()
            self.halt.wait(INTERVAL)
        self.sample()

    def stop(self) -> None:
        self.halt.set()
        self.join()

    def _members(self) -> dict[int, str]:
        """pid -> key of every process of interest: the driver's tree, and each
        worker's process group; the key ("driver", a worker's name) says whose
        JVM or Python worker it is."""
        procs = {}
        for name in os.listdir("/proc"):
            if name.isdigit() and (st := _stat(int(name))) is not None:
                procs[int(name)] = st
        children: dict[int, list[int]] = {}
        for pid, (ppid, _) in procs.items():
            children.setdefault(ppid, []).append(pid)
        out: dict[int, str] = {}
        todo = [(self.driver, "driver")]
        todo += [(pid, self.groups[pg]) for pid, (_, pg) in procs.items() if pg in self.groups and pid == pg]
        while todo:
            pid, key = todo.pop()
            out[pid] = key
            todo += [(c, key) for c in children.get(pid, ())]
        return out

    def sample(self) -> None:
        members = self._members()
        sums: dict[str, int] = {}
        for pid, key in members.items():
            r = self.roles.get(pid)
            if r is None:   # read again until known: spark-submit's pid becomes the JVM's (exec)
                r = self.roles[pid] = "driver-python" if pid == self.driver else role(_cmdline(pid))
            if r is None:
                continue
            if r == "python-worker":
                sums[key] = sums.get(key, 0) + _pss(pid)
            else:
                k = f"{key}/{r}"
                self.hwm[k] = max(self.hwm.get(k, 0), *_memory(pid))
        for key, kib in sums.items():
            self.sums[key] = max(self.sums.get(key, 0), kib)

    def peaks(self) -> dict:
        mib = lambda kib: round(kib / 1024)   # noqa: E731
        names = sorted(set(self.groups.values()))
        return {
            "driver_python": mib(self.hwm.get("driver/driver-python", 0)),
            "driver_jvm": mib(self.hwm.get("driver/driver-jvm", 0)),
            "driver_workers": mib(self.sums.get("driver", 0)),
            "executors": {n: (mib(self.hwm.get(f"{n}/executor-jvm", 0)), mib(self.sums.get(n, 0))) for n in names},
        }


# -- one run ----------------------------------------------------------------
def twophase(rm: int, folder: Path) -> Path:
    """A TwoPhase model file with `rm` resource managers."""
    path = folder / f"twophase-rm{rm}.toml"
    text = TWOPHASE.read_text().split("[expect]")[0].replace("rm = 6", f"rm = {rm}")
    path.write_text(text.replace("TwoPhase with 6 RMs", f"TwoPhase with {rm} RMs"))
    return path


def bfs_counts(model: Path) -> tuple:
    """(verdict, distinct, generated, depth) by the bfs engine, in this process."""
    from txncheck.checker.api import check_model

    o = check_model(model, keep_graph=False, options={"fingerprints": True}).outcome
    return o.verdict, o.distinct_states, o.states_generated, o.depth


def measure(model: Path, folder: Path, *, master: str = "local[2]", cluster=None,
            driver_below: int | None = None) -> dict:
    """Check `model` on Spark in a CLI process of its own, sampling the RSS of
    its processes (and, given `cluster`, of the cluster's workers). Returns
    the report's counts and levels, the wall seconds and `Sampler.peaks()`."""
    ck = Path(tempfile.mkdtemp(prefix="ck-", dir=folder))
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    if cluster is not None:
        master = cluster.master
        env["PYSPARK_SUBMIT_ARGS"] = EXECUTOR_ARGS
    if driver_below is not None:
        env["TXNCHECK_SPARK_DRIVER_BELOW"] = str(driver_below)
    argv = [sys.executable, "-m", "txncheck.checker.cli", "check", str(model), "--engine", "spark",
            "--master", master, "--checkpoint", str(ck / "run"), "--out", str(ck / "out"),
            "--json", "--quiet", "--no-graph"]
    groups = {p.pid: n for n, p in cluster.procs.items() if n.startswith("worker")} if cluster else {}
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)
    sampler = Sampler(proc.pid, groups)
    sampler.start()
    try:
        out, err = proc.communicate(timeout=GUARD)
    finally:
        sampler.stop()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{model.name} on {master}: exit {proc.returncode}\n{err[-3000:]}")
    doc = json.loads(out)
    peaks = sampler.peaks()
    peaks["driver_python"] = max(peaks["driver_python"], round(doc["peak_memory_mb"]))
    per_level = doc["spark"]["per_level"]
    return {
        "model": model.stem, "verdict": doc["verdict"], "distinct": doc["distinct_states"],
        "generated": doc["states_generated"], "depth": doc["depth"], "wall": wall,
        "levels": len(per_level), "on_spark": sum(x["where"] == "spark" for x in per_level),
        "master": doc["spark"]["master"], **peaks,
    }


# -- the table --------------------------------------------------------------
def table(rows: list[dict]) -> str:
    """One Markdown table: a row per run, peaks in MiB."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|---|" + "---:|" * (len(COLUMNS) - 1)]
    first = rows[0] if rows else None
    for r in rows:
        driver = r["driver_python"] + r["driver_jvm"]
        growth = ""
        if r is not first and r["distinct"] > first["distinct"]:
            d0 = first["driver_python"] + first["driver_jvm"]
            growth = f"{(driver - d0) / (r['distinct'] - first['distinct']) * 1e6:+,.0f}"
        if r["executors"]:
            jvms = ", ".join(str(j) for j, _ in r["executors"].values())
            workers = ", ".join(str(w) for _, w in r["executors"].values())
        else:
            jvms, workers = "in the driver JVM", str(r["driver_workers"])
        cells = [r["model"], f"{r['distinct']:,}", f"{r['generated']:,}", str(r["depth"]),
                 f"{r['on_spark']} of {r['levels']}", f"{r['wall']:.1f}", str(r["driver_python"]),
                 str(r["driver_jvm"]), jvms, workers, growth]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def versions() -> str:
    import pyspark

    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        if subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "checker", "bench"],
                          capture_output=True, text=True).stdout.strip():
            commit += " (with uncommitted changes)"
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()
    return (f"Python {platform.python_version()}, pyspark {pyspark.__version__}, "
            f"{java[0] if java else 'java ?'}, commit {commit}, {os.cpu_count()} cores")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rm", type=int, action="append", help="TwoPhase's RMs (repeatable; default 5, 6, 7)")
    ap.add_argument("--master", default=None,
                    help="a local[N] master instead of the standalone cluster of two one-core workers")
    ap.add_argument("--driver-below", type=int, default=None, metavar="N",
                    help="TXNCHECK_SPARK_DRIVER_BELOW for the runs (default: the engine's, 10,000)")
    args = ap.parse_args(argv)
    if args.master is not None and not args.master.startswith("local"):
        ap.error("--master: a local[N] master; without it the bench starts its own cluster")
    sizes = args.rm or [5, 6, 7]
    t0 = time.monotonic()
    print(versions(), flush=True)
    rows, differ = [], []
    with tempfile.TemporaryDirectory(prefix="txncheck-spark-memory-") as tmp:
        folder = Path(tmp)
        cluster = None
        if args.master is None:
            from tests.spark.cluster import Cluster

            (folder / "cluster").mkdir()
            cluster = Cluster(folder / "cluster").start()
        try:
            for rm in sizes:
                model = twophase(rm, folder)
                want = bfs_counts(model)
                r = measure(model, folder, master=args.master or "local[2]", cluster=cluster,
                            driver_below=args.driver_below)
                got = (r["verdict"], r["distinct"], r["generated"], r["depth"])
                if got != want:
                    differ.append(f"{model.stem}: spark {got}, bfs {want}")
                print(f"  {model.stem}: {r['distinct']:,} distinct (bfs {want[1]:,}), {r['wall']:.1f} s", flush=True)
                rows.append(r)
        finally:
            if cluster is not None:
                cluster.stop()
                if left := cluster.alive():
                    print(f"cluster processes left running: {left}", file=sys.stderr)
    where = (f"a standalone cluster of {len(rows[0]['executors'])} one-core workers, executors of 512 MiB"
             if cluster is not None else rows[0]["master"])
    below = f"{args.driver_below:,}" if args.driver_below is not None else "10,000 (the default)"
    print(f"\nTwoPhase on {where}; frontiers below {below} states expanded in the driver; "
          + ("counts equal bfs's." if not differ else "counts DIFFER from bfs's:"))
    for d in differ:
        print("  " + d)
    print("Peak RSS in MiB (Python workers: their summed PSS); executors listed by worker; driver MiB / M states:\n"
          "the growth of the driver's peak (Python + JVM) from the first row, per million distinct states more.")
    print()
    print(table(rows))
    print(f"\nbench wall time {time.monotonic() - t0:.0f} s (the cluster's start and the bfs checks included)")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
