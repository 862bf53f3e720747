#!/usr/bin/env bash
# Runs every test of beacond: unit, property and integration tests (btmon,
# dbus-daemon, python-dbusmock); then, for the whole suite, checks that a
# fresh clone with nothing beside it builds and passes (scripts/check-clone.sh),
# runs the live sources against a real Linux Bluetooth stack under qemu
# (Tests/RealStack; skipped, saying why, where qemu cannot run, or with
# BEACOND_REALSTACK=skip), and installs the Debian package into a fresh
# Debian root and tries it there (Tests/Package; skipped, saying why, without
# root or Debian's mirror, or with BEACOND_PACKAGE=skip).
# Arguments go to `swift test` (e.g. --filter SUITE) and skip the clone check.
# Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# The D-Bus policy test runs beacond as user beacond and a client as a member
# of group beacond (beacond-tester); creating them needs root.
if [[ $(id -u) -eq 0 ]]; then
    dist/accounts.sh beacond-tester
else
    echo "not root: the D-Bus policy test needs accounts beacond and beacond-tester (sudo dist/accounts.sh beacond-tester)" >&2
fi
swift test "$@"
if (($# == 0)); then
    scripts/check-clone.sh
    if [[ ${BEACOND_REALSTACK:-run} != skip ]]; then
        Tests/RealStack/run.sh
    else
        echo "realstack: SKIPPED: BEACOND_REALSTACK=skip" >&2
    fi
    Tests/Package/run.sh
fi
