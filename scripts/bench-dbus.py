#!/usr/bin/python3
"""Round-trip latency of beacond's GetNearestVenue beside org.freedesktop.DBus.Peer.Ping
to the same service in the same run, at 1, 100 and 1,000 calls per second.

Starts a private dbus-daemon and `beacond --source simulate` on it, waits until
beacond has an answer, then for each rate sends calls on a fixed schedule
(alternating the two methods) and reports p50/p99 of each and their ratio.
With `raw`, each call is a low-level message and its reply is not decoded:
the times leave out python-dbus turning the reply's arguments into Python
objects (large for GetNearestVenue's a{sv}, nothing for Ping's empty reply),
so the two differ only by what the service does.
Usage: scripts/bench-dbus.py [path/to/beacond] [seconds per rate] [raw]
"""
import os, subprocess, sys, tempfile, time, statistics

import dbus
import dbus.lowlevel

beacond = sys.argv[1] if len(sys.argv) > 1 else ".build/release/beacond"
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
raw = len(sys.argv) > 3 and sys.argv[3] == "raw"
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

work = tempfile.mkdtemp(prefix="beacond-bench-")
config = os.path.join(work, "bus.conf")
with open(config, "w") as f:
    f.write(f"""<busconfig><type>session</type><listen>unix:path={work}/bus</listen><auth>EXTERNAL</auth>
<policy context="default"><allow user="*"/><allow own="*"/><allow send_type="method_call"/><allow send_type="signal"/>
<allow send_type="method_return"/><allow send_type="error"/><allow receive_type="method_call"/><allow receive_type="signal"/>
<allow receive_type="method_return"/><allow receive_type="error"/></policy></busconfig>""")
daemon = subprocess.Popen(["dbus-daemon", f"--config-file={config}", "--nofork", "--print-address=1"],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
address = daemon.stdout.readline().strip()
service = subprocess.Popen([beacond, "--bus", address, "--source", "simulate", "--state-dir", work,
                            "--config", os.path.join(root, "beacons.yaml"), "--log-level", "warning"])
try:
    bus = dbus.bus.BusConnection(address)
    deadline = time.monotonic() + 30
    while not bus.name_has_owner("org.beacond"):
        if time.monotonic() > deadline:
            sys.exit("beacond did not start")
        time.sleep(0.05)
    proxy = bus.get_object("org.beacond", "/org/beacond", introspect=False)
    nearest = proxy.get_dbus_method("GetNearestVenue", "org.beacond.Manager1")
    ping = proxy.get_dbus_method("Ping", "org.freedesktop.DBus.Peer")
    if raw:
        owner = bus.get_name_owner("org.beacond")

        def undecoded(interface, member):
            def call(timeout):
                message = dbus.lowlevel.MethodCallMessage(owner, "/org/beacond", interface, member)
                reply = bus.send_message_with_reply_and_block(message, timeout)
                assert reply.get_type() == 2, reply.get_error_name()
            return call

        nearest = undecoded("org.beacond.Manager1", "GetNearestVenue")
        ping = undecoded("org.freedesktop.DBus.Peer", "Ping")
    proxy.get_dbus_method("RequestNearestVenue", "org.beacond.Manager1")(dbus.UInt32(20000), timeout=30)

    def percentile(values, p):
        values = sorted(values)
        return values[min(len(values) - 1, int(p / 100 * len(values)))]

    print(f"{'rate':>8} {'calls':>6} {'GetNearestVenue p50':>20} {'p99':>9} {'Ping p50':>9} {'p99':>9} {'ratio p50':>10} {'ratio p99':>10}")
    for rate in (1, 100, 1000):
        count = max(4, int(rate * seconds))
        times = {"nearest": [], "ping": []}
        start = time.monotonic()
        for i in range(count):
            due = start + i / rate
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            which, method = ("nearest", nearest) if i % 2 == 0 else ("ping", ping)
            t0 = time.perf_counter()
            method(timeout=5)
            times[which].append((time.perf_counter() - t0) * 1e6)
        n50, n99 = percentile(times["nearest"], 50), percentile(times["nearest"], 99)
        p50, p99 = percentile(times["ping"], 50), percentile(times["ping"], 99)
        print(f"{rate:>6}/s {count:>6} {n50:>17.0f} µs {n99:>6.0f} µs {p50:>6.0f} µs {p99:>6.0f} µs {n50 / p50:>10.2f} {n99 / p99:>10.2f}")
finally:
    service.terminate()
    service.wait()
    daemon.kill()
