/// The btsnoop file format: facts shared by the reader and the writer.
///
/// A 16-byte header (`btsnoop\0`, version, datalink), then records with a
/// 24-byte big-endian header: original length, included length, flags,
/// cumulative drops, timestamp in microseconds since year 0.
public enum BtsnoopFormat {
    public static let magic: [UInt8] = Array("btsnoop\0".utf8)
    public static let headerSize = 16
    public static let recordHeaderSize = 24
    /// Microseconds from 0000-01-01 to the Unix epoch, as btsnoop counts.
    public static let epochOffset: Int64 = 0x00DC_DDB3_0F2F_8000
    /// No HCI packet is larger than an ACL packet of 65535 bytes plus headers.
    static let largestRecord = 65_535 + 8

    public enum Datalink: UInt32, Sendable {
        /// HCI packets without the H4 type byte; flags carry direction and command/event.
        case hci = 1001
        /// HCI packets with the H4 type byte first (Android HCI snoop logs).
        case h4 = 1002
        /// BlueZ's monitor channel, as `btmon -w` writes: flags carry index and opcode.
        case monitor = 2001
    }

    /// BlueZ monitor opcodes (datalink 2001) this project reads or writes.
    enum MonitorOpcode: UInt32 {
        case newIndex = 0
        case command = 2
        case event = 3
    }

    static let h4EventType: UInt8 = 0x04
}

extension ArraySlice<UInt8> {
    func bigEndianUInt32(at index: Int) -> UInt32 {
        UInt32(self[index]) << 24 | UInt32(self[index + 1]) << 16 | UInt32(self[index + 2]) << 8 | UInt32(self[index + 3])
    }

    func bigEndianInt64(at index: Int) -> Int64 {
        Int64(bitPattern: UInt64(bigEndianUInt32(at: index)) << 32 | UInt64(bigEndianUInt32(at: index + 4)))
    }
}

extension Array<UInt8> {
    mutating func appendBigEndian(_ value: UInt32) {
        append(contentsOf: [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)])
    }

    mutating func appendBigEndian(_ value: Int64) {
        let bits = UInt64(bitPattern: value)
        appendBigEndian(UInt32(bits >> 32))
        appendBigEndian(UInt32(bits & 0xFFFF_FFFF))
    }
}
