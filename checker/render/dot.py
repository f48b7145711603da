"""Graphviz DOT: a trace as a chain of states, and an explored state graph.

A trace is drawn top to bottom, one node per state labelled with what changed,
one edge per step labelled with the action; the state that breaks the property
is red, and a lasso's back edge is dashed. The state graph (`graph_dot`) comes
from `Exploration.graph()`: fingerprint nodes (initial states doubled), edges
labelled with their actions.
"""

from __future__ import annotations

from ..itf import Trace
from .table import changed_fields, fmt_value

MAX_LABEL = 60


def quote(s) -> str:
    """A DOT double-quoted string."""
    s = str(s).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{s}"'


def _clip(s: str) -> str:
    return s if len(s) <= MAX_LABEL else s[:MAX_LABEL - 1] + "…"


def render_dot(trace: Trace) -> str:
    m = trace.meta
    prop = m.get("property")
    title = f"{m.get('spec')} [{m.get('variant')}]" + (f": {prop} violated in {trace.length} states" if prop else "")
    out = ["digraph trace {", f"  label={quote(title)};", "  labelloc=t;", "  rankdir=TB;",
           '  node [shape=box, style="rounded,filled", fillcolor="#f4f4f4", fontname="Helvetica", fontsize=10];',
           '  edge [fontname="Helvetica", fontsize=10];']
    last = trace.length - 1
    for k, state in enumerate(trace.states):
        changes = changed_fields(trace.states[k - 1] if k else None, state)
        lines = [f"state {k}"] + [_clip(f"{n} = {v}") for n, v in changes[:8]]
        if len(changes) > 8:
            lines.append(f"… {len(changes) - 8} more")
        attrs = [f"label={quote(chr(10).join(lines))}"]
        if k == last and prop and m.get("kind", "invariant") in ("invariant", "deadlock"):
            attrs += ['fillcolor="#ffcccc"', 'color="#cc0000"', "penwidth=2",
                      f"xlabel={quote('breaks ' + prop)}"]
        fp = trace.steps[k].get("fingerprint")
        if fp:
            attrs.append(f"tooltip={quote(fp)}")
        out.append(f"  s{k} [{', '.join(attrs)}];")
    for k in range(1, trace.length):
        step = trace.steps[k]
        params = ", ".join(f"{p}={fmt_value(v)}" for p, v in step["params"].items())
        label = step["action"] + (f"({params})" if params else "")
        out.append(f"  s{k - 1} -> s{k} [label={quote(_clip(label))}];")
    if trace.loop is not None:
        out.append(f"  s{last} -> s{trace.loop} [style=dashed, label=\"cycle\"];")
    out.append("}")
    return "\n".join(out) + "\n"


def graph_dot(g, title: str = "") -> str:
    """An explored state graph (networkx DiGraph with fingerprint nodes) as DOT."""
    out = ["digraph states {"]
    if title:
        out += [f"  label={quote(title)};", "  labelloc=t;"]
    out.append('  node [shape=circle, fontname="Helvetica", fontsize=9];')
    for node, data in g.nodes(data=True):
        attrs = [f"label={quote(data.get('index', ''))}", f"tooltip={quote(f'{node:016x}')}"]
        if data.get("initial"):
            attrs.append("shape=doublecircle")
        out.append(f"  n{node:016x} [{', '.join(attrs)}];")
    for u, v, data in g.edges(data=True):
        label = "; ".join(data.get("actions", []))
        out.append(f"  n{u:016x} -> n{v:016x} [label={quote(_clip(label))}];")
    out.append("}")
    return "\n".join(out) + "\n"
