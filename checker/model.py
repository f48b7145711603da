"""Model files: TOML that binds a spec to a variant, bounds and properties.

    spec = "twophase"              # a registered name, "path/to/file.py:Class"
                                   # (relative to this file) or "package.module:Class";
                                   # see txncheck.spec.registry. It runs that code.
    variant = "default"            # optional
    description = "..."            # optional
    properties = ["TPTypeOK"]      # invariants to check (default: all of the spec's)
    witnesses = ["SomeCommitted"]  # optional: each must hold in some reachable state
    vacuous = ["Agreement"]        # optional: properties allowed to be vacuous here
                                   # (e.g. over pairs, with one element in a sort)
    deadlock = true                # report states with no successor
    [constants]                    # the spec's bounds
    rm = 3
    [label]                        # optional: what the verdict holds for
    holds_for = "code"             # code (the current code) | release (a past release) | text (the document's text)
    source = "apache/kafka@d276027e MetadataBatchLoader"   # the commit read, the release, or the section
    [expect]                       # optional: what the CI gate expects
    verdict = "violation"
    property = "NotSolved"
    length = 7
    distinct = 16                  # optional: the run's figures, judged by the gate
    generated = 97                 # (scripts/record_figures.py writes them)
    depth = 7
    runtime = "heavy"              # optional: "quick" (the default) or "heavy": the
                                   # gate runs heavy models only with --heavy (CI)
    max_depth = 8                  # top level, optional: bfs checks every state to
                                   # this depth, then stops (verdict incomplete)
    fairness = ["WF(*)"]           # optional: WF/SF conditions for [temporal]
    [temporal]                     # optional: liveness, checked by checker.liveness
    Decided = "eventually AllDecided"
    [prove]                        # optional: for `txncheck prove` (checker/symbolic/); the gate proves it
    lemmas = ["OneDecisionSent"]   # the relation's lemmas the inductive invariant adds
    lemmas_from = "fixed-standard" # optional: a sibling model file whose lemmas (and properties) come first
    without = ["InitialEntry"]     # optional: lemmas left out
    dead = ["tick"]                # optional: actions that cannot fire here by design
    agreement = "0123456789abcdef" # a hand-written relation's agreement (prove --agreement --record)
    [prove.formulas]               # optional: lemmas as text (txncheck prove --infer --write writes them)
    TmCommits = 'tmState = "committed" -> msgs[Commit]'
    [prove.infer]                  # optional: for --infer, the bounds sampled, the sorts quantified
    samples = [{rm = 2}]

The syntax of [temporal] and fairness is in checker/liveness/syntax.py.
Every problem is reported as a `ModelError` naming the file, in one line.
"""

from __future__ import annotations

import math
import re
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from ..spec.api import Spec, SpecError
from ..spec.registry import Resolved, resolve
from .errors import ModelError, did_you_mean  # ModelError: in errors.py, below every module that raises it
from .itf import read_untrusted_text
from .liveness.syntax import Fairness, TemporalProperty, TemporalSyntaxError, parse_fairness, parse_temporal
from .model_files import MAX_MODEL_BYTES, find_models  # noqa: F401 - find_models is model.py's too

TOP_KEYS = {
    "spec", "variant", "description", "properties", "witnesses", "deadlock", "constants",
    "expect", "label", "temporal", "fairness", "symmetry", "por", "fingerprints", "engine", "max_states", "max_seconds",
    "max_depth", "vacuous", "prove",
}
# Reductions a model file can switch on (as the check command's flags do).
REDUCTION_KEYS = ("symmetry", "por", "fingerprints")
EXPECT_KEYS = {"verdict", "property", "length", "distinct", "generated", "depth", "runtime", "prove_seconds"}
FIGURES = ("distinct", "generated", "depth")  # [expect]'s figures of the run, as TLC counts them
MEASURED = (*FIGURES, "runtime", "prove_seconds")  # the [expect] keys scripts/record_figures.py writes from a run
VERDICTS = ("ok", "violation", "incomplete")
RUNTIMES = ("quick", "heavy")  # [expect] runtime: the gate runs heavy models only when asked (--heavy)
# [label] holds_for: what a model's verdict is evidence about.
HOLDS_FOR = {"code": "the current code", "release": "a past release", "text": "the document's text"}


