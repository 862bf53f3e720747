#!/usr/bin/env bash
# The Debian package as installed: builds it (scripts/package.sh), makes a
# fresh Debian root with debootstrap, `apt install ./beacond_….deb` inside
# (its Depends from Debian's archive), then checks the installed files, runs
# the installed service as user beacond on the root's own system bus with the
# installed policy until `beaconctl nearest` answers from the simulated café,
# reinstalls it (keeping an edited conffile), boots the root with Debian's
# systemd under qemu to run the installed unit as systemd does
# (systemd-guest.sh; skipped, saying why, where qemu cannot run), then
# removes and purges it. One line per check; exits non-zero if any fails.
#
#   Tests/Package/run.sh [--prebuilt]     (--prebuilt goes to scripts/package.sh)
#
# Cached in .build-package/cache: the debootstrapped root as a tarball (each
# run unpacks a fresh copy) and the .debs apt downloads. Skips, saying why,
# without root or debootstrap's network, or with BEACOND_PACKAGE=skip.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
out=$root/.build-package
cache=$out/cache
suite=bookworm
mirror=${BEACOND_MIRROR:-http://deb.debian.org/debian}
arch=$(dpkg --print-architecture)
rootfs=$out/root

skip() {
    echo "package: SKIPPED: $*" >&2
    echo "package: 0 passed, 0 failed, 1 skipped"
    exit 0
}
[[ ${BEACOND_PACKAGE:-run} != skip ]] || skip "BEACOND_PACKAGE=skip"
[[ $(id -u) -eq 0 ]] || skip "debootstrap, chroot and mounts need root; run as root"

passed=0
failed=0
check() {  # check NAME COMMAND...: one line, counted
    local name=$1
    shift
    if "$@" >"$out/check.log" 2>&1; then
        echo "ok: $name"
        passed=$((passed + 1))
    else
        echo "FAIL: $name"
        sed 's/^/    /' "$out/check.log"
        failed=$((failed + 1))
    fi
}

if ! deb=$(scripts/package.sh "$@"); then
    echo "FAIL: scripts/package.sh (above)"
    echo "package: 0 passed, 1 failed"
    exit 1
fi
scripts/install-deps.sh debootstrap

# Inside the root: a clean environment, as apt and a service would have.
environment=(PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8)
in_root() { chroot "$rootfs" /usr/bin/env -i "${environment[@]}" DEBIAN_FRONTEND=noninteractive "$@"; }
mounts=(var/cache/apt/archives dev/pts dev proc)  # innermost first
mount_root() {
    mount -t proc proc "$rootfs/proc"
    mount --bind /dev "$rootfs/dev"
    mount --bind /dev/pts "$rootfs/dev/pts"
    mount --bind "$cache/archives" "$rootfs/var/cache/apt/archives"
}
unmount() {
    for mount in "${mounts[@]}"; do
        if mountpoint -q "$rootfs/$mount"; then umount "$rootfs/$mount"; fi
    done
}

started=()
cleanup() {
    for pid in "${started[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${started[@]}"; do
        while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
    done
    unmount
}
trap cleanup EXIT

# A fresh root: debootstrap once, then unpack the cached result each run.
mkdir -p "$cache/archives"
tarball=$cache/$suite-minbase-$arch.tar
if [[ -d $rootfs ]]; then
    # A run killed before its trap (a CI job cut off) leaves the host's /dev
    # bound inside: never follow a mount while removing the old root.
    unmount
    rm -rf --one-file-system "$rootfs"
fi
if [[ ! -e $tarball ]]; then
    echo "package: debootstrap $suite (minbase) from $mirror" >&2
    debootstrap --variant=minbase "$suite" "$rootfs" "$mirror" >"$out/debootstrap.log" 2>&1 ||
        { tail -5 "$out/debootstrap.log" >&2; rm -rf --one-file-system "$rootfs"; skip "debootstrap $suite from $mirror failed (no network?); $out/debootstrap.log"; }
    tar -C "$rootfs" -cf "$tarball.partial" . && mv "$tarball.partial" "$tarball"
else
    mkdir -p "$rootfs" && tar -C "$rootfs" -xf "$tarball"
fi
mount_root
cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
# No service may start inside the root on its own (Debian's policy-rc.d).
printf '#!/bin/sh\nexit 101\n' >"$rootfs/usr/sbin/policy-rc.d" && chmod 0755 "$rootfs/usr/sbin/policy-rc.d"
cp "$deb" "$rootfs/tmp/"
package=/tmp/$(basename "$deb")

in_root apt-get update -qq || skip "apt-get update inside the root cannot reach $mirror"
check "apt install ./$(basename "$deb") (Depends from $suite)" \
    in_root apt -o APT::Keep-Downloaded-Packages=true install -y -q "$package"
status() { in_root dpkg-query -W -f='${Status}' beacond 2>/dev/null || true; }
installed() { [[ $(status) == "install ok installed" ]]; }
check "dpkg says beacond is installed" installed
check "no Swift runtime in the root; beacond runs" in_root sh -c '! ls /usr/lib/*/libswiftCore.so* /usr/lib/swift 2>/dev/null && beacond --version'
check "user and group beacond from sysusers.d" in_root sh -c 'getent passwd beacond | grep -q ":/usr/sbin/nologin$" && getent group beacond'
check "the unit is enabled with its D-Bus alias" in_root sh -c \
    'test -L /etc/systemd/system/multi-user.target.wants/beacond.service && test -L /etc/systemd/system/dbus-org.beacond.service'
check "beacons.yaml and the scenarios are conffiles" in_root sh -c \
    'dpkg-query -W -f="\${Conffiles}" beacond | grep -q " /etc/beacond/beacons.yaml " && dpkg-query -W -f="\${Conffiles}" beacond | grep -q " /etc/beacond/scenarios/cafe.yaml "'
check "beacond check-config /etc/beacond/beacons.yaml" in_root beacond check-config /etc/beacond/beacons.yaml
completes() {
    local words
    words=$(in_root bash -c 'source /usr/share/bash-completion/completions/beaconctl
        COMP_WORDS=(beaconctl ne); COMP_CWORD=1; COMP_LINE="beaconctl ne"; COMP_POINT=${#COMP_LINE}
        _beaconctl beaconctl ne beaconctl; echo "${COMPREPLY[*]}"') || return 1
    echo "beaconctl ne<TAB>: $words"
    [[ $words == nearest ]] && test -s "$rootfs/usr/share/zsh/vendor-completions/_beacond" &&
        test -s "$rootfs/usr/share/fish/vendor_completions.d/beacond.fish"
}
check "bash completes beaconctl's commands; zsh and fish have their files" completes
edit_survives() {
    echo "# the admin's edit" >>"$rootfs/etc/beacond/beacons.yaml"
    in_root apt-get install -y -q --reinstall "$package" || return 1
    grep -qx "# the admin's edit" "$rootfs/etc/beacond/beacons.yaml" && installed &&
        test -L "$rootfs/etc/systemd/system/multi-user.target.wants/beacond.service"
}
check "reinstalled: the edited beacons.yaml is kept, the unit still enabled" edit_survives

# The root's system bus: Debian's system.conf, which includes the installed policy.
mkdir -p "$rootfs/run/dbus"
if bus_pid=$(in_root dbus-daemon --system --fork --print-pid); then
    started+=("$bus_pid")
fi
check "the root's system bus runs" test -n "${bus_pid:-}"

# The service as the installed unit runs it: its ExecStart, User, Group and
# state directory (which systemd would make), on the simulated café.
unit=$rootfs/usr/lib/systemd/system/beacond.service
key() { sed -n "s/^$1=//p" "$unit"; }
exec_start=$(key ExecStart)
user=$(key User)
state=/var/lib/$(key StateDirectory)
install -d -m "$(key StateDirectoryMode)" -o "$(in_root id -u "$user")" -g "$(in_root id -g "$(key Group)")" "$rootfs$state"
# chroot, env, setpriv and env exec each other: $! is beacond's own pid.
# shellcheck disable=SC2086  # ExecStart is a command line
chroot "$rootfs" /usr/bin/env -i "${environment[@]}" STATE_DIRECTORY="$state" \
    setpriv --reuid="$user" --regid="$(key Group)" --init-groups $exec_start --source simulate:cafe >"$out/beacond.log" 2>&1 &
service=$!
started+=("$service")

in_root sh -c 'getent passwd beacond-member >/dev/null || useradd --system --user-group --no-create-home --groups beacond beacond-member'
venues=$(sed -n '/^venues:/,$s/^ *- id: *\([^ #]*\).*/\1/p' "$rootfs/etc/beacond/beacons.yaml")
answers_venue() {
    local answer
    answer=$(in_root setpriv --reuid=beacond-member --regid=beacond-member --init-groups beaconctl nearest --wait 90s --json) || return 1
    echo "$answer"
    python3 -c 'import json, sys; venue = json.loads(sys.argv[1]); sys.exit(venue["id"] not in sys.argv[2].split() or venue.get("source") == "preference")' \
        "$answer" "$venues"
}
check "beaconctl nearest (a member of group beacond) answers a venue of beacons.yaml" answers_venue
denied_to_nobody() {
    local output
    if output=$(in_root setpriv --reuid=nobody --regid=nogroup --clear-groups beaconctl nearest 2>&1); then
        echo "answered: $output"
        return 1
    fi
    echo "$output"
    grep -q "not allowed" <<<"$output"
}
check "nobody is denied by the installed policy" denied_to_nobody
runs_as() { [[ $(stat -c %u "/proc/$service") == $(in_root id -u "$user") ]]; }
check "the service runs as user $user" runs_as

stops() {
    kill "$service"
    wait "$service" || { echo "exit status $?; $out/beacond.log"; return 1; }
    ls -A "$rootfs$state" | grep .
}
check "beacond stops cleanly on SIGTERM and keeps its state in $state" stops
kill "$bus_pid"

# The same root booted with Debian's systemd as PID 1 (qemu with Debian's
# kernel, as Tests/RealStack): the installed unit as systemd runs it.
# systemd-guest.sh runs the checks inside, from a oneshot unit, prints them on
# the console and powers off.
under_systemd() {
    local guest_dir=/usr/local/lib/beacond-checks units=$rootfs/etc/systemd/system
    # systemd as init; bluetoothd and python for the controller on /dev/vhci.
    in_root apt-get -o APT::Keep-Downloaded-Packages=true install -y -q --no-install-recommends systemd-sysv bluez python3 \
        >"$out/systemd-sysv.log" 2>&1 || { tail -5 "$out/systemd-sysv.log"; return 1; }
    mkdir -p "$rootfs$guest_dir" "$units/beacond.service.d"
    cp Tests/Package/systemd-guest.sh Tests/RealStack/vhci_controller.py "$rootfs$guest_dir/"
    # No radio in the guest: the simulated café, as the run above.
    cat >"$units/beacond.service.d/source.conf" <<EOF
[Service]
ExecStart=
ExecStart=$exec_start --source simulate:cafe
EOF
    cat >"$units/beacond-systemd-checks.service" <<EOF
[Unit]
Description=beacond under systemd: the package test's checks
After=multi-user.target
[Service]
Type=oneshot
TimeoutStartSec=infinity
ExecStart=$guest_dir/systemd-guest.sh
StandardOutput=journal+console
[Install]
WantedBy=multi-user.target
EOF
    ln -sf /etc/systemd/system/beacond-systemd-checks.service "$units/multi-user.target.wants/"
    # The kernel's modules for the controller on /dev/vhci (the guest's root is this one, not the host's).
    local kernel_tree=${guest_kernel%/boot/*} modules=lib/modules/$guest_abi file
    mkdir -p "$rootfs/$modules"
    cp "$kernel_tree/$modules"/modules.* "$rootfs/$modules/"
    for file in $(modprobe -d "$kernel_tree" -S "$guest_abi" --show-depends hci_vhci | awk '$1 == "insmod" { print $2 }'); do
        install -D -m 0644 "$file" "$rootfs/$modules/kernel/${file#*/kernel/}"
    done
    # The state directory as systemd makes it (StateDirectory=), not as the run above left it.
    rm -rf "$rootfs/var/lib/beacond"
    # The guest gets the root as it is, not the host's /proc and /dev mounted into it.
    unmount
    local mount
    for mount in "${mounts[@]}"; do
        ! mountpoint -q "$rootfs/$mount" || { echo "$rootfs/$mount is still mounted"; return 1; }
    done
    echo "package: booting the root with systemd under qemu (TCG)" >&2
    PATH=$guest_venv/bin:$PATH timeout 900 vng --run "$guest_kernel" --disable-kvm \
        --qemu-opts="-accel tcg,tb-size=256" --memory 512M --cpus 2 --root "$rootfs" --rw --systemd 2>&1 |
        cat >"$out/systemd-console.log"
    mount_root
    rm -rf "$rootfs$guest_dir" "$rootfs/lib/modules" "$units/beacond.service.d" "$units/beacond-systemd-checks.service" \
        "$units/multi-user.target.wants/beacond-systemd-checks.service"
    # The checks' lines, from the console (the guest's shell prompt may come before one).
    grep -a 'systemd-guest\.sh\[[0-9]*\]: ' "$out/systemd-console.log" |
        sed 's/.*systemd-guest\.sh\[[0-9]*\]: //' | tr -d '\r' >"$out/systemd-checks"
}
# shellcheck source=Tests/RealStack/qemu-guest.sh
source Tests/RealStack/qemu-guest.sh
systemd_skipped=
if ! guest_prepare "$root" kmod; then
    systemd_skipped=$guest_problem
    echo "package: SKIPPED the checks under systemd: $guest_problem" >&2
elif under_systemd && [[ -s $out/systemd-checks ]]; then
    while IFS= read -r line; do
        case $line in
            "ok "*) echo "ok: systemd: ${line#ok }"; passed=$((passed + 1)) ;;
            "FAIL "*) echo "FAIL: systemd: ${line#FAIL }"; failed=$((failed + 1)) ;;
            done*) ;;
            *) echo "$line" ;;
        esac
    done <"$out/systemd-checks"
    # The guest's own count: a line the console lost is a failure too.
    seen="done $(grep -c '^ok ' "$out/systemd-checks" || true) $(grep -c '^FAIL ' "$out/systemd-checks" || true)"
    if ! grep -q '^done ' "$out/systemd-checks"; then
        echo "FAIL: systemd: the guest stopped before its last check; $out/systemd-console.log"
        failed=$((failed + 1))
    elif ! grep -qx "$seen" "$out/systemd-checks"; then
        echo "FAIL: systemd: the guest says '$(grep '^done ' "$out/systemd-checks")' (ok, FAIL) but the console showed '$seen'"
        failed=$((failed + 1))
    fi
