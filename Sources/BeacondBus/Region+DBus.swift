import BeaconCore
import BeacondAPI
import DBus

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Beacond.Region {
    private typealias Property = Beacond.Region1

    /// Region1's properties, in declaration order; Major and Minor only where the region has them.
    public var properties: [(String, DBusValue)] {
        var properties: [(String, DBusValue)] = [(Property.id.name, .string(id)), (Property.uuid.name, .string(constraint.uuid.uuidString))]
        if let major = constraint.major { properties.append((Property.major.name, .uint16(major))) }
        if let minor = constraint.minor { properties.append((Property.minor.name, .uint16(minor))) }
        properties += [
            (Property.state.name, .string(state.rawValue)),
            (Property.notifyOnEntry.name, .boolean(notifyOnEntry)),
            (Property.notifyOnExit.name, .boolean(notifyOnExit)),
            (Property.owner.name, .string(owner ?? Property.configurationOwner)),
        ]
        return properties
    }

    public init(properties: [String: DBusValue]) throws(BeacondError) {
        let reader = DictionaryReader(properties, what: "a region")
        let text = try reader.value(Property.uuid).string ?? ""
        guard let uuid = UUID(uuidString: text) else {
            throw DictionaryReader.malformed("a region's Uuid is not a UUID: \"\(text)\"")
        }
        let major = try reader.optional(Property.major.name, Property.major.type)?.integer.map(UInt16.init)
        let minor = try reader.optional(Property.minor.name, Property.minor.type)?.integer.map(UInt16.init)
        guard minor == nil || major != nil else { throw DictionaryReader.malformed("a region has a Minor but no Major") }
        let owner = try reader.value(Property.owner).string ?? ""
        self.init(
            id: try reader.value(Property.id).string ?? "",
            constraint: BeaconConstraint(uuid: uuid, major: major, minor: minor),
            state: RegionState(rawValue: try reader.value(Property.state).string ?? "") ?? .unknown,
            notifyOnEntry: try reader.value(Property.notifyOnEntry).bool ?? true,
            notifyOnExit: try reader.value(Property.notifyOnExit).bool ?? true,
            owner: owner == Property.configurationOwner ? nil : owner)
    }
}
