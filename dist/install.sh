#!/usr/bin/env bash
# Installs beacond as a system service on Debian / Raspberry Pi OS:
# builds a release, creates user and group beacond, installs the binaries,
# configuration, D-Bus policy and activation file and the systemd unit, then
# reloads systemd and D-Bus. Run from the repository as root (or with sudo).
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $(id -u) -eq 0 ]] || { echo "run as root: sudo dist/install.sh" >&2; exit 1; }
scripts/install-deps.sh
swift build -c release --product beacond
swift build -c release --product beaconctl
bin=$(swift build -c release --show-bin-path)

dist/accounts.sh

install -m 0755 "$bin/beacond" "$bin/beaconctl" /usr/local/bin/
install -d -m 0755 /etc/beacond /etc/beacond/scenarios
[[ -e /etc/beacond/beacons.yaml ]] || install -m 0644 beacons.yaml /etc/beacond/beacons.yaml
install -m 0644 scenarios/*.yaml /etc/beacond/scenarios/
install -m 0644 dist/dbus-1/org.beacond.conf /usr/share/dbus-1/system.d/org.beacond.conf
install -m 0644 dist/dbus-1/org.beacond.service /usr/share/dbus-1/system-services/org.beacond.service
install -m 0644 dist/systemd/beacond.service /etc/systemd/system/beacond.service
install -d -m 0755 /usr/share/dbus-1/interfaces
install -m 0644 dist/dbus/*.xml /usr/share/dbus-1/interfaces/

/usr/local/bin/beacond check-config /etc/beacond/beacons.yaml
systemctl daemon-reload
systemctl reload dbus || true
systemctl enable --now beacond
echo "installed. Add yourself to group beacond (sudo usermod -aG beacond \$USER, then log in again) and try: beaconctl nearest"
