#!/usr/bin/env bash
# The live sources against a real Linux Bluetooth stack: Debian's own kernel
# under qemu (TCG), BlueZ's btvirt making three virtual controllers through
# /dev/vhci, a controller of our own on /dev/vhci that reports RSSI
# (vhci_controller.py), the real bluetoothd. Runs the scenarios of guest.sh inside the
# guest, one line per check; exits non-zero if any check fails.
#
#   Tests/RealStack/run.sh [SCENARIO...]     (default: all; see guest.sh)
#
# Downloads (a pinned kernel package, virtme-ng) are cached in
# .build-realstack/. Where qemu cannot run, it SKIPS and says why.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
cache=$root/.build-realstack

skip() {
    echo "realstack: SKIPPED: $*" >&2
    echo "realstack: 0 passed, 0 failed, 1 skipped"
    exit 0
}

# qemu, Debian's kernel and virtme-ng; here also btvirt, bluetoothd/btmon/hciconfig.
# shellcheck source=Tests/RealStack/qemu-guest.sh
source Tests/RealStack/qemu-guest.sh
guest_prepare "$root" bluez-test-tools bluez util-linux bc || skip "$guest_problem"
kernel_abi=$guest_abi

bin=$(swift build --show-bin-path)
[[ -x $bin/beacond && -x $bin/beaconctl ]] || { echo "realstack: build beacond first (swift build)" >&2; exit 1; }

out=$cache/out
rm -rf "$out" && mkdir -p "$out"
echo "realstack: booting linux $kernel_abi under qemu (TCG, 2 CPUs, 512 MB)" >&2
started=$(date +%s.%N)
# TCG, not KVM: this kind of machine's /dev/kvm is not hardware virtualisation.
# Piped through cat: redirected to a file, vng loses the start of the log.
set +e
PATH=$guest_venv/bin:$PATH timeout 1200 vng --run "$guest_kernel" --disable-kvm \
    --qemu-opts="-accel tcg,tb-size=256" --memory 512M --cpus 2 --rwdir="$out" \
    --exec "$root/Tests/RealStack/guest.sh $out $bin $root ${*:-all}" 2>&1 | cat >"$out/console.log" &
vm=$!
# Peak memory of qemu, sampled while it runs.
peak=0
while kill -0 $vm 2>/dev/null; do
    for pid in $(pgrep -f "qemu-system-x86_64 .*$out" 2>/dev/null); do
        rss=$(awk '/VmHWM/ {print $2}' /proc/$pid/status 2>/dev/null || echo 0)
        ((rss > peak)) && peak=$rss
    done
    sleep 1
done
wait $vm
status=$?
set -e
elapsed=$(echo "$(date +%s.%N) - $started" | bc)

results=$out/results
if [[ ! -s $results ]]; then
    echo "realstack: the guest reported nothing (exit $status); its console:" >&2
    tail -50 "$out/console.log" >&2
    echo "realstack: 0 passed, 1 failed"
    exit 1
fi
cat "$results"
passed=$(grep -c '^ok ' "$results" || true)
failed=$(grep -c '^FAIL ' "$results" || true)
done_line=$(grep -c '^done' "$results" || true)
if ((done_line == 0)); then
    echo "FAIL harness: the guest stopped before finishing (exit $status); last console lines:"
    tail -20 "$out/console.log"
    failed=$((failed + 1))
fi
printf 'realstack: %.0f s wall, qemu peak resident %d MB\n' "$elapsed" $((peak / 1024))
echo "realstack: $passed passed, $failed failed"
((failed == 0))
