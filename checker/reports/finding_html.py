"""A finding as one self-contained HTML page: the Markdown page's text
(checker/reports/finding.py), with the sequence diagram rendered in the page
and the step table, both exactly as `txncheck show --format html` draws them
(checker/render/html.py). Raw HTML in the notes is shown as text, never run.
"""

from __future__ import annotations

import html

from markdown_it import MarkdownIt

from ..render.html import STYLE, breaking_step, diagram_block, mermaid_scripts, step_rows
from .finding import DIAGRAM, STEPS, Finding, blocks

EXTRA_STYLE = """
body { max-width: 72rem; line-height: 1.45; }
code { font-family: ui-monospace, Menlo, Consolas, monospace; background: #f4f4f4; padding: 0 .2rem; }
pre code { display: block; padding: .6rem; overflow-x: auto; }
"""


def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False}).enable("table")


def render_finding_html(f: Finding) -> str:
    md = _markdown()
    parts: list[str] = []
    pending: list[str] = []

    def flush():
        if pending:
            parts.append(md.render("\n".join(pending)))
            pending.clear()

    for b in blocks(f):
        if b is DIAGRAM:
            flush()
            parts.append(diagram_block(f.trace))
        elif b is STEPS:
            flush()
            parts.append('<table id="steps">\n<thead><tr><th>step</th><th>action</th><th>params</th>'
                         "<th>changed</th></tr></thead>\n<tbody>\n"
                         f"{step_rows(f.trace, breaking_step(f.trace))}\n</tbody>\n</table>")
        else:
            pending.append(b)
    flush()
    body = "\n".join(parts)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(f.title)}</title>
<style>{STYLE}{EXTRA_STYLE}</style>
</head>
<body>
{body}
{mermaid_scripts()}
</body>
</html>
"""
