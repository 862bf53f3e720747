#!/usr/bin/env bash
# Installs beacond as a system service on Debian / Raspberry Pi OS from this
# clone: builds the Debian package (scripts/package.sh) and installs it with
# apt, which brings its dependencies, creates user and group beacond, enables
# and starts the unit and reloads D-Bus (docs/deployment.md). Run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $(id -u) -eq 0 ]] || { echo "run as root: sudo dist/install.sh" >&2; exit 1; }
deb=$(scripts/package.sh)
apt-get install -y "$deb"
beacond check-config /etc/beacond/beacons.yaml
echo "installed. Add yourself to group beacond (sudo usermod -aG beacond \$USER, then log in again) and try: beaconctl nearest"
