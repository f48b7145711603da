"""A trace as a Mermaid sequence diagram, in the style of the PIP's own diagrams.

Who talks to whom is protocol knowledge, so it lives in the spec (`Spec.diagram`,
PIP-473's in spec/pip473/catalog.py): an action maps to the messages it stands
for, each a (sender, receiver, text, dashed) tuple whose strings are formatted
with the step's parameters. Specs without one get a generic picture: one
participant per process-like parameter value (a string such as `r1`), or
`System`. The trace names its spec; only a registered spec name is looked up
(a trace is untrusted: a file or module path in it is never imported).

The step that breaks the property (the last one of an invariant trace) is
drawn on a red background with a note naming the property; a lasso's cycle is
marked where it starts.
"""

from __future__ import annotations

import re
from functools import lru_cache
from string import Formatter

from ...spec.api import SpecError
from ...spec.registry import registered, resolve
from ..itf import Trace
from .table import changed_fields, fmt_value


@lru_cache(maxsize=None)
def spec_class(name):
    """The registered spec class a trace names, or None."""
    if not isinstance(name, str) or ":" in name or name not in registered():
        return None
    try:
        return resolve(name).cls
    except SpecError:
        return None


class _Params(dict):
    def __missing__(self, key):
        return "?"


def _fill(template: str, params: dict) -> str:
    return Formatter().vformat(template, (), _Params(params))


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
    cls = spec_class(trace.meta.get("spec"))
    route = (cls.diagram or {}).get(step["action"]) if cls is not None else None
    if route is None:
        return _generic(step)
    p = _params(step)
    return [(_fill(a, p), _fill(b, p), _fill(text, p), bool(dashed)) for a, b, text, *rest in route
            for dashed in [rest[0] if rest else False]]


def _order(trace: Trace, seen: list[str]) -> list[str]:
    cls = spec_class(trace.meta.get("spec"))
    fixed = list(cls.diagram_participants) if cls is not None else []
    if not fixed:
        return seen
    order = cls.diagram_order

    def rank(p: str):
        return (next((i for i, x in enumerate(order) if p.startswith(x)), len(order)), p)

    return fixed + sorted((p for p in seen if p not in fixed), key=rank)


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
