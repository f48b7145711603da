"""The spec API: what every protocol in `spec/` provides, and nothing about engines.

A spec is a class. Constructing it with a variant and constants (the bounds of
a model file) validates them and builds the schema and the invariants:

    spec = TwoPhase(variant="default", rm=3)
    for s in spec.init_states(): ...
    for action, t in spec.next(s): ...      # action = (name, ((param, value), ...))
    spec.observe(s)                          # {symbol: value} for the invariants
    spec.invariants["TPTypeOK"]              # a Z3 formula over spec.schema

States are immutable and canonical: nested tuples (NamedTuples welcome),
frozensets, ints, strs, bools and None. Equal states must be equal Python
values; the engines fingerprint them with a stable hash of their canonical
encoding (`txncheck.checker.encoding`), never with `hash()`.

An action is `(name, params)` where `params` is a tuple of `(name, value)`
pairs. Actions with no parameters use `()`. Build actions once in `__init__`
where you can: the engines intern them, and `next` is the hot path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterable, Iterator, Mapping

import z3

from .schema import Schema

Action = tuple[str, tuple[tuple[str, Any], ...]]
State = Any


class SpecError(ValueError):
    """Bad variant or constants for a spec; the message is one clear line."""


@dataclass(frozen=True)
class Bound:
    """A constant a model file may set.

    `kind` is int, bool or str. Integers are checked against `lo`/`hi`; any
    kind against `choices` when given. A tuple default makes a structured
    constant: a model file gives nested arrays of strings, integers and
    booleans (a quorum system: [["a1", "a2"], ["a2", "a3"]]), which arrive as
    nested tuples, immutable like states.
    """

    default: Any
    doc: str = ""
    lo: int | None = None
    hi: int | None = None
    choices: tuple = field(default=())
    # A reduction: a value other than the default only shrinks the state
    # space and changes no verdict and no shortest counterexample (each is
    # audited: tests/test_reduction_audit.py). Traces record the default, so
    # that they are runs of the unreduced spec (`Spec.complete_trace`).
    reduction: bool = False

    @property
    def kind(self) -> type:
        return type(self.default)

    def check(self, name: str, value: Any) -> Any:
        kind = self.kind
        if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            raise SpecError(f"bound {name} must be an integer, got {value!r}")
        if kind is bool and not isinstance(value, bool):
            raise SpecError(f"bound {name} must be true or false, got {value!r}")
        if kind is str and not isinstance(value, str):
            raise SpecError(f"bound {name} must be a string, got {value!r}")
        if kind is tuple:
            return _frozen(name, value)
        if kind is int:
            if self.lo is not None and value < self.lo:
                raise SpecError(f"bound {name} = {value} is out of range (minimum {self.lo})")
            if self.hi is not None and value > self.hi:
                raise SpecError(f"bound {name} = {value} is out of range (maximum {self.hi})")
        if self.choices and value not in self.choices:
            raise SpecError(f"bound {name} = {value!r} is not one of {', '.join(map(str, self.choices))}")
        return value


def _frozen(name: str, value: Any) -> tuple:
    """A structured constant from a model file: nested lists -> nested tuples."""
    if not isinstance(value, (list, tuple)):
        raise SpecError(f"bound {name} must be an array, got {value!r}")
    out: list[Any] = []
    for x in value:
        if isinstance(x, (list, tuple)):
            out.append(_frozen(name, x))
        elif isinstance(x, (str, int, bool)):
            out.append(x)
        else:
            raise SpecError(f"bound {name} may hold arrays, strings, integers and booleans, not {x!r}")
    return tuple(out)


class Spec:
    """Base class of every executable spec. Subclasses set the class
    attributes, implement `setup`, `init_states`, `next` and `observe`."""

    name: ClassVar[str] = "?"
    variants: ClassVar[tuple[str, ...]] = ("default",)
    bounds: ClassVar[Mapping[str, Bound]] = {}
    # Sorts whose elements are interchangeable (used by --symmetry).
    symmetric_sorts: ClassVar[tuple[str, ...]] = ()
    # Optional, for speed: the fields of the (NamedTuple) states that `observe`
    # reads, when it reads fewer than all. States equal on them must have equal
    # observations; the checker then evaluates the properties once per
    # combination of them (checker/verdicts.py). None: every field.
    observed_fields: ClassVar[tuple[str, ...] | None] = None
    # Optional, for `txncheck show --format mermaid`: per action, the messages
    # it stands for in a sequence diagram, each (sender, receiver, text,
    # dashed), the three strings formatted with the step's parameters
    # (`str.format`, "{seg}"). None: a generic picture.
    diagram: ClassVar[Mapping[str, tuple] | None] = None
    # Participants drawn first, in this order (even when no message uses
    # them); the others follow sorted by the first prefix of `diagram_order`
    # they start with, then by name.
    diagram_participants: ClassVar[tuple[str, ...]] = ()
    diagram_order: ClassVar[tuple[str, ...]] = ()

    def __init__(self, variant: str = "default", **constants: Any) -> None:
        if variant not in self.variants:
            raise SpecError(
                f"unknown variant {variant!r} for spec {self.name} (known: {', '.join(self.variants)})"
            )
        unknown = sorted(set(constants) - set(self.bounds))
        if unknown:
            raise SpecError(
                f"unknown bound {unknown[0]!r} for spec {self.name} (known: {', '.join(sorted(self.bounds)) or 'none'})"
            )
        self.variant = variant
        self.constants: dict[str, Any] = {
            k: b.check(k, constants.get(k, b.default)) for k, b in self.bounds.items()
        }
        self.schema = Schema()
        # Safety properties: must hold in every reachable state.
        self.invariants: dict[str, z3.BoolRef] = {}
        # Reachability witnesses ("sometimes"): some reachable state satisfies each.
        self.witnesses: dict[str, z3.BoolRef] = {}
        # Named state predicates for temporal properties in model files.
        self.predicates: dict[str, z3.BoolRef] = {}
        # Lemmas for `txncheck prove` (a model file's [prove] lemmas names those its proof
        # assumes): each a Z3 formula over `schema`, as an invariant is, or a predicate of
        # the state, `lambda s: ...`, in the spec's own terms (it runs as `next` does).
        self.lemmas: dict[str, Any] = {}
        self.setup()

    # -- to implement -------------------------------------------------------
    def setup(self) -> None:
        """Declare the schema and build the invariants from self.constants."""

    def init_states(self) -> Iterable[State]:
        raise NotImplementedError

    def next(self, s: State) -> Iterator[tuple[Action, State]]:
        raise NotImplementedError

    def observe(self, s: State) -> Mapping[str, object]:
        raise NotImplementedError

    # -- optional -----------------------------------------------------------
    def observation_parts(self):
        """Optional, for speed: `observe` as parts, [(fields, part)], each
        `part(state)` a dict of some symbols computed from those fields of the
        (NamedTuple) state only, every symbol from one part, their union
        `observe`'s. The fingerprint search then remembers each part's values
        and each property's verdict per combination of the fields it reads
        (checker/verdicts.py). None: observe is one piece."""
        return None

    def complete_trace(self, path: list, prop: str) -> list:
        """A counterexample found with a reduction bound on, made a run of the
        spec without it (the steps a reduction leaves out, appended); as given
        by default."""
        return path

    def state_vars(self, s: State) -> Mapping[str, object]:
        """The state as named variables, for traces. NamedTuples need nothing."""
        if hasattr(s, "_asdict"):
            return s._asdict()
        return {"state": s}

    def permute(self, s: State, mapping: Mapping[str, Mapping[str, str]]) -> State:
        """`s` with the elements of symmetric sorts renamed: mapping is
        {sort: {element: new element}}, a bijection per sort listed. Needed by
        --symmetry; it must be an automorphism (successors and properties
        commute with it). An enum element of another sort whose name carries
        an element as a token (Msg "Prepared_r1") moves with that element."""
        raise NotImplementedError(f"spec {self.name} does not implement permute (needed by --symmetry)")

    def symmetry_classes(self, sort: str) -> tuple[tuple[str, ...], ...]:
        """The interchangeable elements of a symmetric sort, as classes that
        partition it; permutations act within a class only. The default is
        the whole sort. A spec whose elements carry different workloads
        (PIP-473's txns follow the model's plan) returns one class per
        workload."""
        return (tuple(self.schema.elements(sort)),)

    def symmetry_signatures(self, s: State, sort: str) -> Mapping[str, Any] | None:
        """Optional, for speed: per element of the sort's classes of more than
        one element, a value read off the state that renaming does not
        change (the signature of `e` in `s` is that of its image in the
        renamed state). None: --symmetry reads signatures off `observe`."""
        return None

    def footprints(self) -> Mapping[Action, tuple[frozenset, frozenset]] | None:
        """Every action `next` can yield, with the state locations it may read
        and write, for --por: {action: (reads, writes)}. A location is a tuple
        (symbol, *element names), named after the schema symbol whose
        observation it changes; (symbol,) is all of it. Reads include the
        guard. None (the default): unknown, so no reduction."""
        return None

    def describe(self) -> str:
        """name[variant](bounds); a reduction bound is named only when it is on."""
        consts = ", ".join(f"{k}={v}" for k, v in self.constants.items()
                           if not (self.bounds[k].reduction and v == self.bounds[k].default))
        return f"{self.name}[{self.variant}]({consts})"


class Record(dict):
    """A value with named fields, for `state_vars`: a trace writes it as an ITF
    record (a JSON object) and `show` prints its fields by name. Immutable by
    convention and hashable, so that it can sit in a set."""

    def __hash__(self):  # in-memory use only, never a fingerprint
        return hash(frozenset(self.items()))

    def __repr__(self):
        return f"Record({', '.join(f'{k}={v!r}' for k, v in self.items())})"


def replace_at(t: tuple, i: int, v) -> tuple:
    """The tuple `t` with element `i` replaced by `v` (the EXCEPT of TLA+)."""
    items = list(t)
    items[i] = v
    return tuple(items)


def quick_replace(cls):
    """Class decorator: a NamedTuple whose `_replace` costs 60-75% of the
    standard one's, which pops every field name from the keywords. `next`
    builds successors with it: PIP-473's spent a quarter of its time there."""
    index = {name: i for i, name in enumerate(cls._fields)}
    new = tuple.__new__

    def _replace(self, **changes):
        items = list(self)
        for name, value in changes.items():
            i = index.get(name)
            if i is None:
                raise ValueError(f"{cls.__name__} has no field {name!r}")
            items[i] = value
        return new(cls, items)

    cls._replace = _replace
    return cls
