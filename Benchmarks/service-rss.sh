#!/usr/bin/env bash
# service-rss.sh BEACOND [SECONDS]: the resident memory of `beacond run` on a
# private session bus after SECONDS (default 30) with the simulated café and
# with 1, 100 and 1,000 beacons in view (docs/benchmarks.md). Prints VmRSS,
# VmHWM (the peak), RssAnon (its own heap and stacks) and RssFile (mapped code
# and data of the binary and libraries) from /proc/PID/status. Use a release build.
set -euo pipefail
beacond=$(realpath "$1")
seconds=${2:-30}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# N beacons of the café's UUID on a grid 1 m apart around a listener who
# stands still among them: every one in view (the nearest ~0 m, the farthest
# ~22 m at 1,000, above the radio's sensitivity).
crowd() {
    local n=$1 side
    side=$(python3 -c "import math; print(math.ceil(math.sqrt($n)))")
    cat <<YAML
seed: 7
radio: { path_loss_exponent: 2.0, shadowing_sigma: 2, shadowing_distance: 1.5, shadowing_time: 5s, fading_k: 4, packet_loss: 0.1, sensitivity: -100 }
beacons:
YAML
    for ((i = 0; i < n; i++)); do
        echo "  - { beacon: { uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major: $((100 + i / 1000)), minor: $((i % 1000)) }, position: [$((i % side)), $((i / side))], measured_power: -59, advertising_interval: 100ms }"
    done
    cat <<YAML
listener:
  start: [$((side / 2)), $((side / 2))]
  speed: 1.0
  stops:
    - { at: [$((side / 2)), $((side / 2))], pause: 1h }
YAML
}

for n in 1 100 1000; do crowd $n > "$work/crowd-$n.yaml"; done

# Start from the binary's pages on disk, as after a boot: a binary just
# copied or built is still in the page cache as written, in larger folios
# that map 1-2.5 MB more per process (docs/benchmarks.md).
python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$beacond"

for scenario in scenarios/cafe.yaml "$work/crowd-1.yaml" "$work/crowd-100.yaml" "$work/crowd-1000.yaml"; do
    mkdir -p "$work/state"
    dbus-run-session -- bash -c '
        "$0" run --bus session --config beacons.yaml --source "simulate:$1" --state-dir "$2" --log-level warning &
        pid=$!
        sleep "$3"
        echo "$(basename "$1" .yaml): $(grep -E "VmRSS|VmHWM|RssAnon|RssFile" /proc/$pid/status | tr -s " \t" " " | tr "\n" " ")"
        kill -INT $pid
        wait $pid || true
    ' "$beacond" "$scenario" "$work/state" "$seconds"
    rm -rf "$work/state"
done