else
    echo "FAIL: systemd: the guest reported nothing; the end of $out/systemd-console.log:"
    tail -20 "$out/systemd-console.log" | sed 's/^/    /'
    failed=$((failed + 1))
fi

check "apt remove: the programs go, the conffiles stay" in_root sh -c \
    'apt-get remove -y -q beacond && ! test -e /usr/bin/beacond && test -e /etc/beacond/beacons.yaml'
purged() {
    in_root apt-get purge -y -q beacond || return 1
    [[ -z $(status) || $(status) == "unknown ok not-installed" ]] || { echo "status: $(status)"; return 1; }
    in_root sh -c 'for path in /usr/bin/beacond /usr/bin/beaconctl /usr/lib/systemd/system/beacond.service /usr/lib/sysusers.d/beacond.conf \
         /usr/share/dbus-1/system.d/org.beacond.conf /usr/share/dbus-1/system-services/org.beacond.service \
         /usr/share/dbus-1/interfaces/org.beacond.Manager1.xml /usr/share/dbus-1/interfaces/org.beacond.Region1.xml \
         /usr/share/dbus-1/interfaces/org.beacond.Beacon1.xml /usr/share/dbus-1/interfaces/org.beacond.Venue1.xml /etc/beacond \
         /usr/share/bash-completion/completions/beacond /usr/share/bash-completion/completions/beaconctl \
         /usr/share/zsh/vendor-completions/_beacond /usr/share/zsh/vendor-completions/_beaconctl \
         /usr/share/fish/vendor_completions.d/beacond.fish /usr/share/fish/vendor_completions.d/beaconctl.fish \
         /etc/systemd/system/multi-user.target.wants/beacond.service /etc/systemd/system/dbus-org.beacond.service; do
         if test -e "$path" || test -L "$path"; then echo "left: $path"; exit 1; fi
     done'
}
check "apt purge: nothing of the package is left" purged
check "apt purge keeps the state $state and the account" in_root sh -c "ls -A '$state' | grep -q . && getent passwd beacond"

echo "package: $passed passed, $failed failed${systemd_skipped:+ (the checks under systemd SKIPPED: $systemd_skipped)}"
((failed == 0))
