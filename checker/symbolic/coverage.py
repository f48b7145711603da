"""What an agreement run exercised: for each action label, whether the spec
enabled it in some checked state and disabled it in another; for each
conjunct of each action's guard, whether it was seen true and seen false.

A conjunct never seen false is one the agreement could not have noticed
missing: a relation without it would have agreed on every state checked.
A label never seen enabled was compared only where it cannot fire. The
report names them, so that "0 disagreements" says what it covered.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import z3

from ...spec.api import Action
from .system import show_action


def conjuncts(guard: z3.BoolRef) -> list[z3.BoolRef]:
    """The top-level conjuncts of a guard (nested Ands flattened), each
    simplified; those that simplify to true are no condition and left out."""
    if z3.is_and(guard):
        return [c for arg in guard.children() for c in conjuncts(arg)]
    g = z3.simplify(guard)
    if z3.is_and(g) and not g.eq(guard):
        return conjuncts(g)
    return [] if z3.is_true(g) else [g]


@dataclass
class Coverage:
    labels: list[Action]
    conjuncts: dict[int, list[str]] = field(default_factory=dict)   # action index -> its conjuncts' text
    fields: dict[int, list[int]] = field(default_factory=dict)      # action index -> the bundle's fields
    seen: dict[tuple[int, int], set] = field(default_factory=dict)  # (action, conjunct) -> {True, False}
    enabled: Counter = field(default_factory=Counter)               # label -> states where the spec enables it
    states: int = 0

    def conjuncts_seen(self, field_of, true_id: int, false_id: int) -> None:
        for i, fields in self.fields.items():
            for j, n in enumerate(fields):
                v = field_of.id(n)
                if v == true_id or v == false_id:
                    self.seen.setdefault((i, j), set()).add(v == true_id)

    def enabled_by_spec(self, labels: set) -> None:
        self.states += 1
        self.enabled.update(labels)

    def summary(self) -> dict[str, Any]:
        """Per label: states where the spec enabled it and disabled it; the
        conjuncts never seen false or never seen true."""
        distinct = list(dict.fromkeys(self.labels))
        never_enabled = [show_action(a) for a in distinct if not self.enabled[a]]
        never_disabled = [show_action(a) for a in distinct if self.enabled[a] == self.states]
        never_false: list[str] = []
        never_true: list[str] = []
        both = total = 0
        for i, texts in self.conjuncts.items():
            for j, text in enumerate(texts):
                total += 1
                got = self.seen.get((i, j), set())
                if got == {True, False}:
                    both += 1
                    continue
                where = f"{show_action(self.labels[i])}: {_short(text)}"
                (never_false if True in got else never_true).append(where)
        return {"states": self.states, "labels": len(distinct),
                "both": len(distinct) - len(never_enabled) - len(never_disabled),
                "never_enabled": never_enabled, "never_disabled": never_disabled,
                "conjuncts": total, "conjuncts_both": both,
                "never_false": never_false, "never_true": never_true}


def _short(text: str, most: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= most else text[:most - 3] + "..."


def coverage_lines(c: dict[str, Any], most: int = 5) -> list[str]:
    lines = [f"coverage: {c['labels']} action labels: {c['both']} seen enabled and disabled by the spec"
             + "".join(f", {len(c[k])} {what}" for k, what in (("never_enabled", "never enabled"),
                                                                ("never_disabled", "never disabled")) if c[k]),
             f"  guard conjuncts: {c['conjuncts_both']} of {c['conjuncts']} seen both true and false"
             + (f"; {len(c['never_false'])} never false (dropping one would go unnoticed)"
                if c["never_false"] else "")
             + (f"; {len(c['never_true'])} never true" if c["never_true"] else "")]
    for key, what in (("never_enabled", "never enabled"), ("never_false", "never false")):
        items = c[key]
        for x in items[:most]:
            lines.append(f"    {what}: {x}")
        if len(items) > most:
            lines.append(f"    ... and {len(items) - most} more {what} (--json lists them all)")
    return lines
