"""The operators a symbolic value has no symbolic meaning for, and the
comparisons it has: each made from one method of the value's class.

`concrete_ops` gives a class the first kind: the value (and any symbolic
operand) becomes a Python value, a branch per case, and Python's own
operator applies. `ordered` gives it `<`, `<=`, `>`, `>=` from its
`_compare(other, op)`.
"""

from __future__ import annotations

import operator


def _swap(fn):
    return lambda a, b: fn(b, a)


_OPS = {}
for _n in ("add", "sub", "mul", "floordiv", "mod", "truediv", "pow", "and", "or", "xor", "lshift", "rshift"):
    _f = getattr(operator, _n if _n not in ("and", "or") else _n + "_")
    _OPS[f"__{_n}__"] = _f
    _OPS[f"__r{_n}__"] = _swap(_f)
for _n in ("lt", "le", "gt", "ge", "neg", "pos", "abs", "invert"):
    _OPS[f"__{_n}__"] = getattr(operator, _n)


def concrete_ops(cls, names) -> None:
    """Give `cls` the operators it has no symbolic meaning for: each makes
    the value (and a symbolic operand) concrete, a branch per case, and
    applies Python's operator."""
    for name in names:
        if name in cls.__dict__:
            continue
        fn = _OPS.get(name)

        def op(self, *args, _name=name, _fn=fn):
            args = [a._py() if hasattr(a, "_py") else a for a in args]
            if _fn is not None:
                return _fn(self._py(), *args)
            return getattr(self._py(), _name)(*args)

        op.__name__ = name
        setattr(cls, name, op)


ARITH = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__floordiv__", "__rfloordiv__",
         "__mod__", "__rmod__", "__truediv__", "__rtruediv__", "__pow__", "__neg__", "__pos__", "__abs__",
         "__and__", "__rand__", "__or__", "__ror__", "__xor__", "__rxor__", "__invert__", "__lshift__",
         "__rshift__")
SEQUENCE = ("__getitem__", "__len__", "__iter__", "__contains__", "__call__", "__float__")
ORDER = ("__lt__", "__le__", "__gt__", "__ge__")



def ordered(cls):
    """`cls` with the four orderings, each `self._compare(other, op)`."""
    for name in ORDER:
        fn = getattr(operator, name.strip("_"))
        setattr(cls, name, lambda self, o, _fn=fn: self._compare(o, _fn))
    return cls
