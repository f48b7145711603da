"""`permute` for specs that declare symmetric sorts but do not implement it
yet, keyed by spec name. A stopgap: each function belongs in its spec as
`Spec.permute` (same signature, `self` first), where the spec's owner keeps
it in step with the state. tests/test_reductions_models.py audits every one
as an automorphism on the reachable states of the shipped models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ReductionError

if TYPE_CHECKING:
    from ...spec.api import Spec


def _legacy_v4(spec, s, mapping):   # LegacyV4 (txn_names), by its name in PERMUTE
    """Rename txns in the legacy v4 state: per-txn tuples move, txn indexes
    in ledger entries and ghost sets are renamed."""
    fields = ("seg", "ledger", "read", "status", "parts", "subs", "acked", "asked", "result", "live",
              "redrive", "timer", "outcome", "committing", "delivered", "splits", "merges", "restarts")
    if s._fields != fields:
        raise ReductionError("--symmetry: the legacy_v4 state changed; update its permute")
    m = mapping["Txn"]
    pos = {t: i for i, t in enumerate(spec.txn_names)}
    p = [pos[m[t]] for t in spec.txn_names]  # old index -> new index

    def move(per_txn):
        out = [None] * len(per_txn)
        for i, v in enumerate(per_txn):
            out[p[i]] = v
        return tuple(out)

    return s._replace(
        ledger=tuple(tuple((kind, p[t]) for kind, t in entries) for entries in s.ledger),
        status=move(s.status), parts=move(s.parts), subs=move(s.subs), acked=move(s.acked),
        asked=move(s.asked), result=move(s.result), live=move(s.live),
        redrive=frozenset(p[t] for t in s.redrive), timer=move(s.timer),
        outcome=move(s.outcome), committing=frozenset(p[t] for t in s.committing),
        delivered=frozenset((p[t], g) for t, g in s.delivered))


PERMUTE = {"legacy_v4": _legacy_v4}


def permute_for(spec: Spec):
    """The spec's own `permute`, else one from PERMUTE, else None."""
    from ...spec.api import Spec

    if type(spec).permute is not Spec.permute:
        return spec.permute
    fn = PERMUTE.get(spec.name)
    return (lambda s, mapping: fn(spec, s, mapping)) if fn else None
