#!/usr/bin/env bash
# Regenerate docs/findings/ from the models, their traces and the notes beside
# them (models/<system>/<model>.finding.md): one Markdown report per finding
# and docs/findings/index.md. tests/test_findings.py fails until the committed
# pages equal what this writes.
#
#   scripts/findings.sh                 the Markdown pages (what is committed)
#   scripts/findings.sh --html          also the self-contained HTML pages (3.5 MB each; not committed)
#   scripts/findings.sh --check-fix     also check each fix model whose recorded figures are missing or
#                                       stale, and record them (minutes when models/pip473/fixed.toml changed)
#   scripts/findings.sh --zookeeper     also replay every trace over a private ZooKeeper and record it
set -euo pipefail
cd "$(dirname "$0")/.."
format=md
args=()
for a in "$@"; do
  case "$a" in
    --html) format=md,html ;;
    *) args+=("$a") ;;
  esac
done
exec .venv/bin/txncheck report --all models/ -o docs/findings --format "$format" "${args[@]}"
