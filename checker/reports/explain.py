"""What a report says to a reader who knows the system, not the model: the
property in one sentence, the bounds that name an actor (which client), a
legend from the trace's fields to the system's names, the state that breaks
the property shown whole, the step that is the fault when the property only
fails later, and the models whose notes say they find the same defect.

The words come from the spec (`Spec.property_text`, `Spec.report_bounds`,
`Spec.legend`, each optional) and from the notes beside the model; a spec
that declares none gets the generic report.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..itf import Trace
from ..render.table import changed_fields
from .notes import SUFFIX, load_notes


def spec_of(model):
    """The model's spec instance, or None (a trace reported without its model)."""
    try:
        return model.instantiate() if model is not None else None
    except Exception:  # noqa: BLE001 - the report still stands without the spec's words
        return None


def property_sentence(spec, prop: str, model=None) -> str:
    """The property in one sentence; a temporal one (`A leads_to B` over the
    spec's state predicates `Name_t1`) from its predicates' sentences."""
    words = getattr(spec, "property_text", None) or {}
    tp = (getattr(model, "temporal", None) or {}).get(prop)
    if tp is None:
        return words.get(prop, "")
    m = re.fullmatch(r"\s*(\w+?)_(\w+)\s+leads_to\s+(\w+?)_(\w+)\s*", tp.text)
    if m and m[1] in words and m[3] in words:
        return (f"whenever, for {m[2]}, {words[m[1]]}, then eventually {words[m[3]]} (on every run where each "
                "system step the model's fairness names keeps being taken)")
    return ""


def bound_rows(spec, bounds: dict) -> list[tuple[str, str]]:
    """One row per bound the spec names as an actor of the run (its client)."""
    out = []
    for name, texts in (getattr(spec, "report_bounds", None) or {}).items():
        if name in bounds:
            value = bounds[name]
            out.append((name, f"`{value}`: {texts.get(str(value), '')}".rstrip(": ")))
    return out


def field_key(name: str) -> str:
    """`part[s1].tpos` -> `part.tpos`, `hdr[t1].state` -> `hdr.state`: the field, its indexes left out."""
    return re.sub(r"\[[^\]]*\]", "", name)


def legend(spec, trace: Trace) -> list[tuple[str, str]]:
    """(field, what it is in the system) for each field the trace changes or breaks on, in the spec's order."""
    words = getattr(spec, "legend", None) or {}
    seen = set()
    for k, state in enumerate(trace.states):
        for name, _ in changed_fields(trace.states[k - 1] if k else None, state):
            key = field_key(name)
            seen.add(key)
            seen.add(key.split(".")[0])
    return [(f, words[f]) for f in words if f in seen]


def breaking_state(trace: Trace) -> tuple[int, list[tuple[str, str]]]:
    """The state the property fails in (a lasso: the state its cycle starts from), every field."""
    from ..render.html import breaking_step

    k = trace.loop if trace.loop is not None else breaking_step(trace)
    k = len(trace.states) - 1 if k is None else k
    return k, changed_fields(None, trace.states[k])


def fault_step(trace: Trace, action: str | None) -> int | None:
    """The last step of `action` up to the breaking one."""
    if not action:
        return None
    from ..render.html import breaking_step

    end = breaking_step(trace)
    end = len(trace.steps) - 1 if end is None else end
    hits = [k for k, step in enumerate(trace.steps[: end + 1]) if step["action"] == action]
    return hits[-1] if hits else None


def mark_fault(mermaid: str, trace: Trace, k: int | None) -> str:
    """The diagram with a note at the fault's step, beside the one at the step that breaks the property."""
    if k is None:
        return mermaid
    lines = mermaid.split("\n")
    for i, line in enumerate(lines):
        if "✗ step" in line and line.lstrip().startswith("Note over"):
            head = line[: line.index(":")]
            lines.insert(i + 1, f"{head}: ⚑ the fault is step {k} ({trace.steps[k]['action']}); "
                                f"the property only fails here, once nothing left can repair it")
            break
    return "\n".join(lines)


def also_found_by(model_path: str | Path | None) -> list[Path]:
    """Models beside this one whose notes say they find this model's defect (`same_as`)."""
    if model_path is None:
        return []
    p = Path(model_path)
    out = []
    for notes in sorted(p.parent.glob(f"*{SUFFIX}")):
        other = notes.with_name(notes.name.removesuffix(SUFFIX) + ".toml")
        n = load_notes(other) if other.is_file() else None
        if n is not None and n.same_as == p.name:
            out.append(other)
    return out


def explained(f, glossary: str = "") -> list[str]:
    """The legend of the trace's fields (and a link to the spec's glossary,
    if it has one) and the breaking state, whole."""
    out = []
    words = legend(f.spec, f.trace)
    if words:
        out += ["## Legend", "", "What the trace's fields stand for in the system:", "", "| field | in the system |",
                "|---|---|", *(f"| `{k}` | {_cell(v)} |" for k, v in words), ""]
    if glossary:
        out += [f"What every field holds, and how the model writes it: {glossary}.", ""]
    k, fields = breaking_state(f.trace)
    what = "where the cycle starts, from which the run never reaches the goal" if f.trace.loop is not None else \
        f"the first in which `{f.prop}` fails"
    out += ["## The state that breaks the property", "", f"State {k}, {what}, every field:", "",
            "```", *(f"{n} = {v}" for n, v in fields), "```", ""]
    return out


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
