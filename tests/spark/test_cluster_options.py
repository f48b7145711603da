"""Bad cluster options are refused by the real CLI before Spark starts: one
line on stderr, no traceback, exit 2 for bad usage and 3 for a master that
does not answer as Spark (DESIGN.md's exit-code contract).

"Before Spark starts" is asserted by the message itself: had a JVM been
started, a master that does not answer would end in Spark's own failure
("cannot start Spark ..."), after a minute, not in the probe's line. The
servers below stand for what a wrong --master can reach: nothing (a closed
port), a server that accepts and never answers, and one that answers in
another protocol (as this machine's network proxy does for every address).
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODEL = str(ROOT / "models" / "classic" / "twophase-rm3.toml")


def cli(tmp_path, *argv):
    proc = subprocess.run(
        [sys.executable, "-m", "txncheck.checker.cli", "check", MODEL, "--engine", "spark", "--quiet",
         "--out", str(tmp_path / "out"), *argv],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300,   # a hang guard, not a timing check
    )
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    assert "Traceback" not in proc.stderr and len(lines) == 1, proc.stderr
    assert lines[0].startswith("txncheck: error: ") and proc.stdout == ""
    return proc.returncode, lines[0]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def silent_server():
    """Accepts connections (the kernel's backlog does) and never answers."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        yield s.getsockname()[1]


@pytest.fixture
def http_server():
    """Answers every connection with an HTTP error, then closes it."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            with conn:
                try:
                    conn.recv(1024)
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n")
                except OSError:
                    pass

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1]
    stop.set()
    srv.close()
    t.join(5)


def test_a_cluster_without_a_checkpoint_is_bad_usage(tmp_path):
    rc, line = cli(tmp_path, "--master", f"spark://127.0.0.1:{closed_port()}")
    assert rc == 2 and "needs --checkpoint DIR on storage every executor shares" in line


@pytest.mark.parametrize("master", ["spark://nohostport", "spark://127.0.0.1:99999", "spark://:7077",
                                    "spark://127.0.0.1:x"])
def test_a_malformed_master_is_bad_usage(tmp_path, master):
    rc, line = cli(tmp_path, "--master", master, "--checkpoint", str(tmp_path / "ck"))
    assert rc == 2 and f"--master {master}: expected spark://HOST:PORT" in line


def test_a_closed_port_is_exit_3(tmp_path):
    port = closed_port()
    rc, line = cli(tmp_path, "--master", f"spark://127.0.0.1:{port}", "--checkpoint", str(tmp_path / "ck"))
    assert rc == 3 and f"cannot reach the Spark master (127.0.0.1:{port}: Connection refused)" in line


def test_a_server_that_never_answers_is_exit_3(tmp_path, silent_server):
    rc, line = cli(tmp_path, "--master", f"spark://127.0.0.1:{silent_server}", "--checkpoint", str(tmp_path / "ck"))
    assert rc == 3 and f"cannot reach the Spark master (127.0.0.1:{silent_server}: no answer)" in line


def test_a_server_of_another_protocol_is_exit_3(tmp_path, http_server):
    rc, line = cli(tmp_path, "--master", f"spark://127.0.0.1:{http_server}", "--checkpoint", str(tmp_path / "ck"))
    assert rc == 3 and f"(127.0.0.1:{http_server}: answers, but not as a Spark master)" in line


def test_every_host_of_an_ha_master_is_named(tmp_path, http_server):
    port = closed_port()
    rc, line = cli(tmp_path, "--master", f"spark://127.0.0.1:{port},127.0.0.1:{http_server}",
                   "--checkpoint", str(tmp_path / "ck"))
    assert rc == 3 and f"127.0.0.1:{port}: Connection refused; 127.0.0.1:{http_server}: answers, but not" in line
