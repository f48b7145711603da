#!/usr/bin/env bash
# Installs everything txncheck needs on a fresh Debian machine: the system
# packages it lacks (Java 17 for Spark, Chromium for the HTML rendering test,
# ZooKeeper 3.8 for the replay backend) and a local virtual environment.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jre-headless)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
[ -x /usr/share/zookeeper/bin/zkServer.sh ] || missing+=(zookeeper)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ] && ! command -v sudo >/dev/null 2>&1; then
    echo "install.sh: need root to install ${missing[*]}" >&2
    exit 2
  fi
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  echo "install.sh: installing ${missing[*]} with apt-get" >&2
  $SUDO apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev]'
echo "install.sh: ready ($(.venv/bin/txncheck --version), $(java -version 2>&1 | head -n 1))" >&2
