#!/usr/bin/env bash
# Installs everything txncheck needs on a fresh Debian machine: the system
# packages it lacks (Java 17 for Spark, Chromium for the HTML rendering test,
# ZooKeeper 3.8 for the replay backend) and a local virtual environment.
set -euo pipefail
cd "$(dirname "$0")/.."

# The interpreter: $PYTHON if set, else Debian's python3.11. Debian links
# its interpreter statically (no libpython3.11.so); it checked the larger
# PIP-473 model with a fifth less CPU than pyenv's shared-library build
# (ADR 0007). Elsewhere (no /usr/bin/python3.11, no apt): python3.
SYSTEM_PY=/usr/bin/python3.11

# apt-get, waiting for another apt-get or dpkg (or unattended-upgrades) that
# holds its lock: DPkg::Lock::Timeout waits for dpkg's lock, and a run that
# still fails on a lock (apt-get update's lists lock) is tried again, for up
# to ten minutes in all. Any other failure is not retried.
apt_get() {
  local err waited=0
  while :; do
    if err=$($SUDO env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 "$@" 2>&1 >/dev/null)
    then return 0; fi
    if ! grep -qi "lock" <<<"$err" || [ "$waited" -ge 600 ]; then echo "$err" >&2; return 1; fi
    echo "install.sh: apt-get $1 waits for another package manager's lock" >&2
    sleep 10; waited=$((waited + 10))
  done
}
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
  apt_get update -q
  apt_get install -y -q --no-install-recommends "${missing[@]}"
fi

if [ -z "${PYTHON:-}" ] && ! "$SYSTEM_PY" -c 'import ensurepip' >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  echo "install.sh: installing python3.11 and python3.11-venv with apt-get" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  { apt_get update -q && apt_get install -y -q --no-install-recommends \
      python3.11 python3.11-venv; } 2>/dev/null || echo "install.sh: could not; using python3" >&2
fi
if [ -n "${PYTHON:-}" ]; then PY=$PYTHON
elif "$SYSTEM_PY" -c 'import ensurepip' >/dev/null 2>&1; then PY=$SYSTEM_PY
else PY=python3
fi
# A .venv made by another interpreter is made again: it holds nothing but
# what this script installs.
want=$("$PY" -c 'import os, sys; print(os.path.realpath(sys.executable))')
if [ -x .venv/bin/python ]; then
  have=$(.venv/bin/python -c 'import os, sys; print(os.path.realpath(sys._base_executable))' 2>/dev/null || true)
  if [ "$have" != "$want" ]; then
    echo "install.sh: making .venv again with $want (it had ${have:-a broken interpreter})" >&2
    rm -rf .venv
  fi
fi
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# setuptools announces every editable install of a package-dir mapping as a
# warning ("Editable installation ... folders in your working directory with
# the same name as your package"; its InformationOnly, not a fault): there is
# no folder named txncheck here, so it is silenced, and nothing else is.
PYTHONWARNINGS="ignore:Editable installation:UserWarning" .venv/bin/python -m pip install -q -e '.[dev]'
echo "install.sh: ready ($(.venv/bin/txncheck --version), $(.venv/bin/python -V) at $want, $(java -version 2>&1 | head -n 1))" >&2
