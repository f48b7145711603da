"""txncheck: a model checker and executable spec for metadata-store transaction protocols."""

__version__ = "0.1.0"
