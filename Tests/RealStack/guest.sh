#!/bin/bash
# Runs inside the qemu guest (started by run.sh through virtme-ng): the host's
# / is shared read-only, so beacond, beaconctl, btvirt, bluetoothd and the
# Swift runtime are the host's own files. Writes one line per check to
# OUT/results ("ok NAME (s)" / "FAIL NAME: why") and "done" at the end.
#
#   guest.sh OUT BIN ROOT SCENARIO...   scenarios: hci kernel-scan down-up deaf service bluez rssi ranging
#                                        bluez-ranging unprivileged, or all
set -uo pipefail
out=$1 bin=$2 root=$3
shift 3
scenarios=("$@")
[[ ${scenarios[*]} == all ]] && scenarios=(hci kernel-scan down-up deaf service bluez rssi chained ranging bluez-ranging unprivileged)
here=$root/Tests/RealStack
results=$out/results
work=/tmp/realstack
mkdir -p "$work"
export PATH=$bin:/usr/sbin:/usr/bin:/sbin:/bin
export SWIFT_BACKTRACE=enable=no

# Counter 1 of beacons.yaml.
UUID=E2C56DB5-DFFB-48D2-B060-D0F5A71096E0
MAJOR=1 MINOR=1 POWER=-59

say() { echo "$*" | tee -a "$results"; }
now() { date +%s.%N; }
since() { printf '%.1f' "$(echo "$(now) - $1" | bc)"; }

# check NAME COMMAND...: one line per check; the scenario goes on after a failure.
# A failed check's own account (wait_for's last lines of the file) follows its
# FAIL line in the results, as "#" lines, so a CI log says why.
failures=0
check() {
    local name=$1
    shift
    if "$@" 2>"$work/check.err"; then
        cat "$work/check.err" >&2
        say "ok $scenario/$name"
    else
        say "FAIL $scenario/$name: $*"
        sed -n '1,12s/^/#   /p' "$work/check.err" | tee -a "$results"
        failures=$((failures + 1))
        return 1
    fi
}

# need STEP…: a step the scenario cannot go on without (a bus, a controller).
# Its failure is a FAIL line too, so a scenario that stops early is no silent
# pass of the checks it never reached.
need() {
    "$@" && return 0
    say "FAIL $scenario/need: $*"
    failures=$((failures + 1))
    return 1
}

# wait_for FILE PATTERN SECONDS [COUNT]: until PATTERN (extended regex) is on COUNT lines of FILE.
wait_for() {
    local file=$1 pattern=$2 deadline=$(($(date +%s) + $3)) count=${4:-1}
    while (($(date +%s) < deadline)); do
        (($(grep -cE -- "$pattern" "$file" 2>/dev/null || true) >= count)) && return 0
        sleep 0.2
    done
    echo "  no '$pattern' (x$count) in $file within $3 s; it has:" >&2
    tail -8 "$file" >&2
    return 1
}
wait_gone() {
    local deadline=$(($(date +%s) + $2))
    while [[ -e $1 ]]; do
        (($(date +%s) < deadline)) || return 1
        sleep 0.2
    done
}
lines() { grep -cE -- "${2:-.}" "$1" 2>/dev/null || true; }

# The JSON line `beacond scan --json` prints for counter 1 (or minor MINOR)
# heard from ADDRESS (with an RSSI only if there is a reading: btvirt's is
# always 127, "none"; the no-reading checks look at that separately).
sighting() {
    echo "\"address\":\"$1\",\"address_type\":\"public\",\"major\":$MAJOR,\"measured_power\":$POWER,\"measured_power_plausible\":true,\"minor\":${2:-$MINOR},${3:-(\"rssi\":-?[0-9]+,)?}\"time\":\"[^\"]*\",\"time_us\":[0-9]+,\"uuid\":\"$UUID\""
}
# The same, with an RSSI reading: ranged_sighting ADDRESS MINOR.
ranged_sighting() { sighting "$1" "$2" '"rssi":-[0-9]+,'; }
no_reading() { ! grep -q '"rssi"' "$1"; }
# more_sightings FILE ADDRESS SECONDS: at least three more sightings than now.
more_sightings() {
    local before
    before=$(lines "$1" "$(sighting "$2")")
    wait_for "$1" "$(sighting "$2")" "$3" $((before + 3))
}

