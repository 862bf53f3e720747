import BeaconCore
import BeacondAPI
import DBus

extension Beacond.Venue {
    private typealias Key = Beacond.Manager1.VenueKey

    /// Manager1's venue dictionary.
    public var dbusValue: DBusValue {
        .declared([
            (Key.id, .string(id)),
            (Key.name, .string(name)),
            (Key.proximity, .string(proximity.rawValue)),
            (Key.distance, .double(distance ?? -1)),
            (Key.accuracy, .double(accuracy ?? -1)),
            (Key.rssi, .double(rssi)),
            (Key.ageMilliseconds, .uint64(UInt64(max(0, age.wholeMilliseconds)))),
            (Key.source, .string(source.rawValue)),
            (Key.beacon, .objectPath(beacon?.rawValue ?? "/")),
            (Key.runnerUp, .string(runnerUp ?? "")),
            (Key.margin, .double(margin)),
            (Key.stationary, .boolean(isStationary)),
        ])
    }

    public init(dbus value: DBusValue?) throws(BeacondError) {
        let reader = try DictionaryReader(value, what: Beacond.Manager1.venue.title)
        let proximity = try reader.value(Key.proximity).string ?? ""
        let source = try reader.value(Key.source).string ?? ""
        let beacon = try reader.value(Key.beacon).string ?? "/"
        let runnerUp = try reader.value(Key.runnerUp).string ?? ""
        self.init(
            id: try reader.value(Key.id).string ?? "",
            name: try reader.value(Key.name).string ?? "",
            proximity: Proximity(rawValue: proximity) ?? .unknown,
            distance: try reader.value(Key.distance).double.flatMap { $0 < 0 ? nil : $0 },
            accuracy: try reader.value(Key.accuracy).double.flatMap { $0 < 0 ? nil : $0 },
            rssi: try reader.value(Key.rssi).double ?? 0,
            age: .milliseconds(try reader.value(Key.ageMilliseconds).integer ?? 0),
            source: NearestVenue.Source(rawValue: source) ?? .ranging,
            beacon: beacon == "/" ? nil : ObjectPath(beacon),
            runnerUp: runnerUp.isEmpty ? nil : runnerUp,
            margin: try reader.value(Key.margin).double ?? 0,
            isStationary: try reader.value(Key.stationary).bool ?? false)
    }
}
