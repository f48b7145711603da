"""Copies of the Python containers the deriver hands out more than once."""

from __future__ import annotations

from .values import Sym


def fresh(v):
    """`v` with each dict, list and set in it copied: a summary's value is
    kept for every later call, and the caller may change what it is given
    (`changed = put_op(...); changed["part"] = ...`); the next run would
    then get the changed object. (PIP-473's `put_write_op` wrote a
    participant that one path set, never taken, into every path's state;
    comp.py's memo keeps a comprehension's elements the same way.)"""
    if isinstance(v, dict):
        return {k: fresh(x) for k, x in v.items()}
    if isinstance(v, list):
        return [fresh(x) for x in v]
    if isinstance(v, set):
        return set(v)
    if isinstance(v, tuple) and not isinstance(v, Sym):
        items = [fresh(x) for x in v]
        if all(a is b for a, b in zip(items, v)):
            return v
        return type(v)(*items) if hasattr(v, "_fields") else tuple(items)
    return v
