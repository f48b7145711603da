"""A finding: one counterexample, told as a bug report a maintainer can act on.

`build_finding` gathers what a report says, each part from where it is true:

- the trace (ITF) and the model that found it: variant, bounds, property,
  the model's own description of the bounds that cut behaviour;
- the human-written notes beside the model (checker/reports/notes.py): title,
  impact, code locations, why upstream tests miss it, what is abstracted;
- the replay on `reference/`, run now, in process (counterexamples/replay.py);
- the replay over a live ZooKeeper and the fix model's figures, each from the
  findings folder's recorded figures (checker/reports/figures.py), which
  `--zookeeper` and `--check-fix` refresh from a run they make.

The report's text does not depend on whether a figure was computed by this
run or read back, and holds no times, so a regenerated report equals the
committed one until a model, a trace or a note changes.

`render_markdown` writes the page; checker/reports/finding_html.py the
self-contained HTML page with the same content and the rendered diagram.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..itf import Trace, read_trace
from .digest import model_digest
from ..model import Model, ModelError, load_model
from ..render.mermaid import render_mermaid
from ..render.table import changed_fields, fmt_value
from ..glossary import glossary
from .explain import also_found_by, bound_rows, explained, fault_step, mark_fault, property_sentence, spec_of
from .figures import Figures
from .notes import Notes, fix_model_path, load_notes
from .reproduce import commands, has_reference, reproduce_sentence


@dataclass
class Finding:
    trace: Trace
    trace_shown: str                     # the trace's path, as the commands name it
    model: Model | None = None
    model_shown: str | None = None
    notes: Notes | None = None
    reference: str = ""                  # the replay on reference/, one sentence
    reference_verdict: str | None = None  # reproduced | not_reproduced | diverged | None (no bridge)
    zookeeper: str = ""
    zookeeper_failed: bool = False
    fix_shown: str | None = None
    fix: str = ""                        # the fix model's verdict and figures, one sentence
    links_from: Path | None = None       # the folder the page is written to (for relative links)
    extra_commands: list[str] = field(default_factory=list)
    spec: object = None                  # the model's spec, for its words (explain.py)
    also: list[Path] = field(default_factory=list)   # models whose notes say they find this defect

    @property
    def title(self) -> str:
        if self.notes:
            return self.notes.title
        m = self.trace.meta
        return f"{m.get('spec')} [{m.get('variant')}]: {m.get('property')} violated"

    @property
    def prop(self) -> str:
        return str(self.trace.meta.get("property"))

    @property
    def kind(self) -> str:
        return str(self.trace.meta.get("kind", "invariant"))

    def link(self, target: str | Path) -> str:
        """A relative link from the page to a file of the repository."""
        target = Path(target).resolve()
        if self.links_from is None:
            return str(target)
        here = self.links_from.resolve()
        if os.path.commonpath([target, here]) == os.path.sep:  # no folder in common: the absolute path
            return str(target)
        return os.path.relpath(target, here)


def shown(path: str | Path) -> str:
    """A path as a command should name it: relative to the current folder when under it."""
    p = Path(path)
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p)


def trace_digest(trace: Trace) -> str:
    """What identifies a trace for a recorded result: its length and its states' fingerprints."""
    fps = ",".join(str(s.get("fingerprint")) for s in trace.steps)
    return f"{trace.length}:{hashlib.sha256(fps.encode()).hexdigest()[:16]}"


def model_of_trace(trace: Trace) -> Path | None:
    """The model file the trace's `#meta.model` names: as given, or under a folder above the trace."""
    name = trace.meta.get("model")
    if not isinstance(name, str) or not name:
        return None
    candidates = [Path(name)]
    if trace.path is not None:
        candidates += [d / name for d in Path(trace.path).resolve().parents]
    return next((c for c in candidates if c.is_file()), None)


# -- the replays ---------------------------------------------------------------------------


