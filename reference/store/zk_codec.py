"""Record values as tagged JSON, so that tuples, sets and non-string keys
survive a round trip through a znode; and znode names for index and
partition entries (base64url of the tagged JSON)."""

from __future__ import annotations

import base64
import json
from typing import Any, Mapping


def _enc(v: Any) -> Any:
    if isinstance(v, tuple):
        return {"t": [_enc(x) for x in v]}
    if isinstance(v, (set, frozenset)):
        return {"s": sorted((_enc(x) for x in v), key=json.dumps)}
    if isinstance(v, Mapping):
        return {"m": [[_enc(k), _enc(x)] for k, x in v.items()]}
    if isinstance(v, list):
        return [_enc(x) for x in v]
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    raise TypeError(f"a metadata value cannot hold {type(v).__name__} {v!r}")


def _dec(v: Any) -> Any:
    if isinstance(v, list):
        return [_dec(x) for x in v]
    if isinstance(v, dict):
        if "t" in v:
            return tuple(_dec(x) for x in v["t"])
        if "s" in v:
            return frozenset(_dec(x) for x in v["s"])
        return {_dec(k): _dec(x) for k, x in v["m"]}
    return v


def encode_record(value: Mapping[str, Any], partition_key: str | None) -> bytes:
    return json.dumps({"v": _enc(dict(value)), "pk": partition_key}, sort_keys=True).encode()


def decode_record(data: bytes) -> tuple[dict, str | None]:
    obj = json.loads(data)
    return _dec(obj["v"]), obj["pk"]


def znode_name(obj: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(_enc(obj)).encode()).decode()


def from_znode_name(name: str) -> Any:
    return _dec(json.loads(base64.urlsafe_b64decode(name.encode())))
