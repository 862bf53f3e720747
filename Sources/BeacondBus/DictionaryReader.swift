import BeacondAPI
import DBus

/// Reads a received `a{sv}` (a dictionary or an object's properties) by its
/// declared keys: a missing key or a value of another type than declared is
/// a clear error, never a default that hides it.
public struct DictionaryReader: Sendable {
    public let entries: [String: DBusValue]
    /// What the dictionary is, for messages ("the nearest venue").
    let what: String

    public init(_ value: DBusValue?, what: String) throws(BeacondError) {
        guard let entries = value?.stringKeyedEntries else { throw Self.malformed("\(what) is not a dictionary") }
        self.init(entries, what: what)
    }

    public init(_ entries: [String: DBusValue], what: String) {
        self.entries = entries
        self.what = what
    }

    /// The value of `name`, checked to be of `type`; `nil` when absent.
    public func optional(_ name: String, _ type: APIType) throws(BeacondError) -> DBusValue? {
        guard let value = entries[name]?.unwrapped else { return nil }
        guard value.signature == type.signature else {
            throw Self.malformed("\(what): \(name) is of type \(value.signature), not \(type.signature)")
        }
        return value
    }

    public func required(_ name: String, _ type: APIType) throws(BeacondError) -> DBusValue {
        guard let value = try optional(name, type) else { throw Self.malformed("\(what) has no \(name)") }
        return value
    }

    public func value(_ key: APIDictionary.Key) throws(BeacondError) -> DBusValue { try required(key.name, key.type) }
    public func value(_ property: APIProperty) throws(BeacondError) -> DBusValue { try required(property.name, property.type) }

    /// A reply beacond should not have sent.
    public static func malformed(_ message: String) -> BeacondError {
        .bus(name: DBusError.invalidArgs("").name, message: "beacond answered in an unexpected shape: \(message)")
    }
}

extension DBusValue {
    /// An `a{sv}` of declared keys, in the order given.
    public static func declared(_ entries: [(APIDictionary.Key, DBusValue)]) -> DBusValue {
        .vardict(entries.map { ($0.0.name, $0.1) })
    }
}
