import BeacondAPI
import DBus

extension Beacond.Status {
    private typealias Property = Beacond.Manager1

    /// Manager1's properties, in declaration order.
    public var properties: [(String, DBusValue)] {
        [
            (Property.available.name, .boolean(available)),
            (Property.source.name, .string(source)),
            (Property.adapter.name, .string(adapter)),
            (Property.nearestVenue.name, .string(nearestVenue ?? "")),
            (Property.preferredVenue.name, .string(preferredVenue ?? "")),
            (Property.version.name, .string(version)),
            (Property.droppedAdvertisements.name, .uint64(droppedAdvertisements)),
            (Property.mqtt.name, .string(mqtt)),
        ]
    }

    public init(properties: [String: DBusValue]) throws(BeacondError) {
        let reader = DictionaryReader(properties, what: "beacond's status")
        let nearest = try reader.value(Property.nearestVenue).string ?? ""
        let preferred = try reader.value(Property.preferredVenue).string ?? ""
        self.init(
            available: try reader.value(Property.available).bool ?? false,
            source: try reader.value(Property.source).string ?? "",
            adapter: try reader.value(Property.adapter).string ?? "",
            nearestVenue: nearest.isEmpty ? nil : nearest,
            preferredVenue: preferred.isEmpty ? nil : preferred,
            version: try reader.value(Property.version).string ?? "",
            droppedAdvertisements: UInt64(try reader.value(Property.droppedAdvertisements).integer ?? 0),
            mqtt: try reader.value(Property.mqtt).string ?? "")
    }
}
