"""A trace as one self-contained HTML page: the sequence diagram (rendered in the
page by the vendored Mermaid bundle, inlined, so nothing is fetched at view
time), the property that failed and the step table.

`assets/mermaid.min.js.gz` is `dist/mermaid.min.js` of the npm package mermaid
(MIT, see assets/mermaid.LICENSE; version in MERMAID_VERSION; the bundle's
sha256 in MERMAID_SHA256), gzipped. The page carries it gzipped, in base64,
and unpacks it with the browser's DecompressionStream: a page is 1.3 MB, not
the 3.5 MB of the bundle itself.
"""

from __future__ import annotations

import base64
import html
import json
from functools import lru_cache
from pathlib import Path

from ..glossary import glossary
from ..itf import Trace
from .mermaid import render_mermaid
from .table import changed_fields, fmt_value

ASSETS = Path(__file__).with_name("assets")
MERMAID_VERSION = "11.17.2"

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2rem; color: #1d1d1f; }
h1 { font-size: 1.4rem; margin-bottom: .2rem; }
.meta { color: #555; margin: .2rem 0 1rem; }
.verdict { display: inline-block; padding: .35rem .7rem; border-radius: 6px; background: #ffe3e3; color: #8a0000;
           border: 1px solid #e0a0a0; font-weight: 600; }
.verdict.ok { background: #e6f6e6; color: #135e13; border-color: #9fd09f; }
.diagram { margin: 1.5rem 0; overflow-x: auto; }
table { border-collapse: collapse; font-size: .9rem; }
th, td { border: 1px solid #ddd; padding: .3rem .6rem; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
tr.breaks td { background: #ffe3e3; }
td.changes div { font-family: ui-monospace, Menlo, Consolas, monospace; white-space: pre-wrap; }
"""


MERMAID_SHA256 = "581ed7d74bd9048d0e3a91363927d72ef22942d7722546b27f7cc29e35390eb8"


@lru_cache(maxsize=1)
def mermaid_gzip_base64() -> str:
    """The bundle as the page carries it (base64 holds no `</script`)."""
    return base64.b64encode((ASSETS / "mermaid.min.js.gz").read_bytes()).decode("ascii")


def breaking_step(trace: Trace) -> int | None:
    """The step that breaks an invariant (or deadlocks): the last one; None for a lasso."""
    m = trace.meta
    return trace.length - 1 if m.get("property") and m.get("kind", "invariant") in ("invariant", "deadlock") else None


def step_rows(trace: Trace, breaking: int | None) -> str:
    """The step table's <tr> rows (step, action, params, changed fields)."""
    rows = []
    for k, (step, state) in enumerate(zip(trace.steps, trace.states)):
        params = ", ".join(f"{p}={fmt_value(v)}" for p, v in step["params"].items())
        changes = changed_fields(trace.states[k - 1] if k else None, state)
        cells = "".join(f"<div>{html.escape(n)} = {html.escape(v)}</div>" for n, v in changes) or "(no change)"
        mark = ""
        if trace.loop is not None and k == trace.loop:
            mark = " ⟲ cycle starts"
        cls = ' class="breaks"' if k == breaking else ""
        rows.append(f"<tr{cls}><td>{k}</td><td>{html.escape(step['action'])}{mark}</td>"
                    f"<td>{html.escape(params)}</td><td class=\"changes\">{cells}</td></tr>")
    return "\n".join(rows)


def diagram_block(trace: Trace) -> str:
    """The trace's Mermaid sequence diagram (checker/render/mermaid.py), as the
    <pre> that `mermaid_scripts()` renders in the page."""
    return f'''<div class="diagram"><pre class="mermaid" id="diagram">
{html.escape(render_mermaid(trace))}</pre></div>'''


def mermaid_scripts() -> str:
    """The inlined Mermaid bundle, unpacked in the page, and the call that
    renders every `pre.mermaid`; the page's <body> gets data-rendered="ok"
    (or "error" and a #render-error)."""
    config = json.dumps({"startOnLoad": False, "securityLevel": "strict", "theme": "default",
                         "sequence": {"wrap": True, "width": 180}})
    return f"""<script>/* Mermaid {MERMAID_VERSION} (MIT), inlined: dist/mermaid.min.js, gzipped, in base64 */
var MERMAID_GZIP = "{mermaid_gzip_base64()}";
</script>
<script>
(async function () {{
  try {{
    var bytes = Uint8Array.from(atob(MERMAID_GZIP), function (c) {{ return c.charCodeAt(0); }});
    var js = await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
    await new Promise(function (loaded, failed) {{   // a script of its own, as an inlined one would be
      var s = document.createElement("script");
      s.src = URL.createObjectURL(new Blob([js], {{type: "text/javascript"}}));
      s.onload = loaded; s.onerror = function () {{ failed(new Error("the Mermaid bundle did not load")); }};
      document.head.appendChild(s);
    }});
    mermaid.initialize({config});
    await mermaid.run({{querySelector: "pre.mermaid"}});
    document.body.setAttribute("data-rendered", "ok");
  }} catch (err) {{
    document.body.setAttribute("data-rendered", "error");
    var p = document.createElement("pre"); p.id = "render-error";
    p.textContent = "diagram error: " + err; document.body.appendChild(p);
  }}
}})();
</script>"""


def render_html(trace: Trace) -> str:
    m = trace.meta
    prop = m.get("property")
    kind = m.get("kind", "invariant")
    bounds = ", ".join(f"{k}={v}" for k, v in m.get("bounds", {}).items())
    breaking = breaking_step(trace)
    title = f"{m.get('spec')} [{m.get('variant')}]" + (f": {prop} violated" if prop else "")
    if prop:
        verdict = (f'<div class="verdict" id="verdict">{html.escape(kind)} <b>{html.escape(prop)}</b> violated: '
                   f"shortest counterexample of {trace.length} states"
                   + (f", broken by step {breaking} ({html.escape(trace.steps[breaking]['action'])})"
                      if breaking is not None else "")
                   + (f", cycle from state {trace.loop}" if trace.loop is not None else "") + "</div>")
    else:
        verdict = f'<div class="verdict ok" id="verdict">a trace of {trace.length} states</div>'
    meta_line = " · ".join(x for x in (
        f"spec <b>{html.escape(str(m.get('spec')))}</b> [{html.escape(str(m.get('variant')))}]",
        html.escape(bounds) if bounds else "",
        f"model {html.escape(str(m['model']))}" if m.get("model") else "",
        f"fields: {html.escape(glossary(m.get('spec')))}" if glossary(m.get("spec")) else "",
        f"txncheck {html.escape(str(m.get('txncheck_version', '')))}",
    ) if x)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<style>{STYLE}</style>
</head>
<body>
<h1>{html.escape(title)}</h1>
<div class="meta">{meta_line}</div>
{verdict}
{diagram_block(trace)}
<h2>Steps</h2>
<table id="steps">
<thead><tr><th>step</th><th>action</th><th>params</th><th>changed</th></tr></thead>
<tbody>
{step_rows(trace, breaking)}
</tbody>
</table>
{mermaid_scripts()}
</body>
</html>
"""
