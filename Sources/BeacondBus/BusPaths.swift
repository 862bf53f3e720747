import BeaconCore
import BeacondAPI
import DBus

/// The object paths of org.beacond's objects, each element escaped as D-Bus requires.
public enum BusPaths {
    /// A region of `beacons.yaml` at `/org/beacond/region/<id>`; a client's
    /// under its owner, `/org/beacond/client/<owner>/<id>`, so the two never meet.
    public static func region(_ region: RegionDefinition) -> String {
        guard let owner = region.owner else { return "\(Beacond.Region1.configuredPath)/\(DBusNames.escapePathElement(region.id))" }
        return "\(Beacond.Region1.clientPath)/\(DBusNames.escapePathElement(owner))/\(DBusNames.escapePathElement(region.id))"
    }

    public static func venue(_ id: String) -> String { "\(Beacond.Venue1.path)/\(DBusNames.escapePathElement(id))" }

    /// The venue id of a Venue1 path; `nil` for `/` or any other path.
    public static func venueID(_ path: String) -> String? {
        guard path.hasPrefix(Beacond.Venue1.path + "/") else { return nil }
        return DBusNames.unescapePathElement(path.dropFirst(Beacond.Venue1.path.count + 1))
    }

    /// `/org/beacond/beacon/<uuid hex>_<major>_<minor>`.
    public static func beacon(_ identity: BeaconIdentity) -> String {
        let hex = identity.uuid.uuidString.lowercased().split(separator: "-").joined()
        return "\(Beacond.Beacon1.path)/\(hex)_\(identity.major)_\(identity.minor)"
    }
}
