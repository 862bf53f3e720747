#!/usr/bin/env bash
# The quick start's first command: beacond on its main job with no radio, on
# the simulated café (scenarios/cafe.yaml, matching beacons.yaml), on a private
# D-Bus session bus; beaconctl asks it which venue is nearest while the
# simulated listener walks from counter to counter. Installs what it needs.
# DEMO_SECONDS (default 100: counter 1, counter 2, then the coffee stand) says how long to watch.
# The first run builds beacond and beaconctl (a debug build: several minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --build dbus-daemon   # what building needs, and the bus the demo runs on
swift build --product beacond
swift build --product beaconctl
exec dbus-run-session -- bash -c '
    set -u
    state=$(mktemp -d)
    .build/debug/beacond --bus session --source simulate --state-dir "$state" &
    beacond=$!
    trap "kill -INT $beacond; wait $beacond; rm -rf $state" EXIT
    .build/debug/beaconctl --help >/dev/null
    echo "== beaconctl nearest --wait 10s" >&2
    .build/debug/beaconctl nearest --bus session --wait 10s
    end=$((SECONDS + ${DEMO_SECONDS:-100}))
    while [ $SECONDS -lt $end ]; do
        sleep 10
        echo "== beaconctl nearest" >&2
        .build/debug/beaconctl nearest --bus session || true
    done
    echo "== beaconctl beacons" >&2
    .build/debug/beaconctl beacons --bus session
'
