#!/bin/bash
# Runs inside the qemu guest that Tests/Package/run.sh boots from the package
# test's Debian root, with Debian's systemd as PID 1 and its system bus: the
# installed beacond.service as systemd runs it (Type=dbus, the account, the
# capabilities and hardening, StateDirectory, reload, restarts, the watchdog and the exit
# statuses that stop them, D-Bus activation, and both radio sources ranging a
# controller on /dev/vhci through the kernel and bluetoothd). Started by
# beacond-systemd-checks.service once the system is up; prints "ok NAME (s)" /
# "FAIL NAME (s): why" lines and "done" to the console, where the host reads
# them (a file written to the shared root was seen cut short), then powers
# the guest off.
set -uo pipefail
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
unit=beacond.service
dropins=/etc/systemd/system/$unit.d
member=beacond-member
venues=$(sed -n '/^venues:/,$s/^ *- id: *\([^ #]*\).*/\1/p' /etc/beacond/beacons.yaml)

say() { echo "$*"; }
passed=0 failed=0
# check NAME COMMAND...: one line per check; the run goes on after a failure.
check() {
    local name=$1 log started=$SECONDS
    shift
    if log=$("$@" 2>&1); then
        say "ok $name ($((SECONDS - started)) s)"
        passed=$((passed + 1))
    else
        say "FAIL $name ($((SECONDS - started)) s): $*"
        while IFS= read -r line; do say "    $line"; done <<<"$log"
        failed=$((failed + 1))
        return 1
    fi
}
# within SECONDS COMMAND...: until COMMAND succeeds, polled every 0.2 s.
within() {
    local deadline=$(($(date +%s) + $1))
    shift
    until "$@" >/dev/null 2>&1; do
        (($(date +%s) < deadline)) || { "$@"; return 1; }
        sleep 0.2
    done
}
property() { systemctl show -P "$1" "$unit"; }
state_is() { [[ "$(property ActiveState)/$(property SubState)" == "$1" ]] || { echo "state $(property ActiveState)/$(property SubState), not $1"; return 1; }; }
as_member() { setpriv --reuid="$member" --regid="$member" --init-groups "$@"; }
# source ARGUMENTS: the unit's ExecStart with these arguments added, as an admin's drop-in would.
source_dropin() {
    printf '[Service]\nExecStart=\nExecStart=/usr/bin/beacond --config /etc/beacond/beacons.yaml %s\n' "$*" >"$dropins/source.conf"
    systemctl daemon-reload
}

