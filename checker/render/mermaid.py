"""A trace as a Mermaid sequence diagram, in the style of the PIP's own diagrams.

Who talks to whom is protocol knowledge, so it lives in a small table per spec
(`ROUTES`): an action maps to the messages it stands for, each a
(from, to, text) triple over the participants Client, TC, Metadata Store,
each segment's transaction buffer, each segment's pending-ack store and the
Dispatcher. Specs without a table get a generic picture: one participant per
process-like parameter value (a string such as `r1`), or `System`.

The step that breaks the property (the last one of an invariant trace) is
drawn on a red background with a note naming the property; a lasso's cycle is
marked where it starts.
"""

from __future__ import annotations

import re
from typing import Callable

from ..itf import Trace
from .table import changed_fields, fmt_value

# -- participants ----------------------------------------------------------------

CLIENT, TC, STORE, DISPATCHER = "Client", "TC", "Metadata Store", "Dispatcher"


def buffer(seg) -> str:
    return f"TB {seg}"


def pending_ack(seg) -> str:
    return f"PendingAck {seg}"


# A route: params -> [(from, to, text, dashed)]. `p` is the step's params as
# display strings; `kv` formats the named ones as the message's key fields.
Route = Callable[[dict], list[tuple[str, str, str, bool]]]


def _kv(p: dict, *names: str) -> str:
    return ", ".join(p[n] for n in names if n in p)


# PIP-473 (spec/pip473/ACTIONS.md): one entry per action, read off the PIP's
# publish, end-txn and dispatch diagrams; recovery, GC and split from its text.
PIP473: dict[str, Route] = {
    "newTxn": lambda p: [(CLIENT, TC, f"newTxn → {p.get('txn')}", False),
                         (TC, STORE, f"create /txn/{p.get('txn')} OPEN", False)],
    "publishCheck": lambda p: [(CLIENT, buffer(p.get("seg")), f"send({_kv(p, 'txn', 'op')})", False),
                               (buffer(p.get("seg")), STORE, f"read /txn/{p.get('txn')}.state (cached)", False)],
    "publishAppend": lambda p: [(buffer(p.get("seg")), buffer(p.get("seg")),
                                 f"asyncAddEntry({_kv(p, 'op')}) to the ledger", False)],
    "publishPutOp": lambda p: [(buffer(p.get("seg")), STORE,
                                f"put /txn-op/{p.get('txn')}/<seq> write {p.get('op', '')}", False)],
    "publishValidate": lambda p: [(buffer(p.get("seg")), STORE, f"re-read /txn/{p.get('txn')} (validate)", False)],
    "publishOpFails": lambda p: [(STORE, buffer(p.get("seg")), f"put /txn-op/{p.get('txn')}/<seq> fails", True),
                                 (buffer(p.get("seg")), CLIENT, f"send({_kv(p, 'txn', 'op')}) fails", True)],
    "publishPlain": lambda p: [(CLIENT, buffer(p.get("seg")), f"send({_kv(p, 'op')}), no txn", False),
                               (buffer(p.get("seg")), STORE, "syncMaxReadPositionForNormalPublish: persist the watermark",
                                False)],
    "appendAck": lambda p: [(CLIENT, pending_ack(p.get("seg")), f"ack({_kv(p, 'txn', 'op', 'pos', 'cumulative')})", False),
                            (pending_ack(p.get("seg")), STORE, f"put /txn-op/{p.get('txn')}/<seq> ack", False)],
    "endTxn": lambda p: [(CLIENT, TC, f"endTxn({_kv(p, 'txn', 'decision')})", False),
                         (TC, STORE, f"CAS /txn/{p.get('txn')}.state OPEN→{p.get('decision', '?')}", False)],
    "tcFinalize": lambda p: [(TC, STORE, f"set finalized_ms on /txn/{p.get('txn')}", False),
                             (TC, CLIENT, f"endTxn reply ({p.get('txn')})", True)],
    "tcList": lambda p: [(TC, STORE, f"list /txn-op/{p.get('txn')}/* (the participants to notify)", False)],
    "tcPublish": lambda p: [(TC, STORE, f"publish the events of {p.get('txn')} to the listed streams", False)],
    "timeoutSweep": lambda p: [(TC, STORE, f"timeout: CAS /txn/{p.get('txn')} OPEN→ABORTED", False)],
    "gcSweep": lambda p: [(TC, STORE, f"GC sweep: /txn-op/{p.get('txn')}/* then the header", False)],
    "deliverEvent": lambda p: [(STORE, buffer(p.get("seg")), "header watch / event fires", True),
                               (STORE, pending_ack(p.get("seg")), "header watch / event fires", True),
                               (buffer(p.get("seg")), STORE, "materialize, delete own /txn-op records", False)],
    "deliverAckEvent": lambda p: [(STORE, pending_ack(p.get("seg")), "subscription event fires", True),
                                  (pending_ack(p.get("seg")), STORE, "apply or drop the acks, delete own ack ops",
                                   False)],
    "crash": lambda p: [(buffer(p.get("seg")), pending_ack(p.get("seg")), f"broker of {p.get('seg')} crashes", True)],
    "recover": lambda p: [(buffer(p.get("seg")), STORE, "recover(): read indexes and headers", False),
                          (pending_ack(p.get("seg")), STORE, "replayAsync(): scan ack ops", False)],
    "recoverWatermark": lambda p: [(buffer(p.get("seg")), STORE, "recovery: load the watermark", False)],
    "recoverAborted": lambda p: [(buffer(p.get("seg")), STORE, "recovery: load the aborted records", False)],
    "recoverComplete": lambda p: [(buffer(p.get("seg")), STORE,
                                   "recovery completes: watermark, aborted records, ops, headers", False)],
    "dispatch": lambda p: [(DISPATCHER, buffer(p.get("seg")), "getMaxReadPosition / isTxnAborted", False),
                           (buffer(p.get("seg")), DISPATCHER, "next entry", True)],
    "trimLedger": lambda p: [(buffer(p.get("seg")), buffer(p.get("seg")), "ledger trims acknowledged entries", False)],
    "pruneAborted": lambda p: [(buffer(p.get("seg")), STORE,
                                "prune aborted records keyed below the first retained entry", False)],
    "tcFailover": lambda p: [(TC, TC, "failover: new TC resumes from the store", False)],
    "tick": lambda p: [(TC, TC, "tick (time passes)", False)],
    "createChildren": lambda p: [(STORE, STORE, "split/merge: create children (cursors at earliest)", False)],
    "terminateParents": lambda p: [(STORE, STORE, "split/merge: terminate parent ledger(s)", False)],
    "casSegmentMetadata": lambda p: [(STORE, STORE, "split/merge: CAS parents SEALED, children ACTIVE", False)],
}

