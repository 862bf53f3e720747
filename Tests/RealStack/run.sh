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

# Pinned: the kernel the figures in docs/real-stack.md were taken with. If
# Debian has since replaced it (bookworm point releases do), the exact package
# the linux-image-amd64 metapackage names today is used instead, and said.
kernel_abi=${REALSTACK_KERNEL:-6.1.0-56-amd64}
virtme_ng_version=1.42

skip() {
    echo "realstack: SKIPPED: $*" >&2
    echo "realstack: 0 passed, 0 failed, 1 skipped"
    exit 0
}

[[ $(uname -m) == x86_64 ]] || skip "the harness boots an amd64 Debian kernel; this machine is $(uname -m)"
[[ $(uname -s) == Linux ]] || skip "needs Linux"

# The host's packages: qemu, btvirt, bluetoothd/btmon/hciconfig, a venv for virtme-ng.
packages=(qemu-system-x86 bluez-test-tools bluez python3-venv util-linux busybox-static bc)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
    if [[ $(id -u) -ne 0 ]]; then
        skip "not root and missing ${missing[*]} (sudo apt-get install ${missing[*]})"
    fi
    echo "realstack: installing ${missing[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed"
[[ $(id -u) -eq 0 ]] || skip "the guest shares this machine's / and needs root to load modules and run bluetoothd; run as root"

mkdir -p "$cache"
# The kernel: one exact package name, never a glob (a glob pulls ~1.6 GB).
kernel_dir=$cache/linux-$kernel_abi
if [[ ! -e $kernel_dir/boot/vmlinuz-$kernel_abi ]]; then
    (
        cd "$cache"
        # A machine whose package lists were never fetched knows no package yet.
        apt-get download "linux-image-$kernel_abi" >/dev/null 2>&1 || apt-get update -qq
        if ! apt-get download "linux-image-$kernel_abi" >/dev/null 2>download.log; then
            current=$(apt-cache depends linux-image-amd64 | sed -n 's/^ *Depends: linux-image-\(.*-amd64\)$/\1/p' | head -1)
            [[ -n $current ]] || { cat download.log >&2; exit 1; }
            echo "realstack: linux-image-$kernel_abi is no longer in the archive; using linux-image-$current (set REALSTACK_KERNEL=$current and update run.sh)" >&2
            echo "$current" >kernel-abi
            apt-get download "linux-image-$current" >/dev/null
        fi
    ) || skip "cannot download the kernel package (no network?)"
    [[ -e $cache/kernel-abi ]] && kernel_abi=$(cat "$cache/kernel-abi") && kernel_dir=$cache/linux-$kernel_abi
    deb=$(ls "$cache"/linux-image-"${kernel_abi}"_*.deb)
    rm -rf "$kernel_dir" && mkdir -p "$kernel_dir"
    dpkg-deb -x "$deb" "$kernel_dir"
    rm -f "$deb"
fi
[[ -e $cache/kernel-abi ]] && kernel_abi=$(cat "$cache/kernel-abi") && kernel_dir=$cache/linux-$kernel_abi

# virtme-ng from PyPI, pinned, in a venv of Debian's python (vng execs virtme-run from PATH).
venv=$cache/venv
if [[ ! -x $venv/bin/vng ]]; then
    rm -rf "$venv"
    /usr/bin/python3 -m venv "$venv"
    "$venv/bin/pip" install -q "virtme-ng==$virtme_ng_version" || skip "cannot install virtme-ng $virtme_ng_version from PyPI"
fi

bin=$(swift build --show-bin-path)
[[ -x $bin/beacond && -x $bin/beaconctl ]] || { echo "realstack: build beacond first (swift build)" >&2; exit 1; }

out=$cache/out
rm -rf "$out" && mkdir -p "$out"
echo "realstack: booting linux $kernel_abi under qemu (TCG, 2 CPUs, 512 MB)" >&2
started=$(date +%s.%N)
# TCG, not KVM: this kind of machine's /dev/kvm is not hardware virtualisation.
# Piped through cat: redirected to a file, vng loses the start of the log.
set +e
PATH=$venv/bin:$PATH timeout 1200 vng --run "$kernel_dir/boot/vmlinuz-$kernel_abi" --disable-kvm \
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
