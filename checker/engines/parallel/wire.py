"""The messages between the coordinator and a worker: a JSON header, then raw
arrays of integers. States do not travel here (moved ones go through a file:
`moves.py`); nothing is pickled (ADR 0005)."""

from __future__ import annotations

import json
from array import array


def send(conn, head: dict, arrays=()) -> None:
    conn.send_bytes(json.dumps({**head, "arrays": [a.typecode for a in arrays]}).encode())
    for a in arrays:
        conn.send_bytes(memoryview(a))


def recv(conn) -> tuple[dict, list]:
    head = json.loads(conn.recv_bytes())
    arrays = []
    for code in head.pop("arrays"):
        a = array(code)
        a.frombytes(conn.recv_bytes())
        arrays.append(a)
    return head, arrays