ROUTES: dict[str, dict[str, Route]] = {"pip473": PIP473}
FIXED = {"pip473": [CLIENT, TC, STORE]}  # drawn first, in this order; segments and the dispatcher follow


# -- rendering ---------------------------------------------------------------------


_ESCAPES = str.maketrans({"#": "#35;", ";": "#59;", "<": "#lt;", ">": "#gt;"})


def _text(s: str) -> str:
    """Message text Mermaid shows as written: ';' ends a statement, '#' starts an
    entity code and '<' '>' would be taken for HTML, so they become entity codes."""
    return re.sub(r"\s+", " ", str(s)).translate(_ESCAPES)


def _clip(s: str, n: int) -> str:
    return s if len(s) <= n else s[:n - 1] + "…"


def _params(step: dict) -> dict[str, str]:
    return {k: fmt_value(v) for k, v in step["params"].items()}


def _generic(step: dict) -> list[tuple[str, str, str, bool]]:
    params = _params(step)
    # Process-like: a name with an index (r1, t2, seg3), not a value such as commit or 3.
    procs = [v for v in params.values() if re.fullmatch(r"[A-Za-z][A-Za-z_-]*\d+", v)]
    label = step["action"] + (" " + ", ".join(f"{k}={v}" for k, v in params.items()) if params else "")
    if len(procs) >= 2:
        return [(procs[0], procs[1], label, False)]
    who = procs[0] if procs else "System"
    return [(who, who, label, False)]


def messages(trace: Trace, k: int) -> list[tuple[str, str, str, bool]]:
    step = trace.steps[k]
    routes = ROUTES.get(trace.meta.get("spec"), {})
    route = routes.get(step["action"])
    if route is None:
        return _generic(step)
    return route(_params(step))


def _order(trace: Trace, seen: list[str]) -> list[str]:
    fixed = FIXED.get(trace.meta.get("spec"))
    if not fixed:
        return seen
    rest = [p for p in seen if p not in fixed and p != DISPATCHER]
    rest.sort(key=lambda p: (not p.startswith("TB "), p))
    return fixed + rest + ([DISPATCHER] if DISPATCHER in seen else [])


def render_mermaid(trace: Trace) -> str:
    m = trace.meta
    prop = m.get("property")
    last = trace.length - 1
    steps = [messages(trace, k) for k in range(1, trace.length)]
    seen: list[str] = []
    for msgs in steps:
        for a, b, _, _ in msgs:
            for p in (a, b):
                if p not in seen:
                    seen.append(p)
    parts = _order(trace, seen or ["System"])
    alias = {p: f"P{k}" for k, p in enumerate(parts)}
    title = f"{m.get('spec')} [{m.get('variant')}]" + (f": {prop} violated in {trace.length} states" if prop else "")
    out = ["sequenceDiagram", f"    %% {_text(title)}"]
    for p in parts:
        out.append(f"    participant {alias[p]} as {_text(p)}")
    span = alias[parts[0]] + ("," + alias[parts[-1]] if len(parts) > 1 else "")
    init = [f"{n} = {v}" for n, v in changed_fields(None, trace.states[0])]
    init = init if len(init) <= 4 else []  # a big initial state belongs in the step table
    out.append(f"    Note over {span}: 0. init" +
               (": " + _text(_clip(", ".join(init), 160)) if init else ""))
    loop = trace.loop
    cycle_note = f"    Note over {span}: state {loop}: the cycle starts here"
    if loop == 0:
        out.append(cycle_note)
    for k, msgs in enumerate(steps, start=1):
        if loop is not None and k == loop + 1:
            out.append("    rect rgb(255, 243, 205)")  # the steps that repeat forever
        breaking = k == last and prop and m.get("kind", "invariant") in ("invariant", "deadlock")
        if breaking:
            out.append("    rect rgb(255, 205, 205)")
        for n, (a, b, text, dashed) in enumerate(msgs):
            arrow = "-->>" if dashed else "->>"
            out.append(f"    {alias[a]}{arrow}{alias[b]}: {f'{k}. ' if n == 0 else ''}{_text(text)}")
        if breaking:
            changes = [f"{n} = {v}" for n, v in changed_fields(trace.states[k - 1], trace.states[k])][:3]
            note = _text(f"✗ step {k} ({trace.steps[k]['action']}) breaks {prop}")
            if changes:
                note += "<br/>" + "<br/>".join(_text(_clip(c, 90)) for c in changes)
            out.append(f"    Note over {span}: {note}")
            out.append("    end")
        if loop is not None and k == loop:
            out.append(cycle_note)
    if loop is not None:
        if loop < last:
            out.append("    end")
        out.append(f"    Note over {span}: back to state {loop}: the cycle repeats forever")
    return "\n".join(out) + "\n"
