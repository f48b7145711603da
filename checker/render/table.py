"""A trace as a readable step table: step, action, parameters, changed fields."""

from __future__ import annotations

from ...spec.api import Record
from ..glossary import glossary
from ..itf import Trace


def fmt_value(v) -> str:
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, str):
        return v
    if isinstance(v, int):
        return str(v)
    if v is None:
        return "-"
    if isinstance(v, Record):   # fields in their own order
        return "[" + ", ".join(f"{k} |-> {fmt_value(x)}" for k, x in v.items()) + "]"
    if isinstance(v, dict):
        return "[" + ", ".join(f"{fmt_value(k)} |-> {fmt_value(x)}" for k, x in sorted(v.items(), key=lambda kv: str(kv[0]))) + "]"
    if isinstance(v, tuple):
        return "<<" + ", ".join(fmt_value(x) for x in v) + ">>"
    if isinstance(v, frozenset):
        return "{" + ", ".join(sorted(fmt_value(x) for x in v)) + "}"
    return str(v)


def _path(name: str, key, record: bool) -> str:
    return f"{name}.{key}" if record else f"{name}[{fmt_value(key)}]"


def _diff(name: str, old, new, out: list) -> None:
    """What changed from `old` to `new`, down to the map entry or record field
    that changed: `hdr[t1].state = COMMITTED` rather than the whole `hdr`."""
    if isinstance(new, dict) and isinstance(old, dict) and isinstance(new, Record) == isinstance(old, Record):
        record = isinstance(new, Record)
        keys = list(new) + [k for k in old if k not in new] if record else sorted(set(new) | set(old), key=str)
        for k in keys:
            if new.get(k) != old.get(k):
                if k in new and k in old:
                    _diff(_path(name, k, record), old[k], new[k], out)
                else:
                    out.append((_path(name, k, record), fmt_value(new.get(k))))
    else:
        out.append((name, fmt_value(new)))


def changed_fields(prev: dict | None, cur: dict) -> list[tuple[str, str]]:
    out: list = []
    for name, v in cur.items():
        if prev is None or name not in prev:
            out.append((name, fmt_value(v)))
        elif prev[name] != v:
            _diff(name, prev[name], v, out)
    return out


def render_table(trace: Trace) -> str:
    m = trace.meta
    bounds = ", ".join(f"{k}={v}" for k, v in m.get("bounds", {}).items())
    head = [
        f"trace: {trace.path}" if trace.path else "trace",
        f"spec {m.get('spec')} [{m.get('variant')}]" + (f" ({bounds})" if bounds else ""),
    ]
    if m.get("property"):
        head.append(f"violates {m['property']} ({m.get('kind', 'invariant')}) in {trace.length} states")
    if m.get("model"):
        head.append(f"model: {m['model']}")
    if glossary(m.get("spec")):
        head.append(f"fields: {glossary(m.get('spec'))}")
    lines = head + [""]
    rows = []
    for k, (step, state) in enumerate(zip(trace.steps, trace.states)):
        params = ", ".join(f"{p}={fmt_value(v)}" for p, v in step["params"].items())
        prev = trace.states[k - 1] if k else None
        changes = changed_fields(prev, state)
        mark = ""
        if trace.loop is not None and k == trace.loop:
            mark = "  <- cycle starts"
        rows.append((str(k), step["action"], params, changes, mark))
    w_step = max(len("step"), *(len(r[0]) for r in rows))
    w_act = max(len("action"), *(len(r[1]) for r in rows))
    w_par = max(len("params"), *(len(r[2]) for r in rows))
    lines.append(f"{'step':<{w_step}}  {'action':<{w_act}}  {'params':<{w_par}}  changed")
    lines.append(f"{'-' * w_step}  {'-' * w_act}  {'-' * w_par}  {'-' * 7}")
    for num, action, shown, changes, mark in rows:
        first = f"{changes[0][0]} = {changes[0][1]}" if changes else "(no change)"
        lines.append(f"{num:<{w_step}}  {action:<{w_act}}  {shown:<{w_par}}  {first}{mark}")
        pad = " " * (w_step + w_act + w_par + 6)
        for name, val in changes[1:]:
            lines.append(f"{pad}{name} = {val}")
    if trace.loop is not None:
        closing = m.get("loop_action")
        if closing == "stutter":
            lines.append(f"(the last state stutters forever; the cycle is states {trace.loop}..{trace.length - 1})")
        else:
            how = ""
            if isinstance(closing, dict) and isinstance(closing.get("action"), str):
                args = closing.get("params") if isinstance(closing.get("params"), dict) else {}
                how = f"then {closing['action']}" + (
                    "(" + ", ".join(f"{k}={fmt_value(v)}" for k, v in args.items()) + ")" if args else "") + " "
            lines.append(f"({how}the last state steps back to state {trace.loop}: the cycle repeats forever)")
    return "\n".join(lines) + "\n"
