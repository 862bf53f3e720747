import BeaconCore
import BeacondAPI
import DBus

extension APIDictionary {
    /// A caller's `a{sv}` by key, refused unless every key is declared here
    /// and given once. `stringKeyedEntries` keeps a repeated key's last value,
    /// so the earlier ones were never checked: a 30 MB string behind a valid
    /// last `uuid` passed, and its call was held with its message while
    /// beacond asked the bus who the caller is.
    public func entries(of value: DBusValue, naming noun: String) throws(BeacondError) -> [String: DBusValue] {
        guard case .dictionary(_, _, let pairs) = value else { throw .invalidArguments("\(title) must be \(signature)") }
        var entries: [String: DBusValue] = [:]
        for pair in pairs {
            guard let key = pair.key.string else { throw .invalidArguments("\(title) must be \(signature)") }
            guard entries.updateValue(pair.value, forKey: key) == nil else {
                throw .invalidArguments("the \(noun) '\(key.quotedForMessage)' is given more than once")
            }
        }
        let unknown = unknownKeys(in: entries.keys)
        guard unknown.isEmpty else {
            throw .invalidArguments(
                "unknown \(noun)(s) \(unknown.prefix(8).map(\.quotedForMessage).joined(separator: ", ")); expected \(keyList)")
        }
        return entries
    }
}
