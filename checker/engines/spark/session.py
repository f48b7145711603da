"""The Spark session the `spark` engine and `sweep` run on.

One session per process: an active session (a test suite's, a notebook's) is
reused as it is; otherwise one is built for `master` (default `local[*]`)
with the UI off and a modest number of shuffle partitions. Python workers
run this interpreter, so they import the same txncheck.

A local session's JVM compiles with its first tier only
(`LOCAL_JVM_OPTIONS`), unless PYSPARK_SUBMIT_ARGS sets the driver's Java
options. A local session listens on loopback only: Spark's driver binds its RPC and
block-manager ports to the host's own address (`Utils.localHostName`, the
first non-loopback one), reachable from the network, unless SPARK_LOCAL_IP
or `spark.driver.host`/`spark.driver.bindAddress` say where. txncheck
gives the JVM SPARK_LOCAL_IP=127.0.0.1 for a `local` master when the
environment does not set it, so a setting given by the user still wins.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import sys
import threading

from ...errors import EngineError, EnvironmentFault

DEFAULT_MASTER = "local[*]"
LOOPBACK = "127.0.0.1"
# A local session's JVM only schedules tasks and moves the shuffle's bytes; the Python
# workers do the work. Its optimizing compiler (C2) spent 1.2 s of CPU in a 30 s run
# of TwoPhase with 7 RMs on 2 cores (bench/spark_vs_bfs.py), more than the JVM's task
# threads; stopping at the first tier (C1) saves that and costs the task threads nothing
# measurable (docs/performance.md, "Spark and bfs side by side").
LOCAL_JVM_OPTIONS = "-XX:TieredStopAtLevel=1"
# Spark's local master forms (SparkMasterRegex in core/.../SparkContext.scala): local,
# local[N], local[*], local[N, F], local[*, F]; local-cluster[W, C, M] (its tests' mini cluster).
_LOCAL = re.compile(r"local(\[([0-9]+|\*)(\s*,\s*[0-9]+)?\])?")
_LOCAL_CLUSTER = re.compile(r"local-cluster\[\s*([0-9]+)\s*,\s*([0-9]+)\s*,\s*([0-9]+)\s*]")
JAVA_HINT = "Spark needs Java 17 (apt-get install -y openjdk-17-jre-headless)"


def spark_session(master: str | None = None):
    """The active session, or a new one for `master`."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    if (master or DEFAULT_MASTER).startswith("local"):
        check_local_master(master or DEFAULT_MASTER)
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        raise EnvironmentFault(f"engine 'spark': no java on PATH; {JAVA_HINT}")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    local = (master or DEFAULT_MASTER).startswith("local")
    builder = (
        SparkSession.builder.master(master or DEFAULT_MASTER)
        .appName("txncheck")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.driver.memory", "1g")
        # A level's shuffle files go once the driver's JVM collects its RDD; Spark forces that
        # collection every 30 min by default, so a long run's disk would hold many levels'.
        .config("spark.cleaner.periodicGC.interval", "5min")
    )
    submit = os.environ.get("PYSPARK_SUBMIT_ARGS", "")
    if local and "java-options" not in submit and "extraJavaOptions" not in submit:
        builder = builder.config("spark.driver.extraJavaOptions", LOCAL_JVM_OPTIONS)
    try:
        session = _quietly(builder.getOrCreate, local=local)
    except Exception as exc:  # the JVM did not start: usually Java, or a bad master URL
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise EnvironmentFault(f"cannot start Spark (master {master or DEFAULT_MASTER}): {first}; {JAVA_HINT}"
                               + ("" if _debug() else " (--debug shows the JVM's own log)")) from None
    session.sparkContext.setLogLevel("ERROR")
    _remember_sigint()
    return session


def _debug() -> bool:
    return os.environ.get("TXNCHECK_DEBUG") == "1" or "--debug" in sys.argv