# A venue of beacons.yaml, found by ranging (the JSON read with sed).
answers_venue() {
    local answer id
    answer=$(as_member beaconctl nearest --wait 60s --json) || { echo "$answer"; return 1; }
    id=$(sed -n 's/.*"id" *: *"\([^"]*\)".*/\1/p' <<<"$answer")
    grep -qx -- "$id" <<<"$venues" && ! grep -q '"source" *: *"preference"' <<<"$answer" || { echo "answer: $answer"; return 1; }
}
denied_to_nobody() {
    local output
    if output=$(setpriv --reuid=nobody --regid=nogroup --clear-groups beaconctl nearest 2>&1); then
        echo "answered: $output"
        return 1
    fi
    grep -q "not allowed" <<<"$output" || { echo "$output"; return 1; }
}
main_pid() { property MainPID; }
# Exactly CAP_NET_ADMIN (12) and CAP_NET_RAW (13), effective and bounding, and no new privileges.
capabilities() {
    local status=/proc/$(main_pid)/status
    grep -qx "CapEff:	0000000000003000" "$status" && grep -qx "CapBnd:	0000000000003000" "$status" &&
        grep -qx "NoNewPrivs:	1" "$status" || { grep -E "^(Cap|NoNewPrivs)" "$status"; return 1; }
}
runs_as_beacond() { [[ $(stat -c %U "/proc/$(main_pid)") == beacond ]]; }
# ProtectSystem=strict, ProtectHome= and StateDirectory=, as the mounts inside
# the service's namespace say: /usr, /etc and /home read-only, its state
# directory writable (the control: a namespace we could not enter says nothing).
inside() { nsenter --target "$(main_pid)" --mount "$@"; }
mount_options() { inside findmnt -no OPTIONS -T "$1"; }
read_only_system() {
    local path
    mount_options /var/lib/beacond | grep -qE '(^|,)rw(,|$)' || { echo "/var/lib/beacond: $(mount_options /var/lib/beacond)"; return 1; }
    for path in /usr /etc /home; do
        mount_options "$path" | grep -qE '(^|,)ro(,|$)' || { echo "$path: $(mount_options "$path")"; return 1; }
    done
}
state_directory() {
    [[ $(stat -c '%a %U %G' /var/lib/beacond) == "750 beacond beacond" ]] || { stat -c '%a %U %G' /var/lib/beacond; return 1; }
    test -s /var/lib/beacond/state.json
}
journal_says() { journalctl -u "$unit" --no-pager -o cat | grep -- "$1" >/dev/null; }
restarts_at_least() { (($(property NRestarts) >= $1)); }
# An invalid beacons.yaml: the reload fails with its problem and beacond runs on.
reload_refused() {
    local taken
    cp /etc/beacond/beacons.yaml /run/beacons.yaml.taken
    printf 'regions:\n  - id: x\n    uuid: nope\n' >/etc/beacond/beacons.yaml
    systemctl reload "$unit" 2>/dev/null
    taken=$?
    cp /run/beacons.yaml.taken /etc/beacond/beacons.yaml
    ((taken != 0)) || { echo "the reload succeeded"; return 1; }
    journal_says 'regions\[0\]\.uuid' && state_is active/running
}
reloaded() {
    systemctl reload "$unit" || { findmnt /tmp /var/tmp; journalctl -u "$unit" --no-pager -o cat | tail -4; return 1; }
    within 30 journal_says "reloaded /etc/beacond/beacons.yaml"
}
restarted_after_kill() {
    local before restarts
    before=$(main_pid) restarts=$(property NRestarts)
    systemctl kill --signal=KILL "$unit"
    within 30 restarts_at_least $((restarts + 1)) && within 30 state_is active/running || return 1
    [[ $(main_pid) != "$before" ]]
}
# Stopped (SIGSTOP), its main loop no longer says it is alive: after
# WatchdogSec= (30 s) systemd aborts it and starts it again.
restarted_by_the_watchdog() {
    local restarts
    restarts=$(property NRestarts)
    systemctl kill --signal=STOP "$unit"
    within 90 restarts_at_least $((restarts + 1)) && within 30 state_is active/running || return 1
    journal_says "Watchdog timeout"
}
# Left alone, the main loop keeps the watchdog fed: systemd's timestamp of
# the last WATCHDOG=1 moves on (every 15 s at most) and nothing restarts.
pinged_since() { [[ $(property WatchdogTimestampMonotonic) != "$1" ]]; }
keeps_the_watchdog_fed() {
    local pid restarts ping
    pid=$(main_pid) restarts=$(property NRestarts) ping=$(property WatchdogTimestampMonotonic)
    within 45 pinged_since "$ping" || return 1
    ping=$(property WatchdogTimestampMonotonic)
    within 45 pinged_since "$ping" || return 1
    [[ $(main_pid) == "$pid" && $(property NRestarts) == "$restarts" ]] || { echo "restarted meanwhile"; return 1; }
}
says_what_it_does() {
    [[ $(property StatusText) == "scanning with simulate:cafe" ]] || { echo "Status: $(property StatusText)"; return 1; }
}
# A source that cannot start: EX_UNAVAILABLE (69) is tried again, EX_CONFIG (78) is not.
retried_without_a_radio() {
    source_dropin --source hci
    systemctl restart "$unit"
    within 30 restarts_at_least 2 || return 1
    journal_says "status=69/UNAVAILABLE" && journal_says "stopping: source hci cannot scan"
}
# What only an edit mends is not retried: 78, a file beacond cannot use; 64, a command line it refuses.
not_retried() {  # not_retried STATUS BEACOND-ARGUMENT...
    local status=$1
    shift
    # Stopped first: the unit may be waiting out a restart (the exit-69 check
    # before this one), which would run with the new drop-in and be counted.
    # A CI run failed so (exit status 78, 1 restarts).
    systemctl stop "$unit"
    source_dropin "$@"
    systemctl reset-failed "$unit"
    systemctl start "$unit"
    within 30 state_is failed/failed || return 1
    [[ $(property ExecMainStatus) == "$status" && $(property NRestarts) == 0 ]] ||
        { echo "exit status $(property ExecMainStatus), $(property NRestarts) restarts"; return 1; }
}
stops_cleanly() {
    systemctl stop "$unit"
    [[ $(property Result) == success && $(property ExecMainStatus) == 0 ]] ||
        { echo "result $(property Result), exit status $(property ExecMainStatus)"; return 1; }
}
# Stopped, a member's call starts it: dbus-daemon asks systemd for
# dbus-org.beacond.service (the package's system-services file and the unit's alias).
activated_by_a_call() {
    state_is inactive/dead || return 1
    as_member beaconctl regions >/dev/null || return 1
    within 10 state_is active/running
}

