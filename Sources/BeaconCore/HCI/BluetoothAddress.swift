/// A 48-bit Bluetooth device address.
///
/// Stored most significant byte first, as people write it (`D0:39:72:C9:C1:58`);
/// HCI carries it least significant byte first.
public struct BluetoothAddress: Hashable, Sendable, CustomStringConvertible {
    public var bytes: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8)

    public init(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8, _ b4: UInt8, _ b5: UInt8) {
        bytes = (b0, b1, b2, b3, b4, b5)
    }

    /// Reads the six little-endian bytes HCI uses, starting at `index`.
    init(littleEndian buffer: ArraySlice<UInt8>, at index: Int) {
        self.init(
            buffer[index + 5], buffer[index + 4], buffer[index + 3],
            buffer[index + 2], buffer[index + 1], buffer[index]
        )
    }

    /// Parses `AA:BB:CC:DD:EE:FF` (either case); `nil` for anything else.
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6 else { return nil }
        var values: [UInt8] = []
        for part in parts {
            guard part.count == 2, part.allSatisfy(\.isHexDigit), let value = UInt8(part, radix: 16) else { return nil }
            values.append(value)
        }
        self.init(values[0], values[1], values[2], values[3], values[4], values[5])
    }

    /// The six bytes in HCI's little-endian order.
    public var littleEndianBytes: [UInt8] {
        [bytes.5, bytes.4, bytes.3, bytes.2, bytes.1, bytes.0]
    }

    public static func == (lhs: BluetoothAddress, rhs: BluetoothAddress) -> Bool {
        lhs.bytes == rhs.bytes
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(bytes.0)
        hasher.combine(bytes.1)
        hasher.combine(bytes.2)
        hasher.combine(bytes.3)
        hasher.combine(bytes.4)
        hasher.combine(bytes.5)
    }

    public var description: String { String(capacity: 17, writing: write) }

    /// Writes `description`'s text, `AA:BB:CC:DD:EE:FF` (17 bytes).
    public func write(to text: inout TextWriter) {
        withUnsafeBytes(of: bytes) { bytes in
            for (index, byte) in bytes.enumerated() {
                if index > 0 { text.write(UInt8(ascii: ":")) }
                text.writeHex(byte)
            }
        }
    }
}

/// Two upper-case hex digits.
func hexByte(_ byte: UInt8) -> String {
    String(capacity: 2, writing: { $0.writeHex(byte) })
}