@dataclass
class Model:
    """A parsed model file. `reductions()` gives the reductions it switches on."""

    path: Path
    spec_name: str
    variant: str
    constants: dict[str, Any]
    properties: list[str] | None
    witnesses: list[str]
    deadlock: bool
    description: str = ""
    expect: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)
    temporal: dict[str, TemporalProperty] = field(default_factory=dict)
    fairness: list[Fairness] = field(default_factory=list)
    label: dict[str, str] = field(default_factory=dict)  # [label]: holds_for, source
    text: str = ""  # the file's text, for the line of a bad key

    def reductions(self, cli: dict | None = None) -> dict:
        """The engine options: the model file's reductions, then the command
        line's, which win (--exact turns the file's fingerprints off, and an
        option set to False, as --no-symmetry does, turns the file's off)."""
        cli = dict(cli or {})
        own = {k: True for k in REDUCTION_KEYS if self.raw.get(k)}
        if cli.get("exact"):
            own.pop("fingerprints", None)
        return {k: v for k, v in {**own, **cli}.items() if v is not False}

    @property
    def name(self) -> str:
        return self.path.stem

    def resolve_spec(self) -> Resolved:
        """The spec class the model file names, and where it came from."""
        try:
            return resolve(self.spec_name, self.path.parent)
        except SpecError as exc:
            raise ModelError(f"{self.path}: {exc}{_spec_class_hint(exc)}") from exc.__cause__

    def instantiate(self) -> Spec:
        from .spec_errors import SpecCodeError, guard, own_failure, spec_code_error

        found = self.resolve_spec()
        bounds = getattr(found.cls, "bounds", None)
        if isinstance(bounds, Mapping) and bounds:  # a misspelt bound: its line and the nearest name
            for k in sorted(set(self.constants) - set(bounds)):
                _unknown_key(self.path, self.text, k, "constants", bounds, "bound", f" for spec {self.spec_name}")
        try:
            spec = found.cls(self.variant, **self.constants)
        except SpecCodeError:
            raise
        except SpecError as exc:
            raise ModelError(f"{self.path}: {exc}") from None
        except BaseException as exc:  # the spec's own setup code failed (or called sys.exit)
            if not own_failure(exc):
                raise
            raise spec_code_error(found.cls, exc, "constructing the spec (setup)") from exc
        if not found.builtin:
            spec = guard(spec, found)
        for key, what, names, known in (("properties", "property", self.properties or [], spec.invariants),
                                        ("witnesses", "witness", self.witnesses, spec.witnesses)):
            for n in names:
                if n not in known:
                    _fail(self.path, f"unknown {what} {n!r} for spec {self.spec_name}" + did_you_mean(n, known)
                          + f" (known: {', '.join(known) or 'none'})", key_line(self.text, key))
        return spec

    def selected_properties(self, spec: Spec) -> dict:
        names = self.properties if self.properties is not None else list(spec.invariants)
        return {n: spec.invariants[n] for n in names}


def _fail(path: Path, msg: str, line: int | None = None) -> NoReturn:
    raise ModelError(f"{path}:{line}: {msg}" if line else f"{path}: {msg}")


