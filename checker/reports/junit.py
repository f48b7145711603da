"""The gate's result as JUnit XML, which GitHub, GitLab and Jenkins render.

One <testsuite> per model file, one <testcase> per property of the model
(classname: the model path, dotted; name: the property). A failed expectation
is a <failure> whose text is the counterexample's step table; a model that
cannot be checked is an <error>; a property the search did not settle is
<skipped>. Each suite's <properties> carry the model's figures and its
label (label.holds_for, label.source, label: what the verdict holds for),
and `checked_depth`, the depth to which every state was checked; every
case's text starts with the label.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from ..gate import ERROR, FAILED, SKIPPED, GateResult, ModelResult


def classname(r: ModelResult) -> str:
    name = r.shown[:-5] if r.shown.endswith(".toml") else r.shown
    return name.replace("/", ".").replace("\\", ".")


def junit_tree(result: GateResult) -> ET.Element:
    counts = result.counts()
    root = ET.Element("testsuites", {
        "name": "txncheck", "tests": str(len(result.cases)), "failures": str(counts[FAILED]),
        "errors": str(counts[ERROR]), "skipped": str(counts[SKIPPED]),
        "time": f"{sum(r.seconds for r in result.results):.3f}",
    })
    for r in result.results:
        per = {s: sum(1 for c in r.cases if c.status == s) for s in (FAILED, ERROR, SKIPPED)}
        suite = ET.SubElement(root, "testsuite", {
            "name": r.shown, "tests": str(len(r.cases)), "failures": str(per[FAILED]),
            "errors": str(per[ERROR]), "skipped": str(per[SKIPPED]), "time": f"{r.seconds:.3f}",
        })
        props = ET.SubElement(suite, "properties")
        for k, v in _figures(r).items():
            ET.SubElement(props, "property", {"name": k, "value": str(v)})
        share = r.seconds / max(1, len(r.cases))
        for c in r.cases:
            tc = ET.SubElement(suite, "testcase", {
                "classname": classname(r), "name": c.name, "file": r.shown, "time": f"{share:.3f}"})
            if c.status == FAILED:
                el = ET.SubElement(tc, "failure", {"message": c.message, "type": c.kind})
                el.text = _body(c, r.label)
            elif c.status == ERROR:
                el = ET.SubElement(tc, "error", {"message": c.message, "type": "ModelError"})
                el.text = c.message
            elif c.status == SKIPPED:
                ET.SubElement(tc, "skipped", {"message": c.message})
            elif c.message or c.detail:
                out = ET.SubElement(tc, "system-out")
                out.text = _body(c, r.label)
    return root


def _body(c, label: str = "") -> str:
    text = (f"[{label}]\n" if label else "") + c.message
    if c.violation is not None and c.violation.trace_file and not c.detail:
        text += f"\ntrace: {c.violation.trace_file}"
    if c.detail:
        text += "\n\n" + c.detail
    return text


def _figures(r: ModelResult) -> dict:
    out: dict[str, object] = {}
    if r.model is not None:
        out["spec"] = r.model.spec_name
        out["variant"] = r.model.variant
        for k, v in r.model.expect.items():
            out[f"expect.{k}"] = v
        for k, v in r.model.label.items():
            out[f"label.{k}"] = v
        if r.label:
            out["label"] = r.label
    if r.report is not None:
        o = r.report.outcome
        out.update({"engine": o.engine, "verdict": o.verdict, "distinct_states": o.distinct_states,
                    "states_generated": o.states_generated, "depth": o.depth})
        if o.incomplete_reason:
            out["incomplete_reason"] = o.incomplete_reason
        if o.checked_depth is not None:  # every state to this depth was checked (all of them when it finished)
            out["checked_depth"] = o.checked_depth
    return out


def write_junit(result: GateResult, path: str | Path) -> Path:
    from .output import write_text_atomic

    junit_root = junit_tree(result)
    tree = ET.ElementTree(junit_root)
    ET.indent(tree)
    text = '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(junit_root, encoding="unicode") + "\n"
    return write_text_atomic(path, text)
