#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Which beacons a region or venue means: a UUID, UUID+major, or
/// UUID+major+minor, as Core Location's `CLBeaconIdentityConstraint`.
public struct BeaconConstraint: Hashable, Sendable, CustomStringConvertible {
    public var uuid: UUID
    public var major: UInt16?
    /// Only with a major, as in Core Location.
    public var minor: UInt16?

    public init(uuid: UUID, major: UInt16? = nil, minor: UInt16? = nil) {
        precondition(minor == nil || major != nil, "a minor needs a major")
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }

    public func matches(_ identity: BeaconIdentity) -> Bool {
        identity.uuid == uuid
            && (major == nil || major == identity.major)
            && (minor == nil || minor == identity.minor)
    }

    /// True when some beacon matches both constraints.
    public func overlaps(_ other: BeaconConstraint) -> Bool {
        uuid == other.uuid
            && (major == nil || other.major == nil || major == other.major)
            && (minor == nil || other.minor == nil || minor == other.minor)
    }

    /// True when every beacon `other` matches, this matches too.
    public func contains(_ other: BeaconConstraint) -> Bool {
        uuid == other.uuid && (major == nil || major == other.major) && (minor == nil || minor == other.minor)
    }

    public var description: String {
        var text = uuid.uuidString
        if let major { text += "/\(major)" }
        if let minor { text += "/\(minor)" }
        return text
    }
}
