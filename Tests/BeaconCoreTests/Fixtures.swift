import Foundation
import Testing

@testable import BeaconCore

/// Test inputs: hex parsing, the Raspberry Pi log and where the real recordings live.
enum Fixtures {
    /// Parses `"3E 27 02 …"` (whitespace-separated hex pairs). Test inputs only: traps on typos.
    static func hex(_ text: String) -> [UInt8] {
        text.split(whereSeparator: { $0 == " " || $0 == "\n" }).map { token in
            guard token.count == 2, let byte = UInt8(token, radix: 16) else {
                preconditionFailure("bad hex token '\(token)' in a test fixture")
            }
            return byte
        }
    }

    /// The first event of `rpi-hcidump-ibeacon.raw`, without the leading H4 `04`:
    /// one ADV_IND from D0:39:72:C9:C1:58 (public), RSSI -68, an iBeacon
    /// A495DEAD-C5B1-4B44-B512-1370F02D74DE / 12345 / 65535, power -59.
    static let raspberryPiIBeaconEvent = hex(
        "3E 27 02 01 00 00 58 C1 C9 72 39 D0 1B 1A FF 4C 00 02 15 "
            + "A4 95 DE AD C5 B1 4B 44 B5 12 13 70 F0 2D 74 DE 30 39 FF FF C5 BC")

    /// The second event of the same log: the beacon's scan response (name "Ligt",
    /// a 128-bit service UUID, TX power level), RSSI -59. No iBeacon in it.
    static let raspberryPiScanResponseEvent = hex(
        "3E 27 02 01 04 00 58 C1 C9 72 39 D0 1B 05 09 4C 69 67 74 "
            + "11 06 DE 74 2D F0 70 13 12 B5 44 4B B1 C5 10 FF 95 A4 02 0A 04 C5")

    static let raspberryPiAddress = BluetoothAddress(0xD0, 0x39, 0x72, 0xC9, 0xC1, 0x58)
    static let lightBlueBeanUUID = UUID(uuidString: "A495DEAD-C5B1-4B44-B512-1370F02D74DE")!
    static let gimbalUUID = UUID(uuidString: "DAF246CE-8363-11E4-B116-123B93F75CBA")!
    static let estimoteUUID = UUID(uuidString: "B9407F30-F5F8-466E-AFF9-25556B57FE6D")!

    /// A real recording in `Tests/Data/` (sources and licences in its README),
    /// inside the repository so a clone on its own runs every test.
    static func recording(_ name: String) -> URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // BeaconCoreTests
            .deletingLastPathComponent()  // Tests
            .appendingPathComponent("Data/\(name)")
    }

    /// The same bytes at a non-zero start index, to catch code that assumes slices start at 0.
    static func offsetSlice(_ bytes: [UInt8], by padding: Int = 7) -> ArraySlice<UInt8> {
        let buffer = [UInt8](repeating: 0xEE, count: padding) + bytes + [0xEE, 0xEE, 0xEE]
        return buffer[padding..<(padding + bytes.count)]
    }
}

/// btsnoop bytes built by hand from PLATFORM-NOTES, independently of `BtsnoopWriter`.
enum SnoopBytes {
    /// Microseconds from btsnoop's year 0 to the Unix epoch (PLATFORM-NOTES: `0x00DCDDB30F2F8000`).
    static let unixEpoch: Int64 = 0x00DC_DDB3_0F2F_8000

    static func be32(_ value: UInt32) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
         UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }

    static func be64(_ value: Int64) -> [UInt8] {
        let bits = UInt64(bitPattern: value)
        return be32(UInt32(truncatingIfNeeded: bits >> 32)) + be32(UInt32(truncatingIfNeeded: bits))
    }

    static func header(version: UInt32 = 1, datalink: UInt32) -> [UInt8] {
        Array("btsnoop".utf8) + [0] + be32(version) + be32(datalink)
    }

    static func record(
        _ body: [UInt8], flags: UInt32, unixMicroseconds: Int64, originalLength: UInt32? = nil,
        includedLength: UInt32? = nil
    ) -> [UInt8] {
        be32(originalLength ?? UInt32(body.count)) + be32(includedLength ?? UInt32(body.count)) + be32(flags)
            + be32(0) + be64(unixMicroseconds + unixEpoch) + body
    }

    /// Monitor flags: controller index in the high 16 bits, opcode in the low 16.
    static func monitorFlags(index: UInt32 = 0, opcode: UInt32) -> UInt32 { index << 16 | opcode }
}
