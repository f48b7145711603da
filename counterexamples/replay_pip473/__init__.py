"""The PIP-473 bridge: spec actions onto `reference/` calls, and the
abstraction function from the implementation back to the spec's symbols.

    bridge.py       Pip473Bridge: configuration, trace validation, the ghost
                    recorder, and `apply`, which looks the action up in the table
    actions.py      the table: spec action -> its parameters and its handler
    sends.py        handlers of the client's sends and acks (publish*, appendAck)
    coordinator.py  handlers of the coordinator and the clock (newTxn, endTxn, ...)
    brokers.py      handlers of one participant broker (deliverEvent, crash, dispatch, ...)
    controller.py   handlers of the segment controller's split or merge steps
    abstraction.py  the observation and the refinement mapping (spec_state)

A new spec action is one handler function in the module of the component
it drives, and one row in `actions.HANDLERS` (its parameters are the
spec catalog's, spec/pip473/catalog.py).

Configuration comes from the model's bounds (the trace's `#meta.bounds`):
the variant picks the behaviour, `timeout`/`retention` become milliseconds
(one clock unit = `UNIT_MS`), `writes`/`acks` are the client's plan, and
`reshape` the split or merge the controller may run.

History variables (the spec's ghosts) are recorded by the bridge as an
observer: `decided` and `fincnt` from the store's change feed, `ackw` from
the ACK op records written, `late` by reading the store at the moment the
implementation admits a write or ack, `dlv` from the consumer's deliveries
with the header read at that moment, `gcops`/`gcunmat` just before a
header is collected. Positions: the implementation's entry ids start at 0,
the spec's positions at 1.
"""

from .actions import ACTIONS, TABLE
from .bridge import Pip473Bridge

__all__ = ["ACTIONS", "TABLE", "Pip473Bridge"]