address() { hciconfig "$1" | sed -n 's/.*BD Address: \([0-9A-F:]*\).*/\1/p'; }

# Background processes of the current scenario, stopped (SIGTERM: a background
# job of a non-interactive shell ignores SIGINT) when it ends.
pids=()
spawn() {
    "$@" &
    pids+=($!)
}
# Waits for a process sent SIGTERM; one that ignores it is killed after 10 s
# rather than hanging the run until run.sh's limit.
reap() {
    local deadline=$((SECONDS + 10))
    while kill -0 "$1" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
    kill -KILL "$1" 2>/dev/null
    wait "$1" 2>/dev/null
}
stop_all() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
    for pid in "${pids[@]}"; do reap "$pid"; done
    pids=()
}
advertise() { spawn /usr/bin/python3 "$here/hci_tool.py" advertise "$1" "$2" $UUID $MAJOR $MINOR $POWER "${3:-0.2}"; }

start_controllers() {
    local try
    for try in 1 2 3; do
        start_btvirt && return 0
        echo "  btvirt try $try: a controller failed its first power-on; starting btvirt again" >&2
        hciconfig -a >&2
        pkill -TERM -x btvirt
        wait_gone /sys/class/bluetooth/hci0 10
    done
    return 1
}
start_btvirt() {
    btvirt -l3 >"$work/btvirt.log" 2>&1 &
    local deadline=$(($(date +%s) + 20)) index
    until [[ -e /sys/class/bluetooth/hci2 ]]; do
        (($(date +%s) < deadline)) || return 1
        sleep 0.2
    done
    # The kernel powers a new controller on by itself to set it up (reading
    # its address), then off again after 2 s unless someone keeps it. Only then
    # is it known to mgmt, and so to bluetoothd. An `hciconfig up` before that
    # leaves it unknown to mgmt for good; so does a first power-on that fails,
    # which happens here to the first controller after the module is loaded
    # (address 00:00:00:00:00:00, no command answered): then btvirt starts again.
    for index in 0 1 2; do
        bring_up hci$index 10 || return 1
    done
    hci1=$(address hci1) hci2=$(address hci2)
    [[ -n $hci1 && -n $hci2 ]]
}
# bring_up DEV SECONDS: once the kernel's own first power-on is over, up for good.
bring_up() {
    set_up_within "$1" "$2" || return 1
    hciconfig "$1" up 2>/dev/null # "already up" if caught inside the kernel's own power-on: fine
    hciconfig "$1" | grep -q "UP RUNNING"
}
set_up_within() {
    local deadline=$(($(date +%s) + $2))
    until set_up "$1"; do
        (($(date +%s) < deadline)) || return 1
        sleep 0.1
    done
}
set_up() {
    local info flags
    info=$(hciconfig "$1") || return 1
    flags=$(sed -n 3p <<<"$info" | xargs)
    [[ $info != *"BD Address: 00:00:00:00:00:00"* && ($flags == "UP RUNNING"* || $flags == DOWN) ]]
}
# mgmt (bluetoothd's way in) lists all three controllers. btmgmt wants a terminal.
# btvirt's controllers removed and made anew.
restart_controllers() {
    pkill -TERM -x btvirt
    wait_gone /sys/class/bluetooth/hci0 10 && start_controllers && mgmt_sees_three
}
mgmt_sees_three() { [[ $(timeout 10 script -qfc "btmgmt info" /dev/null | grep -c "^hci[0-9]") -eq 3 ]]; }

