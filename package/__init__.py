"""txncheck: a model checker and executable spec for metadata-store transaction protocols.

The public surface is the names below (`__all__`): what a spec is written
with (txncheck.spec.api, txncheck.spec.schema) and what a program or a test
checks and proves a model with. Everything else is internal and may change.
The names load on first use, so `import txncheck` (which pytest's plugin
entry point does in every session) stays cheap.
"""

__version__ = "0.1.0"

_PUBLIC = {
    # writing a spec
    "Spec": "txncheck.spec.api", "Bound": "txncheck.spec.api", "SpecError": "txncheck.spec.api",
    "Record": "txncheck.spec.api", "Action": "txncheck.spec.api",
    "Schema": "txncheck.spec.schema", "Bool": "txncheck.spec.schema", "Int": "txncheck.spec.schema",
    "Str": "txncheck.spec.schema", "Enum": "txncheck.spec.schema",
    # checking and proving a model file
    "load_model": "txncheck.checker.model", "ModelError": "txncheck.checker.model",
    "check_model": "txncheck.checker.api", "Report": "txncheck.checker.api",
    "Options": "txncheck.checker.options",
    "prove_model": "txncheck.checker.symbolic.run",
}

__all__ = ["__version__", *_PUBLIC]


def __getattr__(name: str):
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'txncheck' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
