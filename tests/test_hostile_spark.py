"""Class 10 of issue 24: on a violation, Spark and bfs agree on the verdict
and on the counterexample's (shortest) length, and differ exactly as the
The user guide (docs/guide.md) says: Spark finishes the level before it stops, so its counts and depth
can be larger. Its figures for models/pip473/orphan-op.toml are
checked against both engines here."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from .test_hostile_outputs import full_out  # noqa: F401  (a fixture: a full 64 KiB tmpfs)

REPO = Path(__file__).resolve().parent.parent
MODEL = REPO / "models" / "pip473" / "orphan-op.toml"

pytestmark = [pytest.mark.spark, pytest.mark.slow]  # starts Spark: the CI tier, as tests/spark/conftest.py says
pytest.importorskip("pyspark")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs Java", allow_module_level=True)


def test_spark_differs_from_bfs_on_a_violation_exactly_as_the_readme_says(tmp_path):
    from txncheck.checker.api import check_model

    bfs = check_model(MODEL, engine="bfs", out_dir=tmp_path / "bfs").outcome
    spark = check_model(MODEL, engine="spark", out_dir=tmp_path / "spark").outcome
    assert bfs.verdict == spark.verdict == "violation"
    [vb], [vs] = bfs.violations, spark.violations
    assert (vb.property, vb.length) == (vs.property, vs.length) == ("NoOrphanOp", 11)
    assert spark.distinct_states >= bfs.distinct_states and spark.states_generated >= bfs.states_generated
    assert spark.depth in (bfs.depth, bfs.depth + 1)

    readme = (REPO / "docs" / "guide.md").read_text(encoding="utf-8")
    m = re.search(r"orphan-op\.toml`: (\d+) distinct, (\d+) generated, depth (\d+),\s+against bfs's (\d+), (\d+), "
                  r"depth (\d+); both traces have the same length", readme)
    assert m, "the user guide's statement of how Spark differs from bfs is missing"
    said = [int(x) for x in m.groups()]
    assert said == [spark.distinct_states, spark.states_generated, spark.depth,
                    bfs.distinct_states, bfs.states_generated, bfs.depth]


# -- class 3: Ctrl-C on Spark --------------------------------------------------------------

SIGINT_AT = round(__import__("random").Random(24).uniform(1.0, 8.0), 2)  # seeded: JVM start-up or the search


def _children(pid: int) -> list[int]:
    kids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    kids.append(int(d.name))
            except (OSError, ValueError, IndexError):
                pass
    return kids


def test_ctrl_c_on_spark_is_one_line_and_leaves_no_jvm(tmp_path):
    """Ctrl-C used to print py4j's tracebacks (logged on the root logger) and
    Spark's JVM log lines; during the JVM's start-up it also left the JVM
    running. Now: exit 3, exactly one line on stderr, no JVM left."""
    import signal
    import subprocess
    import sys
    import time

    # every level on Spark: below 10,000 states a level is expanded in the driver, and
    # this model's levels all are (0.7 s, no JVM)
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONHASHSEED": "0", "TXNCHECK_SPARK_DRIVER_BELOW": "0"}
    env.pop("TXNCHECK_DEBUG", None)
    model = REPO / "models" / "classic" / "twophase-rm6.toml"   # about a minute on local[1]
    p = subprocess.Popen([sys.executable, "-m", "txncheck.checker.cli", "check", str(model), "--engine", "spark",
                          "--master", "local[1]", "--quiet", "--out", str(tmp_path / "out")],
                         cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         stdin=subprocess.DEVNULL)
    jvms: set[int] = set()
    deadline = time.monotonic() + SIGINT_AT
    while time.monotonic() < deadline:   # remember the JVM (spark-submit execs into it) as it starts
        jvms.update(_children(p.pid))
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    try:
        _, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        for pid in [p.pid, *jvms]:   # a JVM left running holds the stderr pipe open
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _, err = p.communicate(timeout=30)
        pytest.fail(f"no exit (or a JVM holding stderr) within 60 s of SIGINT: {err[-2000:]}")
    assert err.strip().splitlines() == ["txncheck: error: interrupted (SIGINT); the run is incomplete"], err[-3000:]
    assert p.returncode == 3
    end = time.monotonic() + 20
    while any(Path(f"/proc/{j}").exists() for j in jvms) and time.monotonic() < end:
        time.sleep(0.2)
    alive = [j for j in jvms if Path(f"/proc/{j}").exists()]
    for j in alive:
        os.kill(j, signal.SIGKILL)
    assert not alive, "Spark's JVM outlived the interrupted run"


# -- issue 38, item 11: a full disk, a malformed local master, where Spark listens ----------

@pytest.mark.slow
def test_spark_checkpoint_on_a_full_disk_is_an_environment_fault(tmp_path, full_out):
    """The first level's write meets a full disk: exit 3 and one line naming
    the checkpoint and the system's reason. It used to be a *spec* error
    (exit 2) at pyarrow/error.pxi."""
    from .test_hostile_inputs import one_error_line, txncheck

    p = txncheck(tmp_path, "check", str(REPO / "models" / "classic" / "diehard.toml"), "--engine", "spark",
                 "--master", "local[1]", "--checkpoint", "out/ck", "--quiet")
    line = one_error_line(p, 3, "out/ck: cannot write checkpoint (No space left on device)")
    assert "pyarrow" not in line and "spec error" not in line


@pytest.mark.slow
def test_spark_checkpoint_that_fills_up_on_the_executors_is_an_environment_fault(tmp_path):
    """Every level on Spark, on a disk of 256 KiB: a level's part, written by
    a Python worker, is what no longer fits; the failure comes back from the
    executor as the same one line, exit 3."""
    from .test_hostile_inputs import one_error_line, txncheck
    from .test_hostile_outputs import _tmpfs

    out = tmp_path / "work" / "out"
    with _tmpfs(out, "size=256k"):
        p = txncheck(tmp_path, "check", str(REPO / "models" / "classic" / "twophase-rm6.toml"), "--engine", "spark",
                     "--master", "local[1]", "--checkpoint", "out/ck", "--quiet",
                     env={"TXNCHECK_SPARK_DRIVER_BELOW": "0"})
        one_error_line(p, 3, "out/ck: cannot write checkpoint (No space left on device)")
        levels = sorted(d.name for d in (out / "ck").iterdir() if d.name.startswith("level-"))
        assert len(levels) > 2   # some levels were written before the disk filled up


@pytest.mark.parametrize("master", ["local[abc]", "local[0]", "local[2", "local[2,x]", "localhost"])
def test_a_malformed_local_master_is_one_line_before_spark_starts(capsys, tmp_path, monkeypatch, master):
    """`--master local[abc]` started the JVM, failed after 14 s and blamed
    Java 17 (exit 3). Spark's own forms are checked first: exit 2, one line."""
    from txncheck.checker.cli import main
    from txncheck.checker.engines.spark import engine as spark

    def must_not_start(*a, **k):
        raise AssertionError("Spark was started")

    monkeypatch.setattr(spark, "spark_session", must_not_start)
    rc = main(["check", str(REPO / "models" / "classic" / "diehard.toml"), "--engine", "spark", "--master", master,
               "--quiet", "--out", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert (rc, len(err)) == (2, 1), err
    assert err[0].startswith(f"txncheck: error: --master {master}: ") and "Java" not in err[0]


def test_spark_s_own_local_masters_pass_the_check():
    from txncheck.checker.engines.spark.session import check_local_master

    for master in ["local", "local[1]", "local[*]", "local[4, 2]", "local[*,3]", "local-cluster[2, 1, 1024]"]:
        check_local_master(master)


LISTENERS = """
import json, os, sys
from txncheck.checker.engines.spark.session import spark_session
from pyspark import SparkContext
session = spark_session(sys.argv[1])
session.sparkContext.parallelize(range(4), 2).map(lambda x: x + 1).sum()   # Python workers and block manager up
pid = SparkContext._gateway.proc.pid
inodes = set()
for fd in os.listdir(f"/proc/{pid}/fd"):
    try:
        link = os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        continue
    if link.startswith("socket:["):
        inodes.add(link[8:-1])
found = []
for name in ("tcp", "tcp6"):
    for line in open(f"/proc/{pid}/net/{name}").read().splitlines()[1:]:
        f = line.split()
        if f[3] == "0A" and f[9] in inodes:   # LISTEN, and the JVM's
            found.append(f[1].split(":")[0])
print(json.dumps(found))
"""


def _address(hexaddr: str):
    """/proc/net/tcp{,6}'s local address (32-bit words in host order) as an ip_address."""
    import ipaddress
    import sys

    raw = bytes.fromhex(hexaddr)
    if sys.byteorder == "little":
        raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    ip = ipaddress.ip_address(raw)
    return ip.ipv4_mapped or ip if ip.version == 6 else ip


@pytest.mark.slow
@pytest.mark.parametrize("asked", [None, "127.0.0.2"])
def test_a_local_spark_listens_on_loopback_only(tmp_path, asked):
    """Spark's driver bound its RPC and block-manager ports to the host's
    network address, reachable from outside, for a run that is all in one
    process. Now every port the JVM listens on is on loopback; an address
    the user asks for (SPARK_LOCAL_IP) is still where it binds."""
    import json
    import subprocess
    import sys

    env = {**os.environ, "TMPDIR": str(tmp_path)}
    env.pop("SPARK_LOCAL_IP", None)
    if asked:
        env["SPARK_LOCAL_IP"] = asked
    p = subprocess.run([sys.executable, "-c", LISTENERS, "local[1]"], env=env, capture_output=True, text=True,
                       cwd=tmp_path, timeout=300, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stderr[-3000:]
    addresses = [_address(h) for h in json.loads(p.stdout.strip().splitlines()[-1])]
    assert len(addresses) >= 2, addresses   # py4j's gateway, the driver's RPC (and block manager)
    assert all(a.is_loopback for a in addresses), addresses
    if asked:
        assert asked in {str(a) for a in addresses}, addresses
