# The two commands of the README. Both install first, so each works on a fresh machine.
#   make check   installs, then checks every quick model against its expectation
#   make test    installs, then runs the fast tier of the tests (all but `slow`), on every core
#   make typecheck  mypy over checker/ and the spec API (scripts/typecheck.py; CI runs it as a slow test)
# CI (.ci/run) runs everything: every model (check-all) and the whole suite (test-all).
# tests/README.md says what each tier holds.

.PHONY: install check test check-all test-all typecheck dist

install:
	bash scripts/install.sh

check: install
	bash scripts/check-models.sh

test: install
	.venv/bin/python -m pytest -q -n auto -m "not slow"

typecheck: install
	.venv/bin/python scripts/typecheck.py

check-all: install
	bash scripts/check-models.sh --runtime all

test-all: install
	.venv/bin/python -m pytest -q -n auto

# The wheel, dist/txncheck-VERSION-py3-none-any.whl, for a CI of your own that installs txncheck from a file
# (README.md, "In your own CI"). It is pure Python: no install first, no system package, no apt-get.
DIST ?= dist
PY ?= $(shell [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3)
dist:
	rm -rf $(DIST)
	$(PY) -m pip wheel --no-deps --wheel-dir $(DIST) .
