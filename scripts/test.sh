#!/usr/bin/env bash
# Runs every test of beacond: unit, property and integration tests (btmon,
# dbus-daemon, python-dbusmock). Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift test "$@"
