import BeaconCore
import BeacondAPI
import DBus

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension BeaconConstraint {
    private typealias Key = Beacond.Manager1.ConstraintKey

    /// `{uuid: s, major: q, minor: q}`, the keys it has.
    public var dbusValue: DBusValue {
        var entries: [(APIDictionary.Key, DBusValue)] = [(Key.uuid, .string(uuid.uuidString))]
        if let major { entries.append((Key.major, .uint16(major))) }
        if let minor { entries.append((Key.minor, .uint16(minor))) }
        return .declared(entries)
    }

    /// A constraint from a caller (any integer type accepted for major and
    /// minor); `nil` for `{}` ("all") where `allowEmpty`.
    public static func decode(_ value: DBusValue, allowEmpty: Bool) throws(BeacondError) -> BeaconConstraint? {
        let dictionary = Beacond.Manager1.constraint
        let entries = try dictionary.entries(of: value, naming: "constraint key")
        if entries.isEmpty {
            if allowEmpty { return nil }
            throw .invalidArguments("the constraint needs at least a uuid")
        }
        guard let text = entries[Key.uuid.name]?.string, text.count == 36, let uuid = UUID(uuidString: text) else {
            throw .invalidArguments("uuid must be a string like E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
        }
        func field(_ key: APIDictionary.Key) throws(BeacondError) -> UInt16? {
            guard let value = entries[key.name] else { return nil }
            guard let number = value.integer, (0...65535).contains(number) else {
                throw .invalidArguments("\(key.name) must be an integer 0...65535")
            }
            return UInt16(number)
        }
        let major = try field(Key.major)
        let minor = try field(Key.minor)
        if minor != nil, major == nil { throw .invalidArguments("a minor needs a major") }
        return BeaconConstraint(uuid: uuid, major: major, minor: minor)
    }
}
