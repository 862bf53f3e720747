#!/usr/bin/env bash
# Creates the system group and user beacond runs as (idempotent; needs root).
# Used by dist/install.sh, and by scripts/test.sh for the D-Bus policy test,
# which also passes the name of a second account to put in group beacond.
set -euo pipefail
getent group beacond >/dev/null || groupadd --system beacond
getent passwd beacond >/dev/null || useradd --system --gid beacond --home-dir /var/lib/beacond --no-create-home \
    --shell /usr/sbin/nologin --comment "beacond iBeacon service" beacond
for member in "$@"; do
    getent passwd "$member" >/dev/null || useradd --system --user-group --no-create-home --shell /usr/sbin/nologin \
        --comment "member of group beacond" "$member"
    usermod --append --groups beacond "$member"
done
