import BeaconCore
import BeaconSources
import DBus

/// The API's dictionaries: the nearest venue and a ranged beacon as `a{sv}`.
enum BusValues {
    static func venue(_ venue: NearestVenue, now: Timestamp) -> DBusValue {
        let beacon = venue.beacon
        return .vardict([
            ("id", .string(venue.venueID)),
            ("name", .string(venue.name)),
            ("proximity", .string(venue.proximity.rawValue)),
            ("distance", .double(venue.distance)),
            ("accuracy", .double(beacon?.accuracy ?? -1)),
            ("rssi", .double(beacon?.filteredRSSI ?? 0)),
            ("age_ms", .uint64(UInt64(max(0, beacon.map { (now - $0.lastSeen).microseconds / 1000 } ?? 0)))),
            ("source", .string(venue.source.rawValue)),
            ("beacon", .objectPath(beacon.map { BusPaths.beacon($0.identity) } ?? "/")),
            ("runner_up", .string(venue.runnerUpID ?? "")),
            ("margin", .double(venue.margin)),
            ("stationary", .boolean(venue.isStationary)),
        ])
    }

    /// Beacon1's properties, in declaration order.
    static func beaconProperties(_ beacon: RangedBeacon) -> [(String, DBusValue)] {
        [
            ("Uuid", .string(beacon.identity.uuid.uuidString)),
            ("Major", .uint16(beacon.identity.major)),
            ("Minor", .uint16(beacon.identity.minor)),
            ("Rssi", .int16(Int16(beacon.rssi ?? 127))),
            ("FilteredRssi", .double(beacon.filteredRSSI)),
            ("MeasuredPower", .int16(Int16(beacon.measuredPower))),
            ("Distance", .double(beacon.distance)),
            ("Accuracy", .double(beacon.accuracy)),
            ("Proximity", .string(beacon.proximity.rawValue)),
            ("Stationary", .boolean(beacon.isStationary)),
            ("LastSeen", .uint64(UInt64(max(0, ServiceClock.system.wallTime(of: beacon.lastSeen).millisecondsSinceEpoch)))),
            ("Address", .string(beacon.address.description)),
            ("Venue", .objectPath(beacon.venueID.map(BusPaths.venue) ?? "/")),
        ]
    }

    /// Beacon1's properties and their signatures, in declaration order.
    static let beaconSignatures: [(String, String)] = [
        ("Uuid", "s"), ("Major", "q"), ("Minor", "q"), ("Rssi", "n"), ("FilteredRssi", "d"), ("MeasuredPower", "n"),
        ("Distance", "d"), ("Accuracy", "d"), ("Proximity", "s"), ("Stationary", "b"), ("LastSeen", "t"), ("Address", "s"), ("Venue", "o"),
    ]

    /// A constraint from `{uuid: s, major: q, minor: q}` (any integer type accepted); `nil` for "all".
    static func constraint(_ value: DBusValue, allowEmpty: Bool) throws(DBusError) -> BeaconConstraint? {
        guard let entries = value.stringKeyedEntries else { throw BeacondError.invalidArguments("expected a{sv}") }
        if entries.isEmpty {
            if allowEmpty { return nil }
            throw BeacondError.invalidArguments("the constraint needs at least a uuid")
        }
        let unknown = Set(entries.keys).subtracting(["uuid", "major", "minor"])
        guard unknown.isEmpty else {
            throw BeacondError.invalidArguments("unknown constraint key(s) \(unknown.sorted().joined(separator: ", ")); expected uuid, major, minor")
        }
        guard let text = entries["uuid"]?.string, text.count == 36, let uuid = UUID(uuidString: text) else {
            throw BeacondError.invalidArguments("uuid must be a string like E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
        }
        func field(_ name: String) throws(DBusError) -> UInt16? {
            guard let value = entries[name] else { return nil }
            guard let number = value.integer, (0...65535).contains(number) else {
                throw BeacondError.invalidArguments("\(name) must be an integer 0...65535")
            }
            return UInt16(number)
        }
        let major = try field("major")
        let minor = try field("minor")
        if minor != nil, major == nil { throw BeacondError.invalidArguments("a minor needs a major") }
        return BeaconConstraint(uuid: uuid, major: major, minor: minor)
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