def describe_replay(res) -> str:
    """One sentence for a replay `Result`, with no times in it."""
    if res.verdict == "reproduced" and res.kind == "lasso":
        text = (f"reproduced: the implementation runs the stem and one turn of the cycle back to state {res.step}, "
                f"so it can repeat the cycle forever ({res.property})")
    elif res.verdict == "reproduced":
        text = f"reproduced at step {res.step}: {res.property} fails on the implementation's own state"
    elif res.verdict == "not_reproduced":
        text = f"not reproduced: {res.steps_run} steps replayed and every property holds on the implementation"
        if res.note:
            text += f" ({res.note})"
    else:
        text = f"diverged at step {res.step}" + (f" ({res.action})" if res.action else "") + f": {res.note}"
        if res.diff:
            text += f"; symbols that differ: {', '.join(sorted(res.diff))}"
    if res.also_fails:
        text += "; also failing there: " + ", ".join(f"{n} from step {k}" for n, k in sorted(res.also_fails.items()))
    return text


def replay_on_reference(f: Finding) -> None:
    from ...counterexamples.replay import replay

    if not has_reference(f.trace):
        f.reference = (f"not available: `reference/` has no implementation of spec {f.trace.meta.get('spec')!r}, "
                       "so this trace was not replayed on one")
        return
    res = replay(f.trace_shown, trace=f.trace)
    f.reference_verdict = res.verdict
    f.reference = describe_replay(res)


def replay_on_zookeeper(f: Finding, figures: Figures, zk_factory) -> None:
    """Run the replay over ZooKeeper (`zk_factory`: a store factory) and record it."""
    from ...counterexamples.replay import replay

    key = f.model_shown or f.trace_shown
    if not has_reference(f.trace):
        return
    try:
        res = replay(f.trace_shown, trace=f.trace, bridge_options={"store": zk_factory})
    except ConnectionError as exc:
        f.zookeeper_failed = True
        f.zookeeper = f"incomplete: the ZooKeeper server went away during the replay ({exc})"
        return
    figures.record("zookeeper", key, {"trace": trace_digest(f.trace), "verdict": res.verdict,
                                      "result": describe_replay(res)})


def zookeeper_sentence(f: Finding, figures: Figures) -> str:
    if f.zookeeper:  # this run tried and failed
        return f.zookeeper
    if not has_reference(f.trace):
        return "not available (no reference implementation of this spec to run over ZooKeeper)"
    rec = figures.get("zookeeper", f.model_shown or f.trace_shown)
    if rec is None:
        return "not run (`txncheck report --zookeeper` runs it on a private ZooKeeper server and records it)"
    if rec.get("trace") != trace_digest(f.trace):
        return ("recorded for a different trace of this model, so not shown: "
                "rerun `txncheck report --zookeeper` to record this one")
    return f"{rec.get('result')} (recorded by `txncheck report --zookeeper`, on a private ZooKeeper server)"


# -- the fix -----------------------------------------------------------------------------------


def check_fix(fix_path: Path, figures: Figures) -> None:
    """Check the fix model and record its verdict and figures; a model whose
    search stops at its max_depth is proved too, if it has a [prove] table
    (the proof covers every depth), and the proof's verdict recorded."""
    from ..api import check_model

    m = load_model(fix_path)
    r = check_model(m, keep_graph=bool(m.temporal))
    o = r.outcome
    value = {"model": model_digest(fix_path), "verdict": o.verdict, "distinct": o.distinct_states,
             "generated": o.states_generated, "depth": o.depth}
    if o.violations:
        v = o.violations[0]
        value["violation"] = f"{v.kind} {v.property} in {v.length} states"
    elif o.verdict == "incomplete" and m.raw.get("max_depth") == o.depth and "prove" in m.raw:
        from ..symbolic.run import prove_model

        value["proof"] = prove_model(m).verdict
    figures.record("fix", shown(fix_path), value)


def fix_sentence(fix_path: Path, figures: Figures) -> str:
    key = shown(fix_path)
    rec = figures.get("fix", key)
    if rec is None:
        return (f"not checked for this report: `txncheck check {key}` checks it, and "
                "`txncheck report --check-fix` records its figures here")
    if rec.get("model") != model_digest(fix_path):
        return (f"the recorded figures are of an older version of {key}, so not shown: "
                "rerun `txncheck report --check-fix`")
    figs = (f"{rec['distinct']:,} distinct states, {rec['generated']:,} states generated, depth {rec['depth']}")
    if rec.get("verdict") == "ok":
        head = f"passes: every property of the model holds, exhaustively ({figs})"
    elif rec.get("verdict") == "incomplete" and rec.get("proof") == "proved":
        head = (f"passes: every property of the model is proved by induction at its bounds (`txncheck prove "
                f"{key}`), and every state up to its max_depth was checked with no violation ({figs})")
    else:
        head = f"does NOT pass: {rec.get('verdict')}" + (f", {rec['violation']}" if rec.get("violation") else "") + \
               f" ({figs})"
    return head + "; figures recorded by `txncheck report --check-fix` from its own check"


