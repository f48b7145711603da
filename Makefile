# The two commands of the README. Both install first, so each works on a fresh machine.
#   make check   installs, then checks every quick model against its expectation
#   make test    installs, then runs the fast tier of the tests (all but `slow`), on every core
# CI (.ci/run) runs everything: every model (check-all) and the whole suite (test-all).
# tests/README.md says what each tier holds.

.PHONY: install check test check-all test-all dist

install:
	bash scripts/install.sh

check: install
	bash scripts/check-models.sh

test: install
	.venv/bin/python -m pytest -q -n auto -m "not slow"

check-all: install
	bash scripts/check-models.sh --runtime all

test-all: install
	.venv/bin/python -m pytest -q -n auto

# A wheel and an sdist in dist/, for a CI of your own that installs txncheck from a file (docs/tutorial.md).
dist: install
	rm -rf dist
	.venv/bin/python -m build --outdir dist .
