"""A profile as text (`txncheck profile`) and as JSON (`--json`)."""

from __future__ import annotations

from . import Profile

TOP = 12  # rows of the longer tables


def _share(counter, total: int, n: int = 3) -> str:
    if not total:
        return ""
    return ", ".join(f"{a} {100 * k / total:.0f}%" for a, k in counter.most_common(n))


def _table(head: list[str], rows: list[list], right: set[int]) -> list[str]:
    cells = [head] + [[str(x) for x in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(head))]
    out = []
    for r in cells:
        out.append("  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
                   .rstrip())
    return out


def _readers(r, values: int) -> str:
    if not r.probes:
        return "constant" if values == 1 else "not probed"
    parts = [name for name, k in (("properties", r.observe), ("guards", r.guard), ("updates", r.update),
                                  ("errors", r.errors)) if k]
    return ", ".join(parts) or "nothing seen"


def _factors(rows: list[tuple[str, float, str]]) -> list[str]:
    """One line per candidate that changes the count, by factor; one line
    for those that do not (factor 1.000 on this prefix)."""
    rows = sorted(rows, key=lambda r: -r[1])
    out = [f"    {name}: factor {f:.3f} ({note})" for name, f, note in rows if f >= 1.0005]
    flat = [name for name, f, _ in rows if f < 1.0005]
    if flat:
        out.append(f"    factor 1.000 on this prefix: {', '.join(flat)}")
    return out


def text(p: Profile) -> str:
    pre, g, st = p.prefix, p.growth, p.settings
    out = [f"profile of {p.model.path}: {p.spec.describe()}"]
    generated = pre.generated
    done = "the whole state space" if pre.stopped is None else f"stopped: {pre.stopped}"
    out.append(f"prefix: {len(pre.states):,} distinct states, {generated:,} generated, {len(pre.levels)} levels, "
               f"every state to depth {pre.complete} ({done}); {pre.seconds:.1f}s")
    out.append("")

    out.append("Levels: the new states, and the actions that first reached them")
    rows = []
    for k, lv in enumerate(pre.levels):
        grow = ("partial" if lv.depth > pre.complete else
                f"{lv.new / pre.levels[k - 1].new:.2f}x" if k and pre.levels[k - 1].new else "")
        rows.append([lv.depth, f"{lv.new:,}", f"{lv.generated:,}", grow, _share(lv.new_by, lv.new)])
    out += _table(["depth", "new", "generated", "growth", "new states by action"], rows, {0, 1, 2, 3})
    out.append("")

    out.append("Actions over the prefix: successors generated, new states first reached")
    gen: dict[str, int] = {}
    new: dict[str, int] = {}
    for lv in pre.levels:
        for a, k in lv.generated_by.items():
            gen[a] = gen.get(a, 0) + k
        for a, k in lv.new_by.items():
            new[a] = new.get(a, 0) + k
    rows = [[a, f"{gen[a]:,}", f"{new.get(a, 0):,}", f"{100 * new.get(a, 0) / len(pre.states):.1f}%"]
            for a in sorted(gen, key=lambda a: -new.get(a, 0))]
    out += _table(["action", "generated", "new", "of states"], rows, {1, 2, 3})
    out.append("")

    out.append(f"Fields, by the growth they carry (distinct states / distinct states without the field; "
               f"{g.states:,} states; read by: {st.probes} probes each)")
    order = sorted(range(len(p.layout.names)), key=lambda c: -g.factor[c])
    rows = []
    for c in order:
        w = sorted(a for a, cnt in p.commutation.writes.items() if p.layout.names[c] in cnt)
        rows.append([p.layout.names[c], f"{g.distinct[c]:,}", f"{g.factor[c]:.3f}", _readers(p.reads[c], g.distinct[c]),
                     ", ".join(w[:4]) + (" ..." if len(w) > 4 else "")])
    out += _table(["field", "values", "factor", "read by", "written by (sampled)"], rows, {1, 2})
    out.append("")
    multi = [n for n, m in p.layout.groups.items() if len(m) > 1]
    if multi:
        out.append("Top-level fields split above, as a whole (the factor of leaving the whole field out)")
        rows = [[n, len(p.layout.groups[n]), f"{g.group_factor[n]:.3f}", _readers(p.group_reads[n], 2)]
                for n in sorted(multi, key=lambda n: -g.group_factor[n])]
        out += _table(["field", "parts", "factor", "read by"], rows, {1, 2})
        out.append("")

    out.append("Candidates (sampled: each is a reduction to build as a switch and audit, not a proof)")
    irrelevant = [c for c in order if p.reads[c].role == "irrelevant" and p.reads[c].probes]
    out.append("- abstraction: fields no property, guard or update was seen to read"
               + (":" if irrelevant else ": none"))
    out += _factors([(p.layout.names[c], g.factor[c], f"{p.reads[c].probes} probes") for c in irrelevant])
    unprobed = [p.layout.names[c] for c in order if not p.reads[c].probes and g.distinct[c] > 1]
    if unprobed:
        out.append(f"    (never differed between two sampled states, so not probed: {', '.join(unprobed[:8])}"
                   + (" ...)" if len(unprobed) > 8 else ")"))
    out.append("- ghost history: fields only the properties read; the factor of keeping only what they observe "
               "of it" + (":" if p.ghosts else ": none"))
    ghosts = []
    for name, f in p.ghosts.items():
        col = p.layout.names.index(name) if name in p.layout.names else None
        r = p.reads[col] if col is not None else p.group_reads[name]
        whole = g.factor[col] if col is not None else g.group_factor[name]
        ghosts.append((name, f, f"observed as {', '.join(sorted(r.symbols))}; dropped entirely: {whole:.3f}"))
    out += _factors(ghosts)
    if not p.symmetry:
        out.append("- symmetry: the spec declares no symmetric sorts (Spec.symmetric_sorts and permute)")
    for sy in p.symmetry:
        if sy.error:
            out.append(f"- symmetry over {sy.sort}: not measured ({sy.error})")
            continue
        assert sy.closed is not None and sy.class_factor is not None, "measured, there being no error"
        classes = " ".join("{" + ", ".join(c) + "}" for c in sy.classes)
        out.append(f"- symmetry over {sy.sort} ({', '.join(sy.elements)}), on {sy.states:,} states of whole levels: "
                   f"{100 * sy.closed:.1f}% of the permuted states are reachable; orbits: {sy.factor:.2f}x fewer "
                   f"states under every permutation, {sy.class_factor:.2f}x under the declared classes {classes}")
        if sy.closed < 1:
            out.append("    (a permutation that leaves the state space is no symmetry: the first factor is not "
                       "available to a sound reduction)")
    com = p.commutation
    out.append(f"- partial-order reduction: action pairs co-enabled in {com.states} sampled states; commute: "
               "both orders reach the same states (shared params / disjoint: of the instances that share a "
               "parameter value / not)" + ("; footprint-dependent: commuted / dependent by the spec's footprints"
                                           if com.footprints else "; the spec declares no footprints: --por "
                                           "does nothing"))
    rows = []
    for (a, b), pr in sorted(com.pairs.items(), key=lambda x: -x[1].co_enabled):
        disjoint = pr.co_enabled - pr.shared
        why = "; ".join(f"{r} ({k})" for r, k in pr.reasons.most_common(2))
        fp = f"{pr.declared_but_commuted}/{pr.declared_dependent}" if com.footprints else ""
        rows.append([f"{a} | {b}", pr.co_enabled, f"{pr.independent}",
                     f"{pr.shared_independent}/{pr.shared}" if pr.shared else "",
                     f"{pr.independent - pr.shared_independent}/{disjoint}" if disjoint else "", fp, why])
    out += ["    " + line for line in _table(
        ["pair", "co-enabled", "commute", "shared params", "disjoint", "footprint-dependent", "why not"],
        rows[: TOP * 2], {1, 2, 3, 4, 5})]
    if len(rows) > TOP * 2:
        out.append(f"    ... {len(rows) - TOP * 2} more pairs (--json has all)")
    out.append("- visibility: the properties each action changes an observed symbol of (sampled)")
    for a in sorted(com.changes_symbols):
        vis = com.visible_to.get(a) or []
        syms = sorted(com.changes_symbols[a])
        out.append(f"    {a}: " + (f"{', '.join(vis)} (through {', '.join(syms)})" if vis else
                                   "invisible to every checked property"
                                   + (f" (changes {', '.join(syms)})" if syms else "")))
    out.append("")
    out.append("time: " + ", ".join(f"{k} {v:.1f}s" for k, v in p.seconds.items()))
    return "\n".join(out) + "\n"


