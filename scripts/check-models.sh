#!/usr/bin/env bash
# The main job: check every shipped model against its [expect] table, write
# JUnit and SARIF reports, and validate both (SARIF against the vendored 2.1.0
# schema). Arguments go to the gate: by default only the quick models run;
# `--runtime all` (`make check-all`) runs the heavy ones too, `--runtime
# heavy` only those. Reports and traces go to $OUT (default out/).
# Exit code: the gate's (0 all as expected, 1 an expectation failed, 2 a
# model could not be checked, 3 a limit was hit), or 1 if a report is invalid.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-out}
mkdir -p "$out"
.venv/bin/txncheck check --all models/ --out "$out/traces" --junit "$out/txncheck.xml" --sarif "$out/txncheck.sarif" "$@"
gate=$?
.venv/bin/python -m txncheck.checker.reports.validate --junit "$out/txncheck.xml" --sarif "$out/txncheck.sarif" || exit 1
exit "$gate"
