"""A Spark standalone cluster on 127.0.0.1 for the tests: one master and
workers of one core each, started from the installed pyspark's own
`bin/spark-class` (no download), each in a process group of its own so a
worker can be killed with its executor and Python workers, and so that
`stop()` leaves nothing behind. Every JVM also dies with the test process
(PR_SET_PDEATHSIG), should pytest itself be killed.

Ports: the master's RPC port is a free port picked here; the web UIs and
the workers' ports are Spark's own pick (0); the master's REST server is
off, so nothing binds a fixed port. Logs go to the cluster folder and their
tails are shown when something does not come up."""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

START_GUARD = 120.0   # seconds a JVM may take to come up before the fixture gives up (a hang guard)


def java_missing() -> str | None:
    """Why a cluster cannot start here, or None."""
    try:
        import pyspark
    except ImportError:
        return "pyspark is not installed"
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "no java on PATH and no JAVA_HOME: the standalone cluster needs Java 17"
    if not (Path(pyspark.__file__).parent / "bin" / "spark-class").is_file():
        return "this pyspark has no bin/spark-class"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG


class Cluster:
    def __init__(self, folder: Path, workers: int = 2, memory: str = "1g", java_options: str = "") -> None:
        import pyspark

        self.folder = folder
        self.home = Path(pyspark.__file__).parent
        self.n_workers = workers
        self.memory = memory   # each worker's, for its executors (Spark's --memory)
        self.java_options = java_options   # the master's and the workers' own JVMs (SPARK_DAEMON_JAVA_OPTS)
        self.procs: dict[str, subprocess.Popen] = {}
        self.port = free_port()
        self.master = f"spark://127.0.0.1:{self.port}"

    def env(self) -> dict:
        return {
            **os.environ,
            "SPARK_HOME": str(self.home),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_LOG_DIR": str(self.folder),
            "SPARK_DAEMON_MEMORY": "256m",
            "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
            "SPARK_WORKER_OPTS": "-Dspark.worker.cleanup.enabled=false",
            **({"SPARK_DAEMON_JAVA_OPTS": self.java_options} if self.java_options else {}),
        }

    def _spawn(self, name: str, *args: str) -> subprocess.Popen:
        log = open(self.folder / f"{name}.log", "wb")
        proc = subprocess.Popen(
            [str(self.home / "bin" / "spark-class"), *args], env=self.env(), cwd=self.folder,
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True, preexec_fn=_die_with_parent,
        )
        log.close()
        self.procs[name] = proc
        return proc

    def log(self, name: str) -> str:
        try:
            return (self.folder / f"{name}.log").read_text(errors="replace")
        except OSError:
            return ""

    def _wait(self, what: str, ready, name: str) -> None:
        deadline = time.monotonic() + START_GUARD
        while not ready():
            for n, p in self.procs.items():
                if p.poll() is not None:
                    raise RuntimeError(f"{n} exited ({p.returncode}) while waiting for {what}:\n"
                                       + self.log(n)[-3000:])
            if time.monotonic() > deadline:
                raise RuntimeError(f"no {what} after {START_GUARD:g} s:\n" + self.log(name)[-3000:])
            time.sleep(0.2)

    def start(self) -> "Cluster":
        from txncheck.checker.engines.spark.probe import reachable

        self._spawn("master", "org.apache.spark.deploy.master.Master",
                    "--host", "127.0.0.1", "--port", str(self.port), "--webui-port", "0")
        self._wait("master answering as Spark", lambda: reachable(self.master, budget=1.0)[0], "master")
        for i in range(1, self.n_workers + 1):
            work = self.folder / f"worker{i}"
            work.mkdir()
            self._spawn(f"worker{i}", "org.apache.spark.deploy.worker.Worker",
                        "--host", "127.0.0.1", "--cores", "1", "--memory", self.memory, "--webui-port", "0",
                        "--work-dir", str(work), self.master)
        self._wait(f"{self.n_workers} registered workers",
                   lambda: self.log("master").count("Registering worker") >= self.n_workers, "master")
        return self

    def kill(self, name: str) -> None:
        """SIGKILL a daemon's whole process group: a worker goes with its
        executor and that executor's Python workers, as a lost machine would."""
        proc = self.procs[name]
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()

    def stop(self) -> None:
        """Stop everything this cluster started: SIGTERM to each process
        group (workers first), then SIGKILL what is left after a grace."""
        names = sorted(self.procs, key=lambda n: n == "master")
        for n in names:
            try:
                os.killpg(self.procs[n].pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 15
        for n in names:
            proc = self.procs[n]
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(proc.pid, signal.SIGKILL)   # the group: executors outlive a worker's SIGTERM otherwise
            except ProcessLookupError:
                pass
            proc.wait()

    def alive(self, grace: float = 10.0) -> list[int]:
        """Pids still running (zombies aside) in any of the cluster's process
        groups, after waiting up to `grace` seconds for them to go."""
        groups = {p.pid for p in self.procs.values()}
        deadline = time.monotonic() + grace
        while True:
            left = [pid for pid, pgrp, state in _processes() if pgrp in groups and state != "Z"]
            if not left or time.monotonic() > deadline:
                return left
            time.sleep(0.2)

    def app_log(self) -> str:
        """The master's log since the last application registered."""
        text = self.log("master")
        return text[text.rfind("Registering app"):] if "Registering app" in text else ""


def _processes():
    """(pid, process group, state) of every process, from /proc/PID/stat."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()   # after "pid (comm) "
        yield int(name), int(fields[2]), fields[0]
