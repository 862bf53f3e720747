/// Writes HCI events as a btsnoop capture, in any of the three datalinks.
///
/// Tests and benchmarks use it to make captures that `btmon -r` reads too;
/// the bytes are built in memory and written by the caller.
public struct BtsnoopWriter: Sendable {
    public let datalink: BtsnoopFormat.Datalink
    public private(set) var bytes: [UInt8]

    public init(datalink: BtsnoopFormat.Datalink) {
        self.datalink = datalink
        bytes = BtsnoopFormat.magic
        bytes.appendBigEndian(UInt32(1))
        bytes.appendBigEndian(datalink.rawValue)
        if datalink == .monitor {
            // btmon announces the controller first; readers expect it.
            var newIndex: [UInt8] = [0x00, 0x00]  // type primary, bus virtual
            newIndex.append(contentsOf: BluetoothAddress(0, 0, 0, 0, 0, 0).littleEndianBytes)
            newIndex.append(contentsOf: Array("hci0\0\0\0\0".utf8))
            append(record: newIndex, flags: BtsnoopFormat.MonitorOpcode.newIndex.rawValue, at: Timestamp(microsecondsSinceEpoch: 0))
        }
    }

    /// Appends one HCI event packet (`event code, length, parameters`).
    public mutating func append(event packet: [UInt8], at time: Timestamp) {
        switch datalink {
        case .monitor:
            append(record: packet, flags: BtsnoopFormat.MonitorOpcode.event.rawValue, at: time)
        case .hci:
            append(record: packet, flags: 0b11, at: time)
        case .h4:
            append(record: [BtsnoopFormat.h4EventType] + packet, flags: 0b11, at: time)
        }
    }

    private mutating func append(record: [UInt8], flags: UInt32, at time: Timestamp) {
        bytes.appendBigEndian(UInt32(record.count))
        bytes.appendBigEndian(UInt32(record.count))
        bytes.appendBigEndian(flags)
        bytes.appendBigEndian(UInt32(0))
        bytes.appendBigEndian(time.microsecondsSinceEpoch &+ BtsnoopFormat.epochOffset)
        bytes.append(contentsOf: record)
    }
}
