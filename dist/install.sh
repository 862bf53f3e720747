#!/usr/bin/env bash
# Installs beacond as a system service on Debian / Raspberry Pi OS from this
# clone: builds the Debian package (scripts/package.sh) and installs it with
# apt, which brings its dependencies, creates user and group beacond, enables
# and starts the unit and reloads D-Bus (docs/deployment.md). Run it as
# yourself: it builds in your clone with your Swift (sudo's PATH would not
# find a swiftly or swift.org one, and a build as root leaves root's files in
# .build), and asks sudo only to install.
set -euo pipefail
cd "$(dirname "$0")/.."
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
deb=$(scripts/package.sh)
$sudo apt-get install -y "$deb"
beacond check-config /etc/beacond/beacons.yaml
echo "installed. Add yourself to group beacond (sudo usermod -aG beacond \$USER, then log in again) and try: beaconctl nearest"