def load_model(path: str | Path) -> Model:
    path = Path(path)
    try:  # untrusted: a regular file, capped, and a parser that can run out of stack or digits
        text = read_untrusted_text(path, MAX_MODEL_BYTES, "model")
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        _fail(path, f"malformed TOML: {exc}")
    except RecursionError:
        _fail(path, "malformed TOML: nests too deeply")
    except ValueError as exc:  # read_untrusted_text's one line, or an integer over the digit limit
        _fail(path, str(exc).splitlines()[0])
    unknown = sorted(set(raw) - TOP_KEYS)
    if unknown:
        _unknown_key(path, text, unknown[0], None, TOP_KEYS)
    spec = raw.get("spec")
    if not isinstance(spec, str) or not spec:
        _fail(path, "missing 'spec' (the name of the spec to check)")
    variant = raw.get("variant", "default")
    if not isinstance(variant, str):
        _fail(path, "'variant' must be a string")
    constants = raw.get("constants", {})
    if not isinstance(constants, dict):
        _fail(path, "[constants] must be a table")
    props = raw.get("properties")
    if props is not None and (not isinstance(props, list) or not all(isinstance(p, str) for p in props)):
        _fail(path, "'properties' must be a list of property names")
    vacuous = raw.get("vacuous", [])
    if not isinstance(vacuous, list) or not all(isinstance(v, str) for v in vacuous):
        _fail(path, "'vacuous' must be a list of property names that may be vacuous in this model")
    witnesses = raw.get("witnesses", [])
    if not isinstance(witnesses, list) or not all(isinstance(w, str) for w in witnesses):
        _fail(path, "'witnesses' must be a list of witness names")
    deadlock = raw.get("deadlock", False)
    if not isinstance(deadlock, bool):
        _fail(path, "'deadlock' must be true or false")
    for key in REDUCTION_KEYS:
        if not isinstance(raw.get(key, False), bool):
            _fail(path, f"'{key}' must be true or false")
    for key in ("max_states", "max_seconds", "max_depth"):
        v = raw.get(key)
        whole = key != "max_seconds"
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < math.inf
                              or whole and not isinstance(v, int)):
            _fail(path, f"'{key}' must be a positive {'integer' if whole else 'number'}")
    if not isinstance(raw.get("engine", "bfs"), str):
        _fail(path, "'engine' must be a string")
    expect = raw.get("expect", {})
    if not isinstance(expect, dict):
        _fail(path, "[expect] must be a table")
    bad = sorted(set(expect) - EXPECT_KEYS)
    if bad:
        _unknown_key(path, text, bad[0], "expect", EXPECT_KEYS)
    if "verdict" in expect and expect["verdict"] not in VERDICTS:
        _fail(path, f"[expect] verdict must be one of {', '.join(VERDICTS)}")
    for key in ("length", *FIGURES):
        if key in expect and (isinstance(expect[key], bool) or not isinstance(expect[key], int) or expect[key] < 0):
            _fail(path, f"[expect] {key} must be a whole number")
    if "runtime" in expect and expect["runtime"] not in RUNTIMES:
        _fail(path, f"[expect] runtime must be one of {', '.join(RUNTIMES)}")
    sec = expect.get("prove_seconds")
    if sec is not None and (isinstance(sec, bool) or not isinstance(sec, (int, float)) or not 0 <= sec < 1e6):
        _fail(path, "[expect] prove_seconds must be a number of seconds")
    if sec is not None and "prove" not in raw:
        _fail(path, "[expect] prove_seconds goes with a [prove] table")
    _prove(path, raw.get("prove", {}), text)
    label = _label(path, raw.get("label", {}), text)
    desc = raw.get("description", "")
    try:
        temporal = parse_temporal(raw.get("temporal", {}))
        fairness = parse_fairness(raw.get("fairness", []))
    except TemporalSyntaxError as exc:
        _fail(path, str(exc))
    return Model(path, spec, variant, dict(constants), props, list(witnesses), deadlock,
                 desc if isinstance(desc, str) else "", dict(expect), raw, temporal, fairness, label, text)


def _spec_class_hint(exc: SpecError) -> str:
    """For a spec file or module that defines no class of the name given, the
    nearest spec class it does define (it was imported, so nothing runs)."""
    m = re.search(r": (.+) defines no '(\w+)'$", str(exc))
    mod = m and next((x for x in list(sys.modules.values())
                      if getattr(x, "__file__", None) == m.group(1) or getattr(x, "__name__", None) == m.group(1)), None)
    if m is None or mod is None:
        return ""
    return did_you_mean(m.group(2), [n for n, v in vars(mod).items()
                                     if isinstance(v, type) and issubclass(v, Spec) and v is not Spec])


def _unknown_key(path: Path, text: str, key: str, table: str | None, known, what: str = "key",
                 where: str | None = None) -> None:
    """A misspelt key: its line, the nearest known key, then every known key."""
    hint = did_you_mean(key, known)
    if where is None:
        where = f" in [{table}]" if table else ""
    head = f"unknown {what} {key!r}{where}"
    _fail(path, f"{head}{hint} (known: {', '.join(sorted(known))})", key_line(text, key, table))


def key_line(text: str, key: str, table: str | None = None) -> int | None:
    """The line (from 1) where `key` is set in the top level (table None) or in
    [table] of a TOML text, or where [key] opens; None when not found so."""
    current = None
    for n, line in enumerate(text.splitlines(), 1):
        head = re.match(r"\s*\[\s*([^\]\s]+)\s*\]", line)
        if head:
            current = head.group(1)
            if table is None and current.strip("\"'") == key:
                return n
            continue
        m = re.match(r"\s*([\"']?)([^=\s\"']+)\1\s*=", line)
        if m and current == table and m.group(2) == key:
            return n
    return None


