"""Is there a Spark master at spark://HOST:PORT? Asked before Spark starts.

Spark gives up on a master it cannot register with only after three 20 s
attempts, and then blames nothing in particular; a plain TCP connect is not
enough to know better, since a proxy or any other server accepts the
connection too (this machine's own network answers every address with an
HTTP proxy). So the probe speaks one message of Spark's RPC transport
(`org.apache.spark.network.protocol`): a `StreamRequest` for a stream that
cannot exist. Every Spark RPC endpoint, a standalone master included,
answers it at once with a `StreamFailure` frame that names the stream; no
other server does.

    request:  frame length (int64, itself included) | type 6 (int8) | stream id (int32 length, UTF-8)
    answer:   frame length (int64) | type 8 StreamFailure (int8) | the same stream id | error text

Nothing is registered with the master and nothing is left open.
"""

from __future__ import annotations

import socket
import struct
import time

STREAM_REQUEST, STREAM_FAILURE = 6, 8
STREAM_ID = b"/txncheck/probe"
BUDGET = 8.0   # seconds for the whole probe, every host of an HA master URL included
PER_HOST = 3.0


def _request() -> bytes:
    body = struct.pack(">bi", STREAM_REQUEST, len(STREAM_ID)) + STREAM_ID
    return struct.pack(">q", 8 + len(body)) + body


def _expected_prefix() -> bytes:
    return struct.pack(">bi", STREAM_FAILURE, len(STREAM_ID)) + STREAM_ID


def split_master(master: str) -> list[tuple[str, int]]:
    """spark://h1:p1,h2:p2 -> [(h1, p1), (h2, p2)]; ValueError when malformed.
    An IPv6 host is written in brackets: spark://[::1]:7077."""
    out = []
    for hostport in master.removeprefix("spark://").split(","):
        host, _, port = hostport.rpartition(":")
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        if not host or not port.isascii() or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(hostport)
        out.append((host, int(port)))
    return out


def probe(host: str, port: int, timeout: float) -> str | None:
    """None when a Spark RPC endpoint answers at host:port within `timeout`
    seconds, else why not (one short phrase)."""
    deadline = time.monotonic() + timeout
    try:
        with socket.create_connection((host, port), timeout=timeout) as s:
            s.sendall(_request())
            want = 8 + len(_expected_prefix())
            data = b""
            while len(data) < want:
                left = deadline - time.monotonic()
                if left <= 0:
                    return "no answer"
                s.settimeout(left)
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
    except socket.timeout:
        return "no answer"
    except OSError as exc:
        return exc.strerror or str(exc) or type(exc).__name__
    if data[8:want] == _expected_prefix():
        return None
    return "answers, but not as a Spark master" if data else "closed the connection without an answer"


def reachable(master: str, budget: float = BUDGET) -> tuple[bool, list[str]]:
    """(True, []) as soon as one host of the master URL answers as Spark;
    else (False, one 'host:port: why' per host). Takes at most `budget`
    seconds plus name resolution."""
    deadline = time.monotonic() + budget
    errors = []
    for host, port in split_master(master):
        left = deadline - time.monotonic()
        if left <= 0:
            errors.append(f"{host}:{port}: not probed (time budget spent)")
            continue
        why = probe(host, port, min(PER_HOST, left))
        if why is None:
            return True, []
        errors.append(f"{host}:{port}: {why}")
    return False, errors