# -- building ---------------------------------------------------------------------------------


def build_finding(trace_path: str | Path, *, trace: Trace | None = None, model_path: str | Path | None = None,
                  figures: Figures | None = None, check_fixes: bool = False, zk_factory=None,
                  links_from: Path | None = None, trace_shown: str | None = None) -> Finding:
    """Everything a report of this trace says. Raises TraceError / ModelError (exit 2) on bad input."""
    figures = figures or Figures(None)
    trace = trace if trace is not None else read_trace(trace_path)
    if not trace.meta.get("property"):
        from ..itf import TraceError

        raise TraceError(f"{trace_path}: the trace names no violated property, so there is nothing to report")
    f = Finding(trace, trace_shown or shown(trace_path), links_from=links_from)
    mp = Path(model_path) if model_path is not None else model_of_trace(trace)
    if mp is not None:
        try:
            f.model = load_model(mp)
        except ModelError:
            if model_path is not None:
                raise
            f.model = None  # the trace is still reportable without its model
        if f.model is not None:
            f.model_shown = shown(mp)
            f.notes = load_notes(mp)
            f.spec = spec_of(f.model)
            f.also = also_found_by(mp)
    replay_on_reference(f)
    if zk_factory is not None:
        replay_on_zookeeper(f, figures, zk_factory)
    f.zookeeper = zookeeper_sentence(f, figures)
    fix = fix_model_path(mp, f.notes) if mp is not None and f.model is not None else None
    if fix is not None:
        f.fix_shown = shown(fix)
        rec = figures.get("fix", f.fix_shown)
        if check_fixes and (rec is None or rec.get("model") != model_digest(fix)):  # missing or stale only
            check_fix(fix, figures)
        f.fix = fix_sentence(fix, figures)
    return f


# -- the Markdown page ------------------------------------------------------------------------


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def steps_markdown(trace: Trace, fault: int | None = None) -> str:
    """The step table as Markdown (the same rows as `txncheck show`); `fault`:
    the step the notes name as the fault."""
    from ..render.html import breaking_step

    breaking = breaking_step(trace)
    rows = ["| step | action | params | changed |", "|---|---|---|---|"]
    for k, (step, state) in enumerate(zip(trace.steps, trace.states)):
        params = ", ".join(f"{p}={fmt_value(v)}" for p, v in step["params"].items())
        changes = changed_fields(trace.states[k - 1] if k else None, state)
        cells = "<br>".join(_cell(f"`{n} = {v}`") for n, v in changes) or "(no change)"
        action = step["action"]
        if k == fault and k != breaking:
            action = f"**{action}** ⚑ the fault"
        if k == breaking:
            action = f"**{action}** ✗ breaks {trace.meta.get('property')}"
        if trace.loop is not None and k == trace.loop:
            action += " ⟲ cycle starts"
        rows.append(f"| {k} | {_cell(action)} | {_cell(params)} | {cells} |")
    if trace.loop is not None:
        rows.append("")
        rows.append(f"After the last step the run goes back to state {trace.loop}, and the cycle repeats forever.")
    return "\n".join(rows)


def summary_rows(f: Finding) -> list[tuple[str, str]]:
    m = f.trace.meta
    bounds = ", ".join(f"{k}={v}" for k, v in m.get("bounds", {}).items())
    rows = []
    if f.notes:
        rows.append(("status", f.notes.status))
        rows.append(("code read", f.notes.code))
    if f.model is not None and f.model.label:
        from ..model import HOLDS_FOR

        lab = f.model.label
        rows.append(("holds for", f"{HOLDS_FOR.get(lab['holds_for'], lab['holds_for'])} ({lab['source']})"))
    rows.append(("spec, variant", f"`{m.get('spec')}`, `{m.get('variant')}`"))
    kind = "temporal property (a lasso: a cycle that never reaches the goal)" if f.trace.loop is not None \
        else f"{f.kind}"
    said = property_sentence(f.spec, f.prop, f.model)
    rows.append(("property", f"`{f.prop}`, {kind}" + (f": {said}" if said else "")))
    rows += bound_rows(f.spec, m.get("bounds", {}))
    if f.trace.loop is not None:
        rows.append(("trace", f"{f.trace.length} states: a stem, then a cycle from state {f.trace.loop} that repeats "
                              "forever"))
    else:
        shortest = "shortest counterexample" if m.get("engine", "bfs") != "simulate" else "counterexample"
        rows.append(("trace", f"{f.trace.length} states, the {shortest} ({m.get('engine', 'bfs')})"))
    rows.append(("bounds", f"`{bounds}`" if bounds else "(none)"))
    if f.model_shown:
        rows.append(("model", f"[{f.model_shown}]({f.link(f.model_shown)})"))
    if f.also:
        rows.append(("also found by", ", ".join(f"[{shown(p)}]({f.link(p)})" for p in f.also)
                     + " (the same defect, not a separate one)"))
    return rows