PROVE_KEYS = ("lemmas", "lemmas_from", "without", "dead", "derived_dead", "agreement", "formulas", "infer")


def _prove(path: Path, table, text: str) -> None:
    """[prove]: `lemmas`, a list of names (the relation says which exist);
    `lemmas_from`, a sibling model file's stem whose lemmas come first;
    `without`, lemmas left out of those;
    `dead`, actions that cannot fire at these bounds by design (and
    `derived_dead`, those only the relation derived from the spec's code
    has, while a hand-written one is the default); `agreement`,
    the digest `txncheck prove --agreement --record` wrote; [prove.formulas],
    lemmas as text (checker/symbolic/lemma_text.py, parsed when proving);
    [prove.infer], what `prove --infer` samples and quantifies."""
    if not isinstance(table, dict):
        _fail(path, "[prove] must be a table")
    bad = sorted(set(table) - set(PROVE_KEYS))
    if bad:
        _unknown_key(path, text, bad[0], "prove", PROVE_KEYS)
    for key in ("lemmas", "without", "dead", "derived_dead"):
        names = table.get(key, [])
        if not isinstance(names, list) or not all(isinstance(x, str) and x for x in names):
            _fail(path, f"[prove] {key} must be a list of {'action' if 'dead' in key else 'lemma'} names")
    source = table.get("lemmas_from")
    if source is not None and not (isinstance(source, str) and re.fullmatch(r"[A-Za-z0-9_.-]+", source)
                                   and source not in (".", "..")):
        _fail(path, "[prove] lemmas_from must be the stem of a model file in the same folder (e.g. "
                    "\"fixed-standard\")")
    digest = table.get("agreement")
    if digest is not None and not (isinstance(digest, str) and re.fullmatch(r"[0-9a-f]{16}", digest)):
        _fail(path, "[prove] agreement must be the 16-hex-digit digest `txncheck prove --agreement --record` "
                    "writes")
    formulas = table.get("formulas", {})
    if not isinstance(formulas, dict) or not all(isinstance(v, str) for v in formulas.values()):
        _fail(path, "[prove.formulas] must be a table of lemma names to lemma text")
    infer = table.get("infer", {})
    if not isinstance(infer, dict) or set(infer) - {"samples", "sorts", "exists", "four"}:
        _fail(path, "[prove.infer] must be a table with `samples` (tables of constants), `sorts` (sort names), "
                    "`exists` (true or false) and `four` (true, false or \"all\")")
    if not isinstance(infer.get("exists", True), bool):
        _fail(path, "[prove.infer] exists must be true or false")
    if not (isinstance(infer.get("four", True), bool) or infer["four"] == "all"):
        _fail(path, "[prove.infer] four must be true (clauses of four literals joined when a CTI asks), false "
                    "(none) or \"all\" (all at once)")


def _label(path: Path, label, text: str) -> dict[str, str]:
    """[label]: holds_for (one of HOLDS_FOR) and source (non-empty text), both required;
    upstream (optional, non-empty text): where the finding is already known upstream."""
    if not isinstance(label, dict):
        _fail(path, "[label] must be a table")
    if not label:
        return {}
    bad = sorted(set(label) - {"holds_for", "source", "upstream"})
    if bad:
        _unknown_key(path, text, bad[0], "label", ("holds_for", "source", "upstream"))
    if label.get("holds_for") not in HOLDS_FOR:
        _fail(path, f"[label] holds_for must be one of {', '.join(HOLDS_FOR)}")
    if not isinstance(label.get("source"), str) or not label["source"].strip():
        _fail(path, "[label] source must name the commit read, the release or the document's section")
    out = {"holds_for": label["holds_for"], "source": label["source"]}
    if "upstream" in label:
        if not isinstance(label["upstream"], str) or not label["upstream"].strip():
            _fail(path, "[label] upstream must name where the finding is known upstream (non-empty text)")
        out["upstream"] = label["upstream"]
    return out


def shipped_models_dir() -> Path | None:
    """The repository's models/ folder (the package folders sit beside it)."""
    here = Path(__file__).resolve().parent.parent / "models"
    return here if here.is_dir() else None


