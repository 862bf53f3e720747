#!/usr/bin/env bash
# The quick start's first command: runs beacond on its main job with no radio,
# on the simulated café (scenarios/cafe.yaml, matching beacons.yaml), and shows
# region events and the nearest venue as the simulated listener walks from
# counter to counter. Installs what it needs. Stops after DEMO_SECONDS (default 90).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build --product beacond
state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
echo "beacond --source simulate (the simulated café); the listener stops at counter 1, counter 2, the coffee stand …" >&2
timeout --signal=INT "${DEMO_SECONDS:-90}" .build/debug/beacond --source simulate --state-dir "$state" || true
