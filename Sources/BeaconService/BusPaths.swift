import BeaconCore
import DBus

/// Object paths of the API (SPEC section 6), each element escaped as D-Bus requires.
public enum BusPaths {
    public static let root = "/org/beacond"
    public static let busName = "org.beacond"

    /// A region of `beacons.yaml` at `/org/beacond/region/<id>`; a client's
    /// under its owner, `/org/beacond/client/<owner>/<id>`, so the two never meet.
    public static func region(_ region: RegionDefinition) -> String {
        guard let owner = region.owner else { return "\(root)/region/\(DBusNames.escapePathElement(region.id))" }
        return "\(root)/client/\(DBusNames.escapePathElement(owner))/\(DBusNames.escapePathElement(region.id))"
    }
    public static func venue(_ id: String) -> String { "\(root)/venue/\(DBusNames.escapePathElement(id))" }

    /// `/org/beacond/beacon/<uuid hex>_<major>_<minor>`.
    public static func beacon(_ identity: BeaconIdentity) -> String {
        let hex = identity.uuid.uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        return "\(root)/beacon/\(hex)_\(identity.major)_\(identity.minor)"
    }
}

/// The errors of the API, named as in SPEC section 6.
public enum BeacondError {
    public static func noVenue(_ message: String) -> DBusError { DBusError("org.beacond.Error.NoVenue", message) }
    public static func locationUnknown(_ message: String) -> DBusError { DBusError("org.beacond.Error.LocationUnknown", message) }
    public static func invalidConfig(_ message: String) -> DBusError { DBusError("org.beacond.Error.InvalidConfig", message) }
    public static func unknownRegion(_ message: String) -> DBusError { DBusError("org.beacond.Error.UnknownRegion", message) }
    public static func unknownVenue(_ message: String) -> DBusError { DBusError("org.beacond.Error.UnknownVenue", message) }
    public static func regionExists(_ message: String) -> DBusError { DBusError("org.beacond.Error.RegionExists", message) }
    public static func tooManyRegions(_ message: String) -> DBusError { DBusError("org.beacond.Error.TooManyRegions", message) }
    public static func notOwner(_ message: String) -> DBusError { DBusError("org.beacond.Error.NotOwner", message) }
    public static func invalidArguments(_ message: String) -> DBusError { DBusError("org.beacond.Error.InvalidArguments", message) }
    /// A change that could not be written to the state directory, and so was not made.
    public static func stateNotSaved(_ message: String) -> DBusError { DBusError("org.beacond.Error.StateNotSaved", message) }
}

private extension String {
    func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: Character(target), omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
