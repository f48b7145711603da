"""The Spark session the `spark` engine and `sweep` run on.

One session per process: an active session (a test suite's, a notebook's) is
reused as it is; otherwise one is built for `master` (default `local[*]`)
with the UI off and a modest number of shuffle partitions. Python workers
run this interpreter, so they import the same txncheck.
"""

from __future__ import annotations

import os
import shutil
import sys

from ..errors import EngineError, EnvironmentFault

DEFAULT_MASTER = "local[*]"
JAVA_HINT = "Spark needs Java 17 (apt-get install -y openjdk-17-jre-headless)"


def spark_session(master: str | None = None):
    """The active session, or a new one for `master`."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        raise EnvironmentFault(f"engine 'spark': no java on PATH; {JAVA_HINT}")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.master(master or DEFAULT_MASTER)
        .appName("txncheck")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.driver.memory", "1g")
    )
    try:
        session = builder.getOrCreate()
    except Exception as exc:  # the JVM did not start: usually Java, or a bad master URL
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise EnvironmentFault(f"cannot start Spark (master {master or DEFAULT_MASTER}): {first}; {JAVA_HINT}") from None
    session.sparkContext.setLogLevel("ERROR")
    return session


def check_master(master: str | None, shared_dir: str | None) -> None:
    """Refuse a cluster run before Spark starts (which takes a minute to give
    up on a master it cannot reach): a cluster needs a shared checkpoint
    folder (bad usage, exit 2), and the master must answer on its port
    (EnvironmentFault, exit 3)."""
    import socket

    if not master or master.startswith("local"):
        return
    if not shared_dir:
        raise EngineError("engine 'spark' on a cluster needs --checkpoint DIR on storage every executor shares")
    if not master.startswith("spark://"):
        return   # yarn, k8s, ...: Spark's own checks
    errors = []
    for hostport in master.removeprefix("spark://").split(","):
        host, _, port = hostport.rpartition(":")
        if not host or not port.isdigit():
            raise EngineError(f"--master {master}: expected spark://HOST:PORT")
        try:
            socket.create_connection((host, int(port)), timeout=5).close()
            return
        except OSError as exc:
            errors.append(f"{hostport}: {exc.strerror or exc}")
    raise EnvironmentFault(f"cannot reach the Spark master ({'; '.join(errors)})")


def is_local(session) -> bool:
    return session.sparkContext.master.startswith("local")
