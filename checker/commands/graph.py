"""`txncheck graph MODEL --format dot|graphml [--depth N]`: export the explored state graph.

The model's spec is explored breadth-first with no property checked (a
violation would stop the search early), and the state graph of
`Exploration.graph()` is written as DOT or GraphML (networkx). `--depth N`
keeps the states within N steps of the initial states.
"""

from __future__ import annotations

import io
import sys

from ..engines import EngineError
from ..errors import explained
from ..job import Job
from ..model import load_model
from .argtypes import natural


def register(sub) -> None:
    p = sub.add_parser("graph", help="export a model's explored state graph as DOT or GraphML")
    p.add_argument("model", help="model file (TOML)")
    p.add_argument("--format", default="dot", choices=("dot", "graphml"), help="output format (default: dot)")
    p.add_argument("--depth", type=natural, metavar="N", help="only the states within N steps of the initial states")
    p.add_argument("--max-states", type=natural, default=100_000, metavar="N",
                   help="refuse graphs larger than N states (default 100000)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(run=run)




def run(args) -> int:
    from ..engines.bfs import run as bfs

    m = load_model(args.model)
    spec = m.instantiate()
    try:
        outcome = bfs(Job(spec=spec, properties={}, keep_graph=True, max_states=args.max_states + 1))
    except Exception as exc:
        why = explained(spec, exc)
        if why is exc:
            raise
        raise why from exc
    ex = outcome.exploration
    if outcome.verdict == "incomplete" and (args.depth is None or args.depth + 1 >= len(ex.levels)):
        raise EngineError(f"{args.model}: the state graph has more than {args.max_states} states; "
                          "use --depth N or raise --max-states")
    g = ex.graph(None if args.depth is None else args.depth + 1)
    title = spec.describe() + (f", within {args.depth} step{'' if args.depth == 1 else 's'}" if args.depth is not None else "")
    if args.format == "dot":
        from ..render.dot import graph_dot

        text = graph_dot(g, title)
    else:
        text = graphml(g, title)
    if args.output:
        from ..reports.output import write_text_atomic

        write_text_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    print(f"{g.number_of_nodes():,} states, {g.number_of_edges():,} edges", file=sys.stderr)
    return 0


def graphml(g, title: str) -> str:
    """GraphML through networkx; node ids are hex fingerprints, edge actions one string."""
    import networkx as nx

    h = nx.DiGraph(name=title)
    for node, data in g.nodes(data=True):
        h.add_node(f"{node:016x}", index=data["index"], initial=bool(data["initial"]))
    for u, v, data in g.edges(data=True):
        h.add_edge(f"{u:016x}", f"{v:016x}", actions="; ".join(data["actions"]))
    buf = io.BytesIO()
    nx.write_graphml(h, buf, encoding="utf-8")
    return buf.getvalue().decode("utf-8")
