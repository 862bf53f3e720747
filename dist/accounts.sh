#!/usr/bin/env bash
# Creates the system group and user beacond runs as (idempotent; needs root),
# from the package's own sysusers.d file, so the account is declared once.
# Used by scripts/test.sh for the D-Bus policy test, which also passes the
# name of a second account to put in group beacond.
set -euo pipefail
# systemd-sysusers reads a relative name from its own directories: pass the full path.
systemd-sysusers "$(realpath "$(dirname "$0")/sysusers.d/beacond.conf")"
for member in "$@"; do
    getent passwd "$member" >/dev/null || useradd --system --user-group --no-create-home --shell /usr/sbin/nologin \
        --comment "member of group beacond" "$member"
    usermod --append --groups beacond "$member"
done