# A system bus of the guest's own (the shipped policy is not installed on the host).
start_bus() {
    mkdir -p /run/dbus
    cat >"$work/bus.conf" <<EOF
<busconfig>
  <type>system</type>
  <listen>unix:path=/run/dbus/system_bus_socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow user="*"/><allow own="*"/><allow send_destination="*"/><allow receive_sender="*"/></policy>
</busconfig>
EOF
    rm -f /run/dbus/system_bus_socket # a stopped daemon's socket file must not pass for a listening one
    spawn dbus-daemon --config-file="$work/bus.conf" --nofork --nopidfile
    local deadline=$(($(date +%s) + 10))
    until [[ -S /run/dbus/system_bus_socket ]]; do
        (($(date +%s) < deadline)) || return 1
        sleep 0.1
    done
}

# Through a pipe, as a person would watch it: beacond flushes each line to a
# pipe (to a file it buffers), so the checks can read the lines as they come.
# The real bluetoothd, its debug log kept in the guest (on the shared folder it
# falls behind); returns once it has powered the adapters (btvirt's three unless named).
start_bluetoothd() {
    local log=$1 adapters=("${@:2}")
    ((${#adapters[@]})) || adapters=(hci0 hci1 hci2)
    mkdir -p /var/lib/bluetooth
    mountpoint -q /var/lib/bluetooth || mount -t tmpfs tmpfs /var/lib/bluetooth
    spawn bluetoothd -n -d >"$work/$log" 2>&1
    local deadline=$(($(date +%s) + 20)) adapter
    for adapter in "${adapters[@]}"; do
        until busctl --system get-property org.bluez /org/bluez/$adapter org.bluez.Adapter1 Powered 2>/dev/null | grep -q true; do
            (($(date +%s) < deadline)) || return 1
            sleep 0.2
        done
    done
}
# A D-Bus client of bluetoothd that keeps a discovery session open: the kernel's own LE scan.
discover() {
    spawn /usr/bin/python3 -c '
import sys, time, dbus
adapter = dbus.Interface(dbus.SystemBus().get_object("org.bluez", "/org/bluez/" + sys.argv[1]), "org.bluez.Adapter1")
adapter.StartDiscovery()
print("discovering", flush=True)
while True:
    time.sleep(60)
' "$1" > >(cat >"$work/discover.log") 2>&1
}
discovering() { busctl --system get-property org.bluez /org/bluez/hci0 org.bluez.Adapter1 Discovering | grep -q true; }

scan() { spawn beacond scan --source "$1" --json > >(cat >"$work/$scenario.json") 2> >(cat >"$work/$scenario.err"); }

# --- scenarios -----------------------------------------------------------

# Legacy and extended reports decoded with the right identity; the scan commands beacond sent.
scenario_hci() {
    spawn btmon -i hci0 -w "$work/hci.btsnoop" >/dev/null
    sleep 0.5 # btmon opens its monitor socket; what it misses is only the start
    scan hci:hci0
    check starts-extended-scan wait_for "$work/hci.err" "scanning resumed: hci0: scanning with extended LE commands" 15
    advertise 1 legacy
    check legacy-report-decoded wait_for "$work/hci.json" "$(sighting "$hci1")" 15
    advertise 2 extended
    check extended-report-decoded wait_for "$work/hci.json" "$(sighting "$hci2")" 15
    check rssi-127-is-no-reading no_reading "$work/hci.json"
    stop_all
    btmon -r "$work/hci.btsnoop" >"$work/hci.btmon" 2>&1
    # btmon shortens command names; the opcodes are exact. Lines "< HCI Command: … (0x08|0x0041) plen …".
    local sent=$work/hci.btmon
    check sent-extended-scan-commands grep -qE '^< HCI Command: .*\(0x08\|0x0042\) plen' "$sent"
    check passive-10ms bash -c "grep -A8 -E '^< HCI Command: .*\(0x08\|0x0041\) plen' '$sent' | tr -d '\n' | grep -qE 'Type: Passive.*Interval: 10.000 msec.*Window: 10.000 msec'"
    check no-duplicate-filter bash -c "grep -A2 -E '^< HCI Command: .*\(0x08\|0x0042\) plen' '$sent' | grep -A1 'Extended scan: Enabled' | grep -q 'Filter duplicates: Disabled'"
    check never-legacy-scan-commands bash -c "! grep -qE '^< HCI Command: .*\(0x08\|0x000[bc]\) plen' '$sent'"
    check both-report-kinds-on-air bash -c "grep -q 'LE Advertising Report (0x02)' '$sent' && grep -q 'LE Extended Advertising Report (0x0d)' '$sent'"
}

# The kernel's own scan (bluetoothd discovery for another client) running before
# beacond starts, then starting while beacond scans: beacond listens and keeps
# delivering, and never stops the other scan.
scenario_kernel-scan() {
    need start_bus || return 1
    check bluetoothd-powered-adapters start_bluetoothd kernel-scan-bluetoothd.log || return 1
    advertise 1 legacy
    discover hci0
    check kernel-discovery-running wait_for "$work/discover.log" "discovering" 20
    scan hci:hci0
    check listens-to-kernel-scan wait_for "$work/kernel-scan.err" "refused .* another LE scan is running .* Listening" 15
    check delivers-while-listening wait_for "$work/kernel-scan.json" "$(sighting "$hci1")" 20
    check kernel-scan-left-running discovering
    stop_all_but "${pids[0]}" # the bus stays; bluetoothd restarts below
    check bluetoothd-again start_bluetoothd kernel-scan-bluetoothd2.log || return 1
    advertise 1 legacy
    scan hci:hci0
    check scans-itself wait_for "$work/kernel-scan.err" "scanning with extended LE commands" 15
    check first-sightings wait_for "$work/kernel-scan.json" "$(sighting "$hci1")" 15
    discover hci0
    check kernel-discovery-started wait_for "$work/discover.log" "discovering" 20
    check sees-the-kernel-take-over wait_for "$work/kernel-scan.err" "another program sent .* listening" 15
    check delivers-after-kernel-took-over more_sightings "$work/kernel-scan.json" "$hci1" 20
    check kernel-scan-left-running discovering
}

# hciconfig down/up (slow and quick) and the controller removed: unavailable, available, sightings again, same process.
scenario_down-up() {
    # Controllers no earlier scenario touched: kernel-scan leaves the kernel's
    # scan and bluetoothd's settings on them, and once in a while beacond then
    # heard nothing from the advertiser for the first 15 s (a CI run, 2026-11-25).
    check fresh-controllers restart_controllers || return 1
    advertise 1 legacy
    scan hci:hci0
    local beacond=${pids[-1]}
    check first-sightings wait_for "$work/down-up.json" "$(sighting "$hci1")" 15
    hciconfig hci0 down
    check down-reported wait_for "$work/down-up.err" "scanning stopped: .*hci0" 10
    sleep 2 # the reported fault: down for 2 s, then up
    hciconfig hci0 up
    check up-reported wait_for "$work/down-up.err" "scanning resumed" 15 2
    check sightings-after-up more_sightings "$work/down-up.json" "$hci1" 15
    hciconfig hci0 down && hciconfig hci0 up
    check quick-down-up-reported wait_for "$work/down-up.err" "scanning resumed" 15 3
    check sightings-after-quick-down-up more_sightings "$work/down-up.json" "$hci1" 15
    local stopped
    stopped=$(lines "$work/down-up.err" "scanning stopped")
    stop_all_but "$beacond"
    pkill -TERM -x btvirt
    check controllers-removed wait_gone /sys/class/bluetooth/hci0 10
    check removal-reported wait_for "$work/down-up.err" "scanning stopped" 10 $((stopped + 1))
    check controllers-back start_controllers
    check mgmt-sees-three mgmt_sees_three
    advertise 1 legacy
    check back-after-removal wait_for "$work/down-up.err" "scanning resumed" 15 4
    check sightings-after-removal more_sightings "$work/down-up.json" "$hci1" 15
    check same-process kill -0 "$beacond"
}
stop_all_but() {
    local keep=$1 pid
    for pid in "${pids[@]}"; do [[ $pid == "$keep" ]] || kill -TERM "$pid" 2>/dev/null; done
    pids=("$keep")
}

# Scanning disabled behind beacond's back while the beacon goes on: a bounded re-issue brings reports back.
scenario_deaf() {
    advertise 1 legacy
    scan hci:hci0
    check first-sightings wait_for "$work/deaf.json" "$(sighting "$hci1")" 15
    check scan-disabled-behind-its-back /usr/bin/python3 "$here/hci_tool.py" stop-scan 0 extended
    check recovery-tried wait_for "$work/deaf.err" "re-issued the scan" 20
    check recovery-worked wait_for "$work/deaf.err" "advertisements came back" 15
    check sightings-after-recovery more_sightings "$work/deaf.json" "$hci1" 15
}

# The service on the guest's system bus with the hci source.
scenario_service() {
    need start_bus || return 1
    advertise 1 legacy
    # A bare hci: the adapter it opens (the guest has several; hci_get_route
    # chooses) is said on the bus (Adapter, Source) and in the log, the same one.
    spawn beacond --source hci --bus system --state-dir "$work/state" --config "$root/beacons.yaml" 2>"$work/service.log"
    check region-entered wait_for "$work/service.log" "region caffe-macs entered" 20
    beaconctl beacons >"$work/beacons.txt" 2>&1
    check beacon-listed grep -qE "^$UUID +1 +1 " "$work/beacons.txt"
    beaconctl nearest >"$work/nearest.txt" 2>&1
    echo "  beaconctl nearest: $(cat "$work/nearest.txt")"
    # btvirt reports RSSI 127 ("no reading"): presence, no distance, so no ranged venue.
    check nearest-without-distance grep -q "no venue: no venue is in range" "$work/nearest.txt"
    beaconctl regions >"$work/regions.txt" 2>&1
    check region-inside-over-dbus grep -qE "^caffe-macs +inside" "$work/regions.txt"
    beaconctl prefer counter-1 >/dev/null 2>&1
    beaconctl nearest >"$work/nearest.txt" 2>&1
    check nearest-is-the-preference grep -q "counter-1 .*your preferred venue" "$work/nearest.txt"
    check available-over-dbus bash -c "busctl --system get-property org.beacond /org/beacond org.beacond.Manager1 Available | grep -q 'b true'"
    local adapter
    adapter=$(busctl --system get-property org.beacond /org/beacond org.beacond.Manager1 Adapter | sed -n 's/^s "\(hci[0-9][0-9]*\)"$/\1/p')
    echo "  Adapter: ${adapter:-none}"
    check adapter-over-dbus test -n "$adapter"
    check source-over-dbus bash -c "busctl --system get-property org.beacond /org/beacond org.beacond.Manager1 Source | grep -qx 's \"hci:$adapter\"'"
    check source-opened-logged grep -q "source hci opened hci:$adapter" "$work/service.log"
    kill -TERM "${pids[1]}"
    local stopped
    stopped=$(now)
    check silent-source-flagged wait_for "$work/service.log" "not scanning: source hci:$adapter is up but has delivered no advertisement for" 45
    echo "  flagged silent $(since "$stopped") s after the beacon stopped"
    check unavailable-over-dbus bash -c "busctl --system get-property org.beacond /org/beacond org.beacond.Manager1 Available | grep -q 'b false'"
}

# The bluez source through the real bluetoothd.
scenario_bluez() {
    need start_bus || return 1
    check adapters-powered start_bluetoothd bluetoothd.log || return 1
    local bluetoothd=${pids[-1]}
    advertise 1 legacy 0.2
    scan bluez:hci0
    check discovery-filter-set wait_for "$work/bluetoothd.log" "set_discovery_filter" 15
    check sightings wait_for "$work/bluez.json" "$(sighting "$hci1")" 20
    kill -TERM "$bluetoothd"
    check bluetoothd-gone-reported wait_for "$work/bluez.err" "scanning stopped" 10
    spawn bluetoothd -n -d >"$work/bluetoothd2.log" 2>&1 # not start_bluetoothd: the restart is what is timed
    local restarted
    restarted=$(now)
    check scanning-again wait_for "$work/bluez.err" "scanning resumed" 15 2
    echo "  scanning again $(since "$restarted") s after bluetoothd restarted"
    check sightings-after-restart more_sightings "$work/bluez.json" "$hci1" 20
    bluetoothctl power off >/dev/null
    check power-off-reported wait_for "$work/bluez.err" "scanning stopped" 10 2
    bluetoothctl power on >/dev/null
    check power-on-reported wait_for "$work/bluez.err" "scanning resumed" 15 3
    check sightings-after-power-on more_sightings "$work/bluez.json" "$hci1" 20
    # The kernel's discovery scan disabled behind bluetoothd's back: beacond restarts its discovery after 30 s of quiet.
    check scan-disabled-behind-its-back /usr/bin/python3 "$here/hci_tool.py" stop-scan 0 extended
    check recovery-tried wait_for "$work/bluez.err" "restarted our discovery" 45
    check recovery-worked wait_for "$work/bluez.err" "advertisements came back after restarting discovery" 45
    check rssi-127-is-no-reading no_reading "$work/bluez.json"
}

# --- a controller with real RSSI (vhci_controller.py) -------------------
# Two beacons, counter 1 and counter 2 of beacons.yaml, heard with RSSI that
# follows a walk: next to counter 2 (-55 dBm, counter 1 at -75) until the
# controller gets SIGUSR1, then to counter 1 (the levels swap over 10 s).
COUNTER1=C0:FF:EE:00:00:01 COUNTER2=C0:FF:EE:00:00:02

# start_vhci legacy|extended [up]: the controller; sets $vhci (hciN) and $walker (its pid).
# With "up" it is brought up for the hci source; else bluetoothd powers it.
start_vhci() {
    spawn /usr/bin/python3 "$here/vhci_controller.py" "$1" $UUID $POWER "$MAJOR:1:$COUNTER1" "$MAJOR:2:$COUNTER2" \
        >"$work/$scenario.vhci" 2>"$work/$scenario.vhci.log"
    walker=${pids[-1]}
    wait_for "$work/$scenario.vhci" "^hci[0-9]+$" 10 || return 1
    vhci=$(cat "$work/$scenario.vhci")
    if [[ ${2:-} == up ]]; then bring_up "$vhci" 15; else set_up_within "$vhci" 15; fi
}
# The RSSI values of ADDRESS's sightings in FILE, one a line.
rssi_of() { grep -F "\"address\":\"$2\"" "$1" | sed -n 's/.*"rssi":\(-[0-9]*\),.*/\1/p'; }
# plausible_levels FILE: every reading of both beacons within the walk's levels and noise
# (-78..-52 dBm), never 127, and at least ten of each.
plausible_levels() {
    local address values
    for address in $COUNTER1 $COUNTER2; do
        values=$(rssi_of "$1" $address)
        (($(wc -l <<<"$values") >= 10)) || return 1
        awk '$1 < -78 || $1 > -52 { bad = 1 } END { exit bad }' <<<"$values" || return 1
    done
    ! grep -q '"rssi":127' "$1"
}
# nearer_than FILE NEAR FAR: NEAR's median RSSI at least 12 dB above FAR's (20 dB apart, +-3 dB noise).
nearer_than() { (($(median "$(rssi_of "$1" "$2")") >= $(median "$(rssi_of "$1" "$3")") + 12)); }
median() { sort -n <<<"$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# beacond scan through the kernel, with RSSI in extended reports: distances become possible.
scenario_rssi() {
    need start_vhci extended up || return 1
    scan "hci:$vhci"
    check starts-extended-scan wait_for "$work/rssi.err" "scanning resumed: $vhci: scanning with extended LE commands" 15
    check extended-reports-on wait_for "$work/rssi.vhci.log" "scanning on \(extended reports\)" 5
    check counter-1-with-rssi wait_for "$work/rssi.json" "$(ranged_sighting $COUNTER1 1)" 15 10
    check counter-2-with-rssi wait_for "$work/rssi.json" "$(ranged_sighting $COUNTER2 2)" 15 10
    check readings-plausible plausible_levels "$work/rssi.json"
    check counter-2-louder nearer_than "$work/rssi.json" $COUNTER2 $COUNTER1
    kill -TERM "${pids[-1]}" && reap "${pids[-1]}"
    check reports-stop-with-the-scan wait_for "$work/rssi.vhci.log" "scanning off" 5
    scan "hci:$vhci"
    check reports-again-with-a-new-scan wait_for "$work/rssi.vhci.log" "scanning on" 15 2
    check sightings-again wait_for "$work/rssi.json" "$(ranged_sighting $COUNTER2 2)" 15 3
}

# An extended advertisement that the controller reports in two pieces through
# the kernel, the other beacon's report between them: beacond joins the pieces
# (the iBeacon is in the second), and counts nothing malformed or unfinished.
scenario_chained() {
    need start_vhci chained up || return 1
    spawn btmon -i "$vhci" -w "$work/chained.btsnoop" >/dev/null
    sleep 0.5 # btmon opens its monitor socket; what it misses is only the start
    scan "hci:$vhci"
    check reports-in-pieces-on wait_for "$work/chained.vhci.log" "scanning on \(extended reports, the first beacon's in two pieces\)" 15
    check joined-counter-1 wait_for "$work/chained.json" "$(ranged_sighting $COUNTER1 1)" 15 5
    check counter-2-between-pieces wait_for "$work/chained.json" "$(ranged_sighting $COUNTER2 2)" 15 5
    stop_all
    sed 's/^/  /' "$work/chained.err"
    check nothing-malformed-or-unfinished grep -qE " iBeacons decoded, 0 malformed dropped, [0-9]+ advertisements/s" "$work/chained.err"
    btmon -r "$work/chained.btsnoop" >"$work/chained.btmon" 2>&1
    check pieces-through-the-kernel grep -q "Incomplete, more data to come" "$work/chained.btmon"
}

# nearest_is VENUE: beaconctl nearest answers VENUE with a distance.
nearest_is() {
    beaconctl nearest >"$work/nearest.txt" 2>&1
    echo "  beaconctl nearest: $(cat "$work/nearest.txt")"
    grep -qE "^$1 .* (immediate|near|far) [0-9.]+ m ±" "$work/nearest.txt"
}
# both_ranged: beaconctl beacons lists counter 1 and counter 2 with distances, RSSI and the power at 1 m.
both_ranged() {
    beaconctl beacons >"$work/beacons.txt" 2>&1
    sed 's/^/  /' "$work/beacons.txt"
    grep -qE "^$UUID +$MAJOR +1 +(immediate|near|far) +[0-9.]+ m +[0-9.]+ +-[0-9]+ +-[0-9]+ +counter-1" "$work/beacons.txt" &&
        grep -qE "^$UUID +$MAJOR +2 +(immediate|near|far) +[0-9.]+ m +[0-9.]+ +-[0-9]+ +-[0-9]+ +counter-2" "$work/beacons.txt"
}
# The service ranges: counter 2 nearest, the walk, counter 1 nearest. LOG is the service's log.
walk_and_range() {
    local log=$1 walked counter1="nearest venue: counter-1 .* [0-9.]+ m ±" before
    check nearest-counter-2-logged wait_for "$log" "nearest venue: counter-2 .* [0-9.]+ m ±" 30
    check nearest-counter-2 nearest_is counter-2
    check both-beacons-ranged both_ranged
    before=$(lines "$log" "$counter1") # counter 1 may have been nearest for a moment, alone, before counter 2 was heard
    kill -USR1 "$walker"
    walked=$(now)
    check nearest-counter-1-after-walk wait_for "$log" "$counter1" 40 $((before + 1))
    echo "  counter 1 nearest $(since "$walked") s after the walk began (10 s walk, 2 s dwell)"
    check nearest-counter-1 nearest_is counter-1
}

# The service with the hci source on a controller that lists only the legacy commands.
scenario_ranging() {
    need start_bus || return 1
    need start_vhci legacy up || return 1
    spawn beacond --source "hci:$vhci" --bus system --state-dir "$work/ranging-state" --config "$root/beacons.yaml" 2>"$work/ranging.log"
    check scans-with-legacy-commands wait_for "$work/ranging.log" "$vhci: scanning with legacy LE commands" 15
    check legacy-reports-on wait_for "$work/ranging.vhci.log" "scanning on \(legacy reports\)" 5
    walk_and_range "$work/ranging.log"
}

# The service with the bluez source: RSSI through the real bluetoothd.
scenario_bluez-ranging() {
    need start_bus || return 1
    need start_vhci extended || return 1
    check bluetoothd-powered-it start_bluetoothd bluez-ranging-bluetoothd.log "$vhci" || return 1
    spawn beacond --source "bluez:$vhci" --bus system --state-dir "$work/bluez-ranging-state" --config "$root/beacons.yaml" 2>"$work/bluez-ranging.log"
    check discovering-through-bluez wait_for "$work/bluez-ranging.log" "discovering through BlueZ on $vhci" 20
    check kernel-scans wait_for "$work/bluez-ranging.vhci.log" "scanning on \(extended reports\)" 10
    # The kernel hands bluetoothd each report's RSSI (mgmt Device Found), bluetoothd hands it on in Device1.
    check bluetoothd-gets-rssi wait_for "$work/bluez-ranging-bluetoothd.log" "device_found_callback\(\) $vhci addr $COUNTER2, rssi -[0-9]+ " 10
    walk_and_range "$work/bluez-ranging.log"
}

# Without CAP_NET_RAW/CAP_NET_ADMIN: the message names setcap and the unit's line.
scenario_unprivileged() {
    setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all --bounding-set=-all \
        beacond scan --source hci:hci0 >/dev/null 2>"$work/unprivileged.err"
    check refused-with-status [ $? -ne 0 ]
    check names-setcap grep -q "setcap cap_net_raw,cap_net_admin+eip" "$work/unprivileged.err"
    check names-unit-line grep -q "AmbientCapabilities=CAP_NET_RAW CAP_NET_ADMIN" "$work/unprivileged.err"
}

# --- main ----------------------------------------------------------------
booted=$(now)
say "# guest up: $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ {print int($2/1024)}' /proc/meminfo) MB; $(cut -d' ' -f1 /proc/uptime) s since boot"
scenario=setup
check load-hci_vhci modprobe hci_vhci
check three-controllers start_controllers
check mgmt-sees-three mgmt_sees_three
for scenario in "${scenarios[@]}"; do
    started=$(now)
    failures=0
    # Each scenario in a subshell with a deadline; its checks append to results.
    hci1=$(address hci1) hci2=$(address hci2)
    (
        trap 'stop_all; exit 143' TERM
        "scenario_$scenario"
        stop_all
    ) &
    runner=$!
    ( sleep 240; kill -TERM $runner 2>/dev/null ) &
    watchdog=$!
    wait $runner
    status=$?
    kill $watchdog 2>/dev/null
    [[ $status -eq 143 ]] && say "FAIL $scenario: did not finish within 240 s"
    say "# $scenario: $(since "$started") s"
    # Nothing of a scenario outlives it: the next starts from three controllers that are up.
    pkill -P $$ -x beacond 2>/dev/null
    hciconfig hci0 up 2>/dev/null
done
say "# scenarios: $(since "$booted") s; guest memory used $(free -m | awk '/Mem:/ {print $3}') MB"
# What each scenario left (logs, scan output, btmon captures), for reading after a failure.
cp -r "$work" "$out/guest-files" 2>/dev/null
say "done"
