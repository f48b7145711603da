"""The model's workload, parsed from its bounds: which client writes and acks
each txn performs. Kept as data so that the state only records progress.

    writes = "t1:0 t2:3"             each token: txn:routing-key (one send)
    acks   = "t1:s1:1:ind t2:s2:2:cum"  each token: txn:segment:position:ind|cum[:sub1|sub2]
                                        (positions 1 .. 1 + the number of sends;
                                        the subscription sub1 unless named)
    plain  = "0 2"                   non-transactional sends, a routing key each, sent in order
"""

from __future__ import annotations

from typing import NamedTuple

from ..api import SpecError


class Write(NamedTuple):
    name: str   # w1, w2, ...
    txn: int
    key: int


class Ack(NamedTuple):
    name: str   # a1, a2, ...
    txn: int
    seg: int
    pos: int
    cumulative: bool
    sub: int = 0   # 0 = sub1, 1 = sub2


def _txn(tok: str, what: str, txns: int) -> int:
    if not tok.startswith("t") or not (tok[1:].isascii() and tok[1:].isdigit()) or not 1 <= int(tok[1:]) <= txns:
        raise SpecError(f"{what}: {tok!r} is not a txn id t1..t{txns}")
    return int(tok[1:]) - 1


def _int(tok: str, what: str, lo: int, hi: int) -> int:
    if not (tok.isascii() and tok.isdigit()) or not lo <= int(tok) <= hi:
        raise SpecError(f"{what}: {tok!r} must be an integer in {lo}..{hi}")
    return int(tok)


def parse_writes(text: str, txns: int, keys: int) -> tuple[Write, ...]:
    out = []
    for tok in text.split():
        parts = tok.split(":")
        if len(parts) != 2:
            raise SpecError(f"bound writes: {tok!r} is not txn:key")
        out.append(Write(f"w{len(out) + 1}", _txn(parts[0], "bound writes", txns),
                         _int(parts[1], "bound writes", 0, keys - 1)))
    return tuple(out)


def parse_acks(text: str, txns: int, segs: int, positions: int, subs: int = 1) -> tuple[Ack, ...]:
    """Positions count from 1, the plain entry every initial segment starts
    with; an ack is sent once its subscription's dispatcher has passed its
    position."""
    out = []
    names = tuple(f"sub{x + 1}" for x in range(subs))
    for tok in text.split():
        parts = tok.split(":")
        if len(parts) not in (4, 5) or parts[3] not in ("ind", "cum") or not parts[1].startswith("s"):
            raise SpecError(f"bound acks: {tok!r} is not txn:segment:position:ind|cum[:subscription]")
        if len(parts) == 5 and parts[4] not in names:
            raise SpecError(f"bound acks: {tok!r} names subscription {parts[4]!r}; with subs = {subs} "
                            f"it is one of {', '.join(names)}")
        seg = _int(parts[1][1:], "bound acks", 1, segs) - 1
        out.append(Ack(f"a{len(out) + 1}", _txn(parts[0], "bound acks", txns), seg,
                       _int(parts[2], "bound acks", 1, positions), parts[3] == "cum",
                       names.index(parts[4]) if len(parts) == 5 else 0))
    return tuple(out)


def parse_plain(text: str, keys: int) -> tuple[int, ...]:
    """The routing keys of the non-transactional sends (named n1, n2, ...)."""
    return tuple(_int(tok, "bound plain", 0, keys - 1) for tok in text.split())