def to_json(p: Profile) -> dict:
    pre, g = p.prefix, p.growth
    return {
        "model": str(p.model.path),
        "spec": p.spec.describe(),
        "distinct_states": len(pre.states),
        "states_generated": pre.generated,
        "levels": [{"depth": lv.depth, "new": lv.new, "generated": lv.generated, "new_by_action": dict(lv.new_by),
                    "generated_by_action": dict(lv.generated_by)} for lv in pre.levels],
        "complete_depth": pre.complete,
        "stopped": pre.stopped,
        "fields": [{"field": n, "values": g.distinct[c], "factor": round(g.factor[c], 4),
                    "role": p.reads[c].role, "probes": p.reads[c].probes, "read_by_properties": p.reads[c].observe,
                    "read_by_guards": p.reads[c].guard, "read_by_updates": p.reads[c].update,
                    "errors": p.reads[c].errors, "observed_as": sorted(p.reads[c].symbols)}
                   for c, n in enumerate(p.layout.names)],
        "top_level_fields": {n: {"factor": round(g.group_factor[n], 4), "role": p.group_reads[n].role}
                             for n in p.layout.groups},
        "ghosts": {n: round(f, 4) for n, f in p.ghosts.items()},
        "symmetry": [{"sort": sy.sort, "elements": list(sy.elements), "classes": [list(c) for c in sy.classes],
                      "states": sy.states, "closed": sy.closed, "factor": sy.factor, "class_factor": sy.class_factor,
                      "error": sy.error} for sy in p.symmetry],
        "pairs": [{"actions": [a, b], "co_enabled": pr.co_enabled, "independent": pr.independent,
                   "shared": pr.shared, "shared_independent": pr.shared_independent,
                   "footprints_dependent": pr.declared_dependent, "footprints_dependent_but_commute":
                   pr.declared_but_commuted, "reasons": dict(pr.reasons)}
                  for (a, b), pr in sorted(p.commutation.pairs.items())],
        "visibility": {a: {"symbols": sorted(c), "properties": p.commutation.visible_to.get(a, [])}
                       for a, c in p.commutation.changes_symbols.items()},
        "seconds": {k: round(v, 2) for k, v in p.seconds.items()},
    }
