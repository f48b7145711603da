"""The dispatcher (Components / Dispatcher; Flows / Subscribe-dispatch):
unchanged by the PIP. It reads the next entry of the subscription when it is
at or below the transaction buffer's `getMaxReadPosition()`, skips it when
`isTxnAborted`, and otherwise delivers it; each subscription has its own.
With split participants in merged/fixed it reads nothing while its
subscription's pending-ack store replays: `PersistentSubscription.addConsumer`
lets a consumer in only once the pending-ack handle is ready.
The ghost `dlv` records every delivery of a transactional entry with the
header state at that moment.
"""

from __future__ import annotations

from ...api import replace_at as _put
from .buffer import is_txn_aborted, read_limit
from .pendingack import pas_ready
from .state import GONE, NONE, PLAIN, SUB_FIELDS, S
from .store import header_state


def dispatch(m, s: S, j: int, x: int = 0):
    """The dispatcher of subscription x (bound `subs`) on segment j; both
    read through the segment's one transaction buffer."""
    p = s.part[j]
    if p is None or m.pas_recovers and not pas_ready(m, p, x):   # no consumer until the handle is ready
        return None
    field = SUB_FIELDS[x]["rd"]
    pos = getattr(s, field)[j]
    if pos > read_limit(m, s, j, p):
        return None
    tag = s.ledger[j][pos - 1]
    rd = {field: _put(getattr(s, field), j, pos + 1)}
    if tag == PLAIN or is_txn_aborted(m, s, j, p, tag):
        return s._replace(**rd)
    st = header_state(s, tag)
    if st in (GONE, NONE):
        st = s.decided[tag] or st
    return s._replace(dlv=s.dlv | {(j, pos, st)}, **rd)
