#!/usr/bin/python3
"""A userspace LE controller on /dev/vhci that hears two iBeacons with real RSSI.

  vhci_controller.py legacy|extended|chained UUID POWER MAJOR:MINOR:ADDRESS MAJOR:MINOR:ADDRESS [--seed N]

btvirt's reports always carry RSSI 127 ("not available"); this controller
gives the kernel's Bluetooth stack, and so beacond and bluetoothd, a distance
to range. It registers a primary, LE-only controller with the kernel (vhci's
vendor packet), answers the kernel's initialisation and later commands
(bluetoothd's, beacond's) like a controller of HCI 5.0, and while LE scanning
is enabled emits an advertising report for each of the two beacons ten times
a second: legacy reports (0x02) when the host scans with the legacy commands,
extended reports (0x0D, legacy PDU) when it uses the extended ones. With
`legacy` it lists no extended scanning (like a Raspberry Pi 4's controller);
with `extended` it lists the extended scan and advertising commands and the
extended advertising feature, so the kernel and beacond use those.
`chained` is `extended`, except that the first beacon sends an extended
advertisement (not a legacy PDU, set 1) of 282 bytes, 250 of service data
before its iBeacon, which the controller reports in two pieces as a
controller reports an AUX_CHAIN_IND chain: the first 200 bytes "incomplete,
more to come", then the rest "complete", the second beacon's report between
them.

The RSSI follows a walk: standing next to the second beacon (-55 dBm, the
first at -75) until SIGUSR1, then walking to the first over WALK_SECONDS (the
levels swap), plus seeded pseudo-random noise of up to NOISE_DB per report:
the same draws every run, though which report gets which draw, and where the
walk is at each report, follow the guest's timing. Every report is sent whatever the duplicate
filter says.

Prints `hciN` on stdout once the kernel has registered the controller, then
one line on stderr per command and per change of scanning or of the walk.
Runs until SIGTERM; closing /dev/vhci removes the controller.
"""
import os
import random
import select
import signal
import struct
import sys
import time
import uuid as uuidlib

WALK_SECONDS = 10.0
NEAR_DBM, FAR_DBM = -55.0, -75.0
NOISE_DB = 3
REPORT_PERIOD = 0.1

COMMAND_PACKET, EVENT_PACKET, VENDOR_PACKET = 0x01, 0x04, 0xFF
COMMAND_COMPLETE, LE_META = 0x0E, 0x3E
UNKNOWN_COMMAND, COMMAND_DISALLOWED = 0x01, 0x0C


def supported_commands(extended):
    """Read Local Supported Commands: only what this controller answers, so the
    kernel sends nothing it would have to refuse ((octet, bit) per the Core spec)."""
    bits = [
        (5, 6), (5, 7),  # Set Event Mask, Reset
        (14, 3), (14, 5), (15, 1),  # Read Local Version, Read Local Features, Read BD_ADDR
        (25, 0), (25, 1), (25, 2), (25, 4),  # LE Set Event Mask, Read Buffer Size, Read Local Features, Set Random Address
        (28, 3),  # LE Read Supported States
    ]
    if extended:
        bits += [(36, 1), (36, 2), (36, 3), (36, 4), (36, 5), (36, 7), (37, 0), (37, 1), (37, 5), (37, 6)]
    else:
        bits += [(25, 5), (25, 7), (26, 0), (26, 1), (26, 2), (26, 3)]
    bitmap = bytearray(64)
    for octet, bit in bits:
        bitmap[octet] |= 1 << bit
    return bytes(bitmap)


class Beacon:
    def __init__(self, spec, uuid, power):
        major, minor, address = spec.split(":", 2)
        self.address = address.upper()
        payload = b"\x02\x15" + uuidlib.UUID(uuid).bytes + struct.pack(">HHb", int(major), int(minor), power)
        self.data = b"\x02\x01\x06" + bytes([len(payload) + 3, 0xFF]) + b"\x4c\x00" + payload
        # Over the air least significant byte first.
        self.address_bytes = bytes(int(part, 16) for part in reversed(self.address.split(":")))


