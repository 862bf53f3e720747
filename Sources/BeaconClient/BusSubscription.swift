import DBus

/// A signal subscription on a connection, ended with `cancel`: the binding's
/// `unsubscribe` drops the handler and removes the match rule from the bus.
struct BusSubscription: Sendable {
    let connection: DBusConnection
    let token: UInt64

    init(
        _ connection: DBusConnection, sender: String?, path: String, interface: String, member: String, arg0: String? = nil,
        _ handler: @escaping @Sendable (DBusSignal) -> Void
    ) {
        self.connection = connection
        token = connection.subscribe(sender: sender, path: path, interface: interface, member: member, arg0: arg0, handler)
    }

    func cancel() {
        connection.unsubscribe(token)
    }
}
