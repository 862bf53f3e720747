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

    public static func < (lhs: BeaconIdentity, rhs: BeaconIdentity) -> Bool {
        (lhs.uuid.uuidString, lhs.major, lhs.minor) < (rhs.uuid.uuidString, rhs.major, rhs.minor)
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
