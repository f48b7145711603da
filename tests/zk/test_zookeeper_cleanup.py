"""A private ZooKeeper leaves nothing behind when the process that started
it is killed: SIGKILL of the parent kills the JVM (PR_SET_PDEATHSIG), and
Ctrl-C or SIGTERM while it starts stops the JVM and removes its folder."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from .helpers import needs_zookeeper, pid_alive

SCRIPT = """
import sys, time
from txncheck.reference.zkserver import ZooKeeperServer
z = ZooKeeperServer()
print(z.data_dir, flush=True)
if sys.argv[1] == "up":
    z.start()
    print(z.pid, flush=True)
    time.sleep(120)
else:
    from txncheck.checker.failures import install_signal_handlers
    install_signal_handlers()
    z.start()
"""


def _spawn(mode: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", SCRIPT, mode], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, stdin=subprocess.DEVNULL)


def _wait_gone(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.1)
    return False


@needs_zookeeper
def test_sigkill_of_the_parent_takes_the_jvm_with_it():
    proc = _spawn("up")
    data_dir = Path(proc.stdout.readline().strip())
    jvm = int(proc.stdout.readline().strip())
    assert pid_alive(jvm)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    try:
        assert _wait_gone(jvm), "the ZooKeeper JVM outlived its parent"
    finally:
        subprocess.run(["rm", "-rf", str(data_dir)], check=False)


@needs_zookeeper
def test_sigterm_while_it_starts_leaves_no_jvm_and_no_folder():
    proc = _spawn("starting")
    data_dir = Path(proc.stdout.readline().strip())
    time.sleep(0.5)   # the JVM is starting, not answering yet
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    assert not data_dir.exists()
    out = subprocess.run(["pgrep", "-f", f"{data_dir}/zoo.cfg"], capture_output=True, text=True)
    assert out.stdout.strip() == ""
