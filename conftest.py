"""pytest collects README.md and docs/*.md (`testpaths` in pyproject.toml) and
runs their examples through Sybil: tests/docs_examples.py says how."""

from tests.docs_examples import collect_file as pytest_collect_file  # noqa: F401
