import DBus

/// A signal subscription that can be undone completely: the binding's
/// `unsubscribe` drops the handler but leaves the match rule on the bus, so
/// this also sends RemoveMatch for the rule `subscribe` added. (A small
/// extension of the binding's public API, kept here. Once the binding's
/// `unsubscribe` removes the rule itself, `cancel` must only unsubscribe.)
struct BusSubscription: Sendable {
    let connection: DBusConnection
    let token: UInt64
    let rule: String

    init(
        _ connection: DBusConnection, sender: String, path: String, interface: String, member: String,
        _ handler: @escaping @Sendable (DBusSignal) -> Void
    ) {
        self.connection = connection
        token = connection.subscribe(sender: sender, path: path, interface: interface, member: member, handler)
        // The bus compares rules by their fields, not their text.
        rule = "type='signal',sender='\(sender)',path='\(path)',interface='\(interface)',member='\(member)'"
    }

    func cancel() async {
        connection.unsubscribe(token)
        _ = try? await connection.call(
            destination: DBusNames.busDriver, path: DBusNames.busDriverPath, interface: DBusNames.busDriver, member: "RemoveMatch",
            arguments: [.string(rule)])
    }
}
