"""A private, standalone ZooKeeper server on loopback, for tests and replay.

It runs Debian's `zookeeper` package (3.8) as
`java -cp zookeeper.jar org.apache.zookeeper.server.ZooKeeperServerMain zoo.cfg`
with a generated config: a temporary data directory, a free port on
127.0.0.1 only, the admin server off, and the `ruok`/`srvr` four-letter words
on (readiness is `ruok` -> `imok`). Every wait is bounded; `stop()` always
ends the JVM (terminate, then kill). `kill()` is the hard crash the fault
tests need; `start()` again restarts on the same data directory and port,
so a client's session and data survive it.

`TXNCHECK_ZOOKEEPER_JAR` overrides where the server jar is looked for.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

JARS = ("/usr/share/java/zookeeper.jar",)  # Debian's package; its manifest names the dependencies
MAIN = "org.apache.zookeeper.server.ZooKeeperServerMain"
JVM_FLAGS = ("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Dzookeeper.admin.enableServer=false")


class ZooKeeperMissing(RuntimeError):
    """No java or no ZooKeeper server jar on this machine."""


class ZooKeeperStartError(RuntimeError):
    """The server did not come up (its log's last lines are in the message)."""


def find_server() -> tuple[str, str]:
    """(java, server jar), or ZooKeeperMissing naming what is absent."""
    java = shutil.which("java")
    env = os.environ.get("TXNCHECK_ZOOKEEPER_JAR")
    jar = next((j for j in ((env,) if env else JARS) if j and Path(j).is_file()), None)
    if java is None:
        raise ZooKeeperMissing("no java on PATH (ZooKeeper needs a JRE)")
    if jar is None:
        raise ZooKeeperMissing(f"no ZooKeeper server jar at {env or JARS[0]} "
                               "(install Debian's zookeeper package or set TXNCHECK_ZOOKEEPER_JAR)")
    return java, jar


def _die_with_parent() -> None:
    """In the child, before exec: the kernel sends it SIGKILL when the
    process that started it dies, even by SIGKILL (Linux PR_SET_PDEATHSIG),
    so a killed replay leaves no ZooKeeper JVM behind."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass   # not Linux: stop() and close() still end it on every exit Python sees


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def four_letter(host: str, port: int, word: str, timeout: float = 1.0) -> str:
    """Send a four-letter word; '' when nothing answers."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as s:
            s.sendall(word.encode())
            chunks = []
            while True:
                b = s.recv(4096)
                if not b:
                    break
                chunks.append(b)
            return b"".join(chunks).decode(errors="replace")
    except OSError:
        return ""


class ZooKeeperServer:
    host = "127.0.0.1"

    def __init__(self, data_dir: str | Path | None = None, port: int | None = None) -> None:
        self.java, self.jar = find_server()
        self._own_dir = data_dir is None
        self.port = port or free_port()
        self.data_dir = Path(data_dir or tempfile.mkdtemp(prefix="txncheck-zk-"))   # last: nothing can fail after it
        self.proc: subprocess.Popen | None = None
        self._ever_up = False
        # A signal can land between this object's creation and its owner's
        # cleanup scope: the server is stopped and its temp folder removed at exit anyway.
        atexit.register(self.close)

    @property
    def hosts(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def _write_config(self) -> Path:
        cfg = self.data_dir / "zoo.cfg"
        (self.data_dir / "data").mkdir(parents=True, exist_ok=True)
        cfg.write_text(
            "tickTime=1000\n"
            f"dataDir={self.data_dir / 'data'}\n"
            f"clientPort={self.port}\n"
            f"clientPortAddress={self.host}\n"
            "maxSessionTimeout=60000\n"
            "admin.enableServer=false\n"
            "4lw.commands.whitelist=ruok,srvr\n"
            "autopurge.purgeInterval=0\n")
        return cfg

    def start(self, timeout: float = 30.0) -> "ZooKeeperServer":
        if self.proc is not None and self.proc.poll() is None:
            return self
        try:   # from the first file written: Ctrl-C, SIGTERM or a failure leaves no JVM, nor the
            cfg = self._write_config()   # folder of a server that never came up
            log = open(self.data_dir / "server.log", "ab")
            try:
                self.proc = subprocess.Popen([self.java, *JVM_FLAGS, "-cp", self.jar, MAIN, str(cfg)],
                                             stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                             start_new_session=True,
                                             # the kernel ties PDEATHSIG to the starting *thread*: only
                                             # the main thread lives as long as the process
                                             preexec_fn=_die_with_parent
                                             if threading.current_thread() is threading.main_thread() else None)
            finally:
                log.close()
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise ZooKeeperStartError(f"ZooKeeper exited with {self.proc.returncode} at start: {self._tail()}")
                if four_letter(self.host, self.port, "ruok", 0.5) == "imok" and \
                        "Mode: standalone" in four_letter(self.host, self.port, "srvr", 0.5):
                    self._ever_up = True
                    return self
                time.sleep(0.1)
            tail = self._tail()
            raise ZooKeeperStartError(f"ZooKeeper on {self.hosts} did not answer within {timeout:.0f}s: {tail}")
        except BaseException:
            self.stop()
            if self._own_dir and not self._ever_up:
                shutil.rmtree(self.data_dir, ignore_errors=True)
            raise

    def _tail(self) -> str:
        try:
            lines = (self.data_dir / "server.log").read_text(errors="replace").strip().splitlines()
        except OSError:
            return "(no log)"
        return " | ".join(lines[-3:]) or "(empty log)"

    def kill(self) -> None:
        """A hard crash (SIGKILL): no clean shutdown, the data dir is kept."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self, timeout: float = 10.0) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except BaseException:   # too slow, or Ctrl-C / SIGTERM while we wait: stop it all the same
            proc.kill()
            proc.wait(timeout=timeout)
            if not isinstance(sys.exc_info()[1], subprocess.TimeoutExpired):
                raise

    def close(self) -> None:
        """Stop the server and remove the data dir if this object made it,
        even when an interrupt arrives while it stops."""
        try:
            self.stop()
        finally:
            if self._own_dir:
                shutil.rmtree(self.data_dir, ignore_errors=True)
            atexit.unregister(self.close)

    def __enter__(self) -> "ZooKeeperServer":
        try:
            return self.start()
        except BaseException:  # __exit__ does not run when __enter__ raises: clean up here
            self.close()
            raise

    def __exit__(self, *exc) -> None:
        self.close()
