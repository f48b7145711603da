# The two commands of the README. Both install first, so each works on a fresh machine.
#   make check   installs, then checks every shipped model against its expectation
#   make test    installs, then runs the whole test suite

.PHONY: install check test

install:
	bash scripts/install.sh

check: install
	bash scripts/check-models.sh

test: install
	.venv/bin/python -m pytest -q
