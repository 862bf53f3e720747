#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What identifies an iBeacon: proximity UUID, major and minor.
///
/// Never the sender's address: phones and many beacons rotate it.
public struct BeaconIdentity: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var uuid: UUID
    public var major: UInt16
    public var minor: UInt16

    public init(uuid: UUID, major: UInt16, minor: UInt16) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }

    /// By `uuidString`, then major and minor. The string is the bytes in
    /// order as upper-case hex (digits sort before A–F, the dashes stand at
    /// the same places), so the bytes compare as the strings would, without
    /// making two strings per comparison (sorting 1,000 ranged beacons made 20,000).
    public static func < (lhs: BeaconIdentity, rhs: BeaconIdentity) -> Bool {
        let (left, right) = (lhs.uuidHalves, rhs.uuidHalves)
        return (left.high, left.low, lhs.major, lhs.minor) < (right.high, right.low, rhs.major, rhs.minor)
    }

    /// Hashes the UUID as two words: `UUID`'s own hash goes through the
    /// hasher's byte-buffer path, slower, and every sighting hashes its identity.
    public func hash(into hasher: inout Hasher) {
        let halves = uuidHalves
        hasher.combine(halves.high)
        hasher.combine(halves.low)
        hasher.combine(UInt32(major) << 16 | UInt32(minor))
    }

    /// The UUID's bytes as two big-endian words: compared as numbers, they order as the bytes do.
    private var uuidHalves: (high: UInt64, low: UInt64) {
        withUnsafeBytes(of: uuid.uuid) { bytes in
            (
                UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)),
                UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            )
        }
    }

    /// `UUID/major/minor`, as people write beacons in logs.
    public var description: String { "\(uuid.uuidString)/\(major)/\(minor)" }
}

extension TextWriter {
    /// Writes `uuid.uuidString`'s text (upper-case, 8-4-4-4-12: 36 bytes) without making the string.
    public mutating func writeUUID(_ uuid: UUID) {
        withUnsafeBytes(of: uuid.uuid) { bytes in
            for (index, byte) in bytes.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 { write(UInt8(ascii: "-")) }
                writeHex(byte)
            }
        }
    }
}