# --- the radio sources under the unit: a controller on /dev/vhci ------------
# vhci_controller.py (Tests/RealStack) hears counter 1 and counter 2 of
# beacons.yaml with real RSSI, the listener standing next to counter 2; the
# root's bluetoothd (bluetooth.service) powers it on, as on a Pi.
here=$(dirname "$0")
start_controller() {
    modprobe hci_vhci || return 1
    python3 "$here/vhci_controller.py" legacy E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 -59 \
        1:1:C0:FF:EE:00:00:01 1:2:C0:FF:EE:00:00:02 >/run/vhci.out 2>/run/vhci.log &
    echo $! >/run/vhci.pid  # check runs this in a subshell: the pid goes by file
    within 20 grep -q '^hci[0-9]' /run/vhci.out || { cat /run/vhci.log; return 1; }
    within 30 sh -c "hciconfig $(cat /run/vhci.out) | grep -q 'UP RUNNING'" || { hciconfig -a; return 1; }
}
answers_counter_2() {
    local answer
    answer=$(as_member beaconctl nearest --wait 10s --json) || return 1
    grep -q '"id" *: *"counter-2"' <<<"$answer" && grep -q '"source" *: *"ranging"' <<<"$answer"
}
# ranges_counter_2 SOURCE: with --source SOURCE the member's answer is counter 2, by ranging.
# The first ranged answer may be counter 1, heard first, holding the answer
# until counter 2 has been nearer for the dwell (2 s): asked until it is counter 2.
ranges_counter_2() {
    source_dropin --source "$1"
    systemctl restart "$unit"
    within 60 state_is active/running || return 1
    within 60 answers_counter_2 || {
        echo "answer: $(as_member beaconctl nearest --json 2>&1)"
        journalctl -u "$unit" --no-pager -o cat | tail -5
        return 1
    }
    # …from this source: the process that answered started with it.
    journalctl _PID="$(main_pid)" --no-pager -o cat | grep -- "beacond started: source $1," >/dev/null
}

check "systemd-started-beacond (Type=dbus: active once org.beacond is on the system bus)" within 90 state_is active/running
# virtme-ng mounts /tmp and /var/tmp once the system is up, after
# beacond.service set up its namespace (PrivateTmp=): its control processes
# (ExecReload) could not join it then (systemd issue #28515). Started again,
# it has the guest's final mounts, as a service on a Pi has from boot.
within 60 mountpoint -q /var/tmp
within 60 mountpoint -q /tmp
systemctl restart "$unit"
check "beaconctl-nearest-as-a-member-answers-a-venue" answers_venue
check "nobody-is-denied-on-the-system-bus" denied_to_nobody
check "runs-as-user-beacond" runs_as_beacond
check "capabilities-CAP_NET_RAW-CAP_NET_ADMIN-only-and-no-new-privileges" capabilities
check "read-only-/usr-/etc-/home-writable-state-inside-the-service" read_only_system
check "StateDirectory-0750-beacond-holds-state.json" within 60 state_directory
check "systemctl-reload-reloads-beacons.yaml" reloaded
check "systemctl-reload-of-an-invalid-file-fails-and-beacond-runs-on" reload_refused
check "killed-it-is-restarted" restarted_after_kill
check "systemctl-status-says-scanning-with-simulate:cafe" says_what_it_does
check "left-alone-it-keeps-the-watchdog-fed" keeps_the_watchdog_fed
check "stopped-the-watchdog-restarts-it" restarted_by_the_watchdog
check "no-radio-exit-69-is-retried" retried_without_a_radio
check "a-missing-replay-file-exit-78-is-not-retried" not_retried 78 --source replay:/etc/beacond/no-such-capture.btsnoop
check "a-bad-option-exit-64-is-not-retried" not_retried 64 --log-level verbose
source_dropin --source simulate:cafe
systemctl reset-failed "$unit"
systemctl start "$unit"
check "beaconctl-nearest-answers-again-after-a-start" answers_venue
check "systemctl-stop-exits-0" stops_cleanly
check "a-call-activates-it-through-D-Bus" activated_by_a_call
if check "a-controller-on-dev-vhci-powered-by-bluetoothd" start_controller; then
    check "the-hci-source-with-the-unit's-capabilities-ranges-counter-2" ranges_counter_2 hci
    check "the-bluez-source-as-user-beacond-ranges-counter-2" ranges_counter_2 bluez
    systemctl stop "$unit"
    kill "$(cat /run/vhci.pid)"
fi
# The MQTT drop-in (mqtt.md) adds the internet families to the unit's, not in their place.
mqtt_dropin() {
    local families
    install -m 0644 /usr/share/beacond/beacond-mqtt.conf "$dropins/mqtt.conf" && systemctl daemon-reload || return 1
    families=$(property RestrictAddressFamilies)
    rm -f "$dropins/mqtt.conf" && systemctl daemon-reload
    echo "RestrictAddressFamilies: $families"
    for family in AF_UNIX AF_BLUETOOTH AF_INET AF_INET6; do grep -qw "$family" <<<"$families" || return 1; done
}
check "the-mqtt-drop-in-adds-AF_INET-and-AF_INET6-to-the-unit's-families" mqtt_dropin
say "note: systemd-analyze security: $(systemd-analyze security "$unit" --no-pager 2>/dev/null | tail -1)"
# The host compares these with the lines it read from the console.
say "done $passed $failed"
systemctl poweroff