DIAGRAM, STEPS = object(), object()  # where the two pages differ: the diagram and the step table
SOURCE = Path(__file__).resolve().parents[2]   # the source checkout, where a glossary lives


def glossary_link(f: Finding) -> str:
    """A link from the page to the glossary of the trace's fields, or ""."""
    where = glossary(f.trace.meta.get("spec"))
    return f"[{where}]({f.link(SOURCE / where)})" if where else ""


def blocks(f: Finding) -> list:
    """The page as Markdown text blocks, with DIAGRAM and STEPS where those go."""
    notes = f.notes
    out: list[object] = [f"# {f.title}", ""]   # text, and DIAGRAM and STEPS
    out.append(notes.section("Impact") if notes else
               "*No notes beside the model (`<model>.finding.md`), so this report has no impact, code locations "
               "or history: it is the checker's output alone.*")
    out += ["", "| | |", "|---|---|"]
    out += [f"| {k} | {_cell(v)} |" for k, v in summary_rows(f)]
    out += ["", "## Sequence diagram", "", DIAGRAM, ""]
    out += ["## Steps", "", STEPS, ""]
    out += explained(f, glossary_link(f))
    if notes:
        for name in ("Where in the code", "Known upstream?", "Who can trigger it", "Why the upstream tests miss it"):
            out += [f"## {name}", "", notes.section(name), ""]
    out += ["## What was shown, and where", ""]
    system = "the real system"
    out.append(f"- **On {system}**: not reproduced; no run of the real code was made for this report.")
    out.append(f"- **On `reference/`** (replayed by this report, in process): {f.reference}.")
    out.append(f"- **On `reference/` over ZooKeeper**: {f.zookeeper}.")
    out.append(f"- **In the model**: `{f.prop}` fails " + (f"on a lasso of {f.trace.length} states"
                                                          if f.trace.loop is not None else
                                                          f"in {f.trace.length} states")
               + (f" of [{f.model_shown}]({f.link(f.model_shown)})" if f.model_shown else "") + ".")
    out.append("")
    out += ["## What the model abstracts away", ""]
    if notes:
        out += [notes.section("What the model abstracts away"), ""]
    if f.model is not None and f.model.description:
        out += [f"The model file's own description: {f.model.description}", ""]
    out += ["## The fix", ""]
    if notes and notes.section("The fix"):
        out += [notes.section("The fix"), ""]
    if f.fix_shown:
        out.append(f"The model of the fix is [{f.fix_shown}]({f.link(f.fix_shown)}). It {f.fix}."
                   if f.fix.startswith(("passes", "does NOT")) else
                   f"The model of the fix is [{f.fix_shown}]({f.link(f.fix_shown)}): {f.fix}.")
    else:
        out.append("No model of a fix sits beside this model yet.")
    out += ["", "## Reproduce", "", reproduce_sentence(f), "", "```sh", *commands(f), "```", ""]
    out.append("*Generated by `txncheck report` from the model, its trace and "
               + (f"[the notes beside the model]({f.link(notes.path)})" if notes else "no notes")
               + "; edit those, not this page.*")
    return out


def render_markdown(f: Finding) -> str:
    parts = []
    fault = fault_step(f.trace, f.notes.fault if f.notes else None)
    for b in blocks(f):
        if b is DIAGRAM:
            parts.append("```mermaid\n" + mark_fault(render_mermaid(f.trace), f.trace, fault).rstrip("\n") + "\n```")
        elif b is STEPS:
            parts.append(steps_markdown(f.trace, fault))
        else:
            parts.append(b)
    return "\n".join(parts) + "\n"
