import BeaconCore
import BeacondAPI
import DBus

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Beacond.Beacon {
    private typealias Property = Beacond.Beacon1

    /// Beacon1's properties, in declaration order (also GetRangedBeacons' entries).
    public var properties: [(String, DBusValue)] {
        [
            (Property.uuid.name, .string(identity.uuid.uuidString)),
            (Property.major.name, .uint16(identity.major)),
            (Property.minor.name, .uint16(identity.minor)),
            (Property.rssi.name, .int16(rssi ?? 127)),
            (Property.filteredRssi.name, .double(filteredRSSI)),
            (Property.measuredPower.name, .int16(measuredPower)),
            (Property.advertisedPower.name, .int16(advertisedPower)),
            (Property.advertisedPowerPlausible.name, .boolean(isAdvertisedPowerPlausible)),
            (Property.distance.name, .double(distance ?? -1)),
            (Property.accuracy.name, .double(accuracy ?? -1)),
            (Property.proximity.name, .string(proximity.rawValue)),
            (Property.stationary.name, .boolean(isStationary)),
            (Property.lastSeen.name, .uint64(lastSeen)),
            (Property.address.name, .string(address)),
            (Property.venue.name, .objectPath(venue.map(BusPaths.venue) ?? "/")),
        ]
    }

    public init(properties: [String: DBusValue]) throws(BeacondError) {
        let reader = DictionaryReader(properties, what: Beacond.Beacon1.dictionary.title)
        guard let uuid = UUID(uuidString: try reader.value(Property.uuid).string ?? "") else {
            throw DictionaryReader.malformed("a beacon's Uuid is not a UUID")
        }
        let rssi = try reader.value(Property.rssi).integer ?? 127
        let measuredPower = try reader.value(Property.measuredPower).integer ?? 0
        self.init(
            identity: BeaconIdentity(
                uuid: uuid, major: UInt16(try reader.value(Property.major).integer ?? 0),
                minor: UInt16(try reader.value(Property.minor).integer ?? 0)),
            rssi: rssi == 127 ? nil : Int16(rssi),
            filteredRSSI: try reader.value(Property.filteredRssi).double ?? 0,
            measuredPower: Int16(measuredPower),
            // Not there from a beacond older than the property: the power ranging uses, taken as plausible.
            advertisedPower: Int16(try reader.optional(Property.advertisedPower.name, Property.advertisedPower.type)?.integer ?? measuredPower),
            isAdvertisedPowerPlausible: try reader.optional(Property.advertisedPowerPlausible.name, Property.advertisedPowerPlausible.type)?.bool ?? true,
            distance: try reader.value(Property.distance).double.flatMap { $0 < 0 ? nil : $0 },
            accuracy: try reader.value(Property.accuracy).double.flatMap { $0 < 0 ? nil : $0 },
            proximity: Proximity(rawValue: try reader.value(Property.proximity).string ?? "") ?? .unknown,
            isStationary: try reader.value(Property.stationary).bool ?? false,
            lastSeen: UInt64(try reader.value(Property.lastSeen).integer ?? 0),
            address: try reader.value(Property.address).string ?? "",
            venue: BusPaths.venueID(try reader.value(Property.venue).string ?? "/"))
    }
}
