#!/usr/bin/python3
"""Raw HCI commands for the real-stack harness, from inside the guest.

  hci_tool.py advertise DEV legacy|extended UUID MAJOR MINOR POWER PERIOD
      Advertises an iBeacon from controller DEV until killed. btvirt sends one
      report each time advertising is enabled (not one per interval), so the
      advertiser switches advertising off and on every PERIOD seconds.
  hci_tool.py stop-scan DEV legacy|extended
      Disables LE scanning behind the back of whoever enabled it (beacond):
      the "radio gone deaf" the source must notice and recover from.

Every command waits for the controller's answer and fails loudly on a
non-zero status, so a broken step is a clear error, not a silent no-op.
"""
import signal
import socket
import struct
import sys
import time
import uuid as uuidlib

COMMAND_COMPLETE, COMMAND_STATUS = 0x0E, 0x0F


class ControllerError(Exception):
    """The controller refused a command or did not answer."""


class Controller:
    def __init__(self, dev):
        self.sock = socket.socket(socket.AF_BLUETOOTH, socket.SOCK_RAW | socket.SOCK_CLOEXEC, socket.BTPROTO_HCI)
        self.sock.bind((dev,))
        # Events only: Command Complete and Command Status.
        mask = (1 << COMMAND_COMPLETE) | (1 << COMMAND_STATUS)
        self.sock.setsockopt(socket.SOL_HCI, socket.HCI_FILTER, struct.pack("<IIIHxx", 1 << 4, mask, 0, 0))
        self.sock.settimeout(2.0)

    def command(self, opcode, parameters=b""):
        self.sock.send(struct.pack("<BHB", 1, opcode, len(parameters)) + parameters)
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            packet = self.sock.recv(260)
            if packet[0] != 4:
                continue
            if packet[1] == COMMAND_COMPLETE and struct.unpack_from("<H", packet, 4)[0] == opcode:
                status = packet[6] if len(packet) > 6 else 0
            elif packet[1] == COMMAND_STATUS and struct.unpack_from("<H", packet, 5)[0] == opcode:
                status = packet[3]
            else:
                continue
            if status != 0:
                raise ControllerError(f"hci_tool: command 0x{opcode:04x} failed with status 0x{status:02x}")
            return
        raise ControllerError(f"hci_tool: no answer to command 0x{opcode:04x}")


def ibeacon(uuid, major, minor, power):
    payload = b"\x02\x15" + uuidlib.UUID(uuid).bytes + struct.pack(">HHb", major, minor, power)
    return b"\x02\x01\x06" + bytes([len(payload) + 3, 0xFF]) + b"\x4c\x00" + payload


def advertise(dev, kind, data, period):
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    while not stopping:
        # A controller powered off and on (bluetoothd, hciconfig) has forgotten
        # the advertising set up: set it up again once it is back.
        try:
            enable = set_up(Controller(dev), kind, data)
            while not stopping:
                enable(1)
                time.sleep(period / 2)
                enable(0)
                time.sleep(period / 2)
        except (OSError, ControllerError):
            time.sleep(0.2)


def set_up(controller, kind, data):
    if kind == "legacy":
        # ADV_NONCONN_IND every 100 ms on all three channels.
        controller.command(0x2006, struct.pack("<HHBBB6sBB", 0xA0, 0xA0, 3, 0, 0, b"\0" * 6, 7, 0))
        controller.command(0x2008, bytes([len(data)]) + data.ljust(31, b"\0"))
        return lambda on: controller.command(0x200A, bytes([on]))
    # Set 0, non-connectable non-scannable extended advertising (not a legacy PDU), 1M PHYs.
    parameters = struct.pack("<BH", 0, 0) + (0xA0).to_bytes(3, "little") * 2
    parameters += struct.pack("<BBB6sBbBBBBB", 7, 0, 0, b"\0" * 6, 0, 127, 1, 0, 1, 0, 0)
    controller.command(0x2036, parameters)
    controller.command(0x2037, struct.pack("<BBBB", 0, 3, 1, len(data)) + data)
    return lambda on: controller.command(0x2039, struct.pack("<BBBHB", on, 1, 0, 0, 0))


def main(argv):
    if len(argv) >= 9 and argv[1] == "advertise":
        _, _, dev, kind, uuid, major, minor, power, period = argv[:9]
        advertise(int(dev), kind, ibeacon(uuid, int(major), int(minor), int(power)), float(period))
    elif len(argv) == 4 and argv[1] == "stop-scan":
        controller = Controller(int(argv[2]))
        try:
            if argv[3] == "legacy":
                controller.command(0x200C, b"\0\0")
            else:
                controller.command(0x2042, struct.pack("<BBHH", 0, 0, 0, 0))
        except ControllerError as error:
            raise SystemExit(str(error))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