def _quietly(start, local: bool = False):
    """Start the JVM with its stderr on /dev/null (unless --debug): its log
    lines, and the Python workers' tracebacks that it relays, never reach
    the terminal; a failure still reaches txncheck as an exception and ends
    as one line. py4j's own records (logged on the root logger, which would
    print them as tracebacks on Ctrl-C) are dropped the same way. The JVM
    dies with this process (SIGTERM, so Spark's shutdown hooks remove its
    temp folders), also when Ctrl-C lands while it starts: pyspark would
    leave it running. For a `local` master its environment gets
    SPARK_LOCAL_IP=127.0.0.1 unless it has one (see the module doc)."""
    import pyspark.java_gateway as gateway

    real_popen, launched = gateway.Popen, []

    def popen(cmd, **kw):
        inner = kw.get("preexec_fn")

        def preexec():
            if inner is not None:
                inner()
            _die_with_parent()

        if threading.current_thread() is threading.main_thread():  # PDEATHSIG is tied to this thread
            kw["preexec_fn"] = preexec
        if local:
            env = dict(kw.get("env") or os.environ)
            env.setdefault("SPARK_LOCAL_IP", LOOPBACK)
            kw["env"] = env
        launched.append(real_popen(cmd, **kw))
        return launched[-1]

    setattr(gateway, "Popen", popen)   # the name pyspark launches spark-submit with, replaced for a while
    quiet = not _debug()
    if quiet:
        _drop_spark_log_records()
        sys.stderr.flush()
        saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)  # the JVM (spark-submit) inherits fd 2
    try:
        return start()
    except BaseException:
        for proc in launched:  # interrupted or failed while it started
            if proc.poll() is None:
                proc.terminate()
        raise
    finally:
        setattr(gateway, "Popen", real_popen)
        if quiet:
            os.dup2(saved, 2)
            os.close(saved)
            os.close(devnull)


def _die_with_parent() -> None:
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass


def _drop_spark_log_records() -> None:
    import logging

    root = logging.getLogger()
    if any(isinstance(f, _NotSpark) for h in root.handlers for f in h.filters):
        return
    if not root.handlers:  # else py4j's logging.exception() would add a stderr handler (basicConfig)
        handler = logging.StreamHandler()
        handler.setLevel(logging.WARNING)
        root.addHandler(handler)
    for h in root.handlers:
        h.addFilter(_NotSpark())


class _NotSpark:
    """A logging filter: no record from py4j or pyspark."""

    def filter(self, record) -> bool:
        return not record.pathname.startswith(_SPARK_DIRS)


def _spark_dirs() -> tuple[str, ...]:
    import importlib.util

    dirs: list[str] = []
    for name in ("py4j", "pyspark"):
        spec = importlib.util.find_spec(name)
        if spec and spec.submodule_search_locations:
            dirs.extend(os.path.join(d, "") for d in spec.submodule_search_locations)
    return tuple(dirs)


_SPARK_DIRS = _spark_dirs()


def _remember_sigint() -> None:
    """pyspark replaces the SIGINT handler with its own (cancel the jobs, raise
    KeyboardInterrupt); chain it to txncheck's record of the signal, so an
    interrupt that py4j swallows still cannot end in a success."""
    from ... import failures

    if threading.current_thread() is not threading.main_thread():
        return
    spark_handler = signal.getsignal(signal.SIGINT)
    if not callable(spark_handler) or getattr(spark_handler, "_txncheck", False):
        return

    def on_sigint(signum, frame):
        if not failures.interrupted:
            failures.interrupted.append("SIGINT")
        spark_handler(signum, frame)

    on_sigint._txncheck = True  # type: ignore[attr-defined]  # a mark on the function, read by getattr above
    signal.signal(signal.SIGINT, on_sigint)


def check_master(master: str | None, shared_dir: str | None) -> None:
    """Refuse a cluster run before Spark starts (which takes a minute to give
    up on a master it cannot reach): a cluster needs a shared checkpoint
    folder (bad usage, exit 2), and a spark:// master must answer as Spark
    on its port (`spark/probe.py`; EnvironmentFault, exit 3), all within
    `spark.probe.BUDGET` seconds."""
    from .probe import reachable, split_master

    if not master:
        return
    if master.startswith("local"):
        check_local_master(master)
        return
    if not shared_dir:
        raise EngineError("engine 'spark' on a cluster needs --checkpoint DIR on storage every executor shares")
    if not master.startswith("spark://"):
        return   # yarn, k8s, ...: Spark's own checks
    try:
        split_master(master)
    except ValueError:
        raise EngineError(f"--master {master}: expected spark://HOST:PORT") from None
    ok, errors = reachable(master)
    if not ok:
        raise EnvironmentFault(f"cannot reach the Spark master ({'; '.join(errors)})")


def check_local_master(master: str) -> None:
    """A `local...` master Spark would refuse is refused here, in one line:
    Spark itself fails only after its JVM started, and the failure reads like
    a missing Java."""
    if _LOCAL_CLUSTER.fullmatch(master):
        return
    m = _LOCAL.fullmatch(master)
    if m is None:
        raise EngineError(f"--master {master}: expected local, local[N], local[*] or local[N,F] "
                          "(N threads, F task failures allowed)")
    if m.group(2) is not None and m.group(2) != "*" and int(m.group(2)) == 0:
        raise EngineError(f"--master {master}: a local master needs at least one thread")


def is_local(session) -> bool:
    return session.sparkContext.master.startswith("local")