class Walk:
    """Where the listener stands: next to the second beacon, then walking to the first."""

    def __init__(self, seed):
        self.random = random.Random(seed)
        self.started = None
        self.announce = False  # set by the signal handler, logged by the loop

    def start(self, now):
        if self.started is None:
            self.started = now
            self.announce = True

    def rssi(self, beacon_index, now):
        progress = 0.0 if self.started is None else min(1.0, (now - self.started) / WALK_SECONDS)
        near_first = FAR_DBM + (NEAR_DBM - FAR_DBM) * progress  # the first beacon comes nearer
        level = near_first if beacon_index == 0 else NEAR_DBM + FAR_DBM - near_first
        return int(round(level)) + self.random.randint(-NOISE_DB, NOISE_DB)


class Controller:
    def __init__(self, scan_family, beacons, walk, log):
        self.extended = scan_family in ("extended", "chained")
        self.chained = scan_family == "chained"
        self.next_piece = 0  # of the first beacon's chained advertisement
        self.beacons = beacons
        self.walk = walk
        self.log = log
        self.address = bytes([0x00, 0x00, 0x00, 0xC5, 0xEA, 0xB5])  # B5:EA:C5:00:00:00
        self.scanning = None  # "legacy" or "extended" while LE scanning is enabled
        self.next_report = 0.0
        self.sent = 0
        self.fd = os.open("/dev/vhci", os.O_RDWR)

    def register(self):
        """Vendor packet 0xff with device type 0 (primary): the kernel answers
        0xff, the type and the new controller's index (no packet-type byte before it)."""
        os.write(self.fd, bytes([VENDOR_PACKET, 0x00]))
        while True:
            readable, _, _ = select.select([self.fd], [], [], 5.0)
            if not readable:
                raise SystemExit("vhci_controller: the kernel did not register the controller within 5 s")
            packet = os.read(self.fd, 1024)
            if len(packet) == 4 and packet[0] == VENDOR_PACKET:
                return struct.unpack_from("<H", packet, 2)[0]
            self.handle(packet)  # the kernel may already be initialising it

    def run(self):
        while True:
            now = time.monotonic()
            timeout = max(0.0, self.next_report - now) if self.scanning else 1.0
            readable, _, _ = select.select([self.fd], [], [], timeout)
            if readable:
                self.handle(os.read(self.fd, 1024))
            if self.walk.announce:
                self.walk.announce = False
                self.log(f"walking from the second beacon to the first over {WALK_SECONDS:.0f} s")
            if self.scanning and time.monotonic() >= self.next_report:
                self.report(time.monotonic())

    def report(self, now):
        # The two beacons' advertisements 50 ms apart, each every 100 ms.
        index = self.sent % len(self.beacons)
        self.event(LE_META, self.advertising_report(index, self.walk.rssi(index, now)))
        self.sent += 1
        self.next_report += REPORT_PERIOD / len(self.beacons)
        if self.next_report < now:  # a stall (the guest is busy): no burst to catch up
            self.next_report = now + REPORT_PERIOD / len(self.beacons)

    def advertising_report(self, index, rssi):
        beacon = self.beacons[index]
        signed = struct.pack("<b", rssi)
        if self.scanning == "legacy":
            # One report: ADV_NONCONN_IND, public address.
            return bytes([0x02, 1, 0x03, 0x00]) + beacon.address_bytes + bytes([len(beacon.data)]) + beacon.data + signed
        if self.chained and index == 0:
            # A piece of a non-connectable, non-scannable extended advertisement: 1M PHYs, set 1.
            data = b"\x02\x01\x06" + bytes([0xFB, 0x16, 0xAA, 0xFE]) + bytes([0x5A] * 248) + beacon.data[3:]
            pieces = [(0x0020, data[:200]), (0x0000, data[200:])]  # incomplete, more to come; complete
            event_type, piece = pieces[self.next_piece]
            self.next_piece = (self.next_piece + 1) % len(pieces)
            return self.extended_report(event_type, beacon, 0x01, 0x01, 0x01, signed, piece)
        # One extended report of a legacy ADV_NONCONN_IND PDU: 1M PHY, no SID, no TX power, not directed.
        return self.extended_report(0x0010, beacon, 0x01, 0x00, 0xFF, signed, beacon.data)

    @staticmethod
    def extended_report(event_type, beacon, primary_phy, secondary_phy, sid, signed_rssi, data):
        """One LE Extended Advertising Report: no TX power, no periodic advertising, not directed."""
        return (
            bytes([0x0D, 1]) + struct.pack("<H", event_type) + bytes([0x00]) + beacon.address_bytes
            + bytes([primary_phy, secondary_phy, sid, 0x7F]) + signed_rssi + struct.pack("<H", 0) + bytes(7)
            + bytes([len(data)]) + data
        )

    def event(self, code, parameters):
        os.write(self.fd, bytes([EVENT_PACKET, code, len(parameters)]) + parameters)

    def complete(self, opcode, status, returned=b""):
        self.event(COMMAND_COMPLETE, bytes([1]) + struct.pack("<H", opcode) + bytes([status]) + returned)

    def handle(self, packet):
        if not packet or packet[0] != COMMAND_PACKET or len(packet) < 4:
            return
        opcode = struct.unpack_from("<H", packet, 1)[0]
        parameters = packet[4:4 + packet[3]]
        status, returned = self.answer(opcode, parameters)
        self.log(f"command 0x{opcode:04x} {parameters.hex()} -> status 0x{status:02x}")
        self.complete(opcode, status, returned)

    def answer(self, opcode, parameters):
        """(status, return parameters after the status) for one command."""
        fixed = {
            0x0C01: b"",  # Set Event Mask
            0x1001: struct.pack("<BHBHH", 0x09, 0, 0x09, 0x05F1, 0),  # Read Local Version: HCI/LMP 5.0, Linux Foundation
            0x1002: supported_commands(self.extended),
            0x1003: bytes([0, 0, 0, 0, 0x60, 0, 0, 0]),  # LMP features: LE supported, BR/EDR not supported
            0x1009: self.address,
            0x2001: b"",  # LE Set Event Mask
            0x2002: struct.pack("<HB", 251, 8),  # LE Read Buffer Size
            # LE features: extended advertising (bit 12) when it scans the extended way.
            0x2003: bytes([0, 0x10 if self.extended else 0, 0, 0, 0, 0, 0, 0]),
            0x2005: b"",  # LE Set Random Address
            0x201C: bytes([0xFF] * 5 + [0x03, 0, 0]),  # LE Read Supported States
        }
        advertising = {
            "legacy": {0x2006: b"", 0x2008: b"", 0x2009: b"", 0x200A: b""},
            "extended": {
                0x2035: b"", 0x2036: bytes([0]), 0x2037: b"", 0x2038: b"", 0x2039: b"",
                0x203B: bytes([4]), 0x203C: b"", 0x203D: b"",
            },
        }["extended" if self.extended else "legacy"]
        if opcode == 0x0C03:  # Reset: scanning stops
            self.set_scanning(None)
            return 0, b""
        if opcode in fixed:
            return 0, fixed[opcode]
        if opcode in advertising:
            return 0, advertising[opcode]
        family = {0x200B: "legacy", 0x200C: "legacy", 0x2041: "extended", 0x2042: "extended"}.get(opcode)
        if family is None or (family == "extended" and not self.extended):
            return UNKNOWN_COMMAND, b""
        if opcode in (0x200B, 0x2041):
            # Scan parameters cannot change while scanning (Core spec: Command Disallowed).
            return (COMMAND_DISALLOWED if self.scanning else 0), b""
        self.set_scanning(family if parameters[:1] == b"\x01" else None)
        return 0, b""

    def set_scanning(self, family):
        if family == self.scanning:
            return
        self.scanning = family
        self.next_report = time.monotonic()
        pieces = ", the first beacon's in two pieces" if self.chained and family == "extended" else ""
        self.log(f"scanning {'on (' + family + ' reports' + pieces + ')' if family else 'off'}")


def main(argv):
    if len(argv) < 6 or argv[1] not in ("legacy", "extended", "chained"):
        raise SystemExit(__doc__)
    seed = int(argv[argv.index("--seed") + 1]) if "--seed" in argv else 1
    beacons = [Beacon(spec, argv[2], int(argv[3])) for spec in argv[4:6]]

    def log(line):
        print(f"{time.monotonic():.3f} {line}", file=sys.stderr, flush=True)

    walk = Walk(seed)
    signal.signal(signal.SIGTERM, stop)

    signal.signal(signal.SIGUSR1, lambda *_: walk.start(time.monotonic()))
    controller = Controller(argv[1], beacons, walk, log)
    print(f"hci{controller.register()}", flush=True)
    controller.run()


def stop(*_):
    """SIGTERM: also out of a blocking read. Closing /dev/vhci removes the controller."""
    raise SystemExit(0)


if __name__ == "__main__":
    main(sys.argv)
