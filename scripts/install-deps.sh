#!/usr/bin/env bash
# Installs the Debian / Raspberry Pi OS packages beacond builds and tests with.
# Idempotent: installs only what is missing. Needs root (or sudo).
#   scripts/install-deps.sh [--build] [PACKAGE...]
# --build: only what building needs (scripts/package.sh on a Pi: not a
# running MQTT broker, Wireshark and the rest of the tests' tools);
# PACKAGE...: more packages a script needs (scripts/package.sh's).
set -euo pipefail

build=(
    pkg-config
    libbluetooth-dev   # BlueZ's libbluetooth (hci source)
    libdbus-1-dev      # libdbus-1 (the D-Bus service and client)
    libsystemd-dev     # libsystemd (sd_notify: the unit's watchdog and status)
    libyaml-dev        # libyaml (beacons.yaml and scenarios)
    libmosquitto-dev   # libmosquitto (the MQTT publisher)
)
tests=(
    dbus-daemon        # private buses in tests
    dbus-bin           # dbus-send, dbus-monitor
    python3-dbus       # python clients in tests
    python3-gi         # a GLib main loop for python clients that wait on many calls at once
    python3-dbusmock   # mocked BlueZ for the bluez source's tests
    python3-jinja2     # Home Assistant's template engine: the discovery templates rendered as it renders them
    bluez              # btmon: the reference decoder the tests compare with
    libglib2.0-bin     # gdbus
    systemd            # busctl, systemd-analyze
    mosquitto          # a real MQTT broker for the publisher's tests
    mosquitto-clients  # mosquitto_sub, mosquitto_passwd
    tshark             # Wireshark's dissectors: the pcapng and btsnoop cross-checks
    openssl            # a test CA for the MQTT publisher's TLS test
)
if [[ ${1:-} == --build ]]; then
    shift
    packages=("${build[@]}" "$@")
else
    packages=("${build[@]}" "${tests[@]}" "$@")
fi
# Said before apt runs, not after: without Swift nothing here can be built.
if ! command -v swift >/dev/null; then
    if [[ -n ${SUDO_USER:-} ]]; then
        # sudo sets PATH to its secure_path: a toolchain in /opt or ~/.local is not on it.
        echo "swift is not on PATH under sudo (sudo resets PATH): keep yours with sudo env \"PATH=\$PATH\" scripts/…, or run the script as yourself (it asks sudo only for apt)" >&2
    else
        echo "swift is not on PATH: install Swift 6.2 or later (https://www.swift.org/install/linux/) and retry" >&2
    fi
    exit 1
fi

missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
    sudo=""
    if [[ $(id -u) -ne 0 ]]; then
        command -v sudo >/dev/null || { echo "installing ${missing[*]} needs root: run this as root (su -), or install sudo" >&2; exit 1; }
        sudo="sudo"
    fi
    echo "installing: ${missing[*]}" >&2
    # wireshark-common asks whether non-root users may capture; answer no, without a prompt.
    echo "wireshark-common wireshark-common/install-setuid boolean false" | $sudo debconf-set-selections
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
