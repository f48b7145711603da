#!/usr/bin/env bash
# The main job: check every shipped model and compare with its [expect] table.
set -uo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/txncheck check --all models/ --out out/traces
