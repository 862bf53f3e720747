import CDBus

/// A signal: as received (with its sender), or as a connection or the
/// in-memory bus emits it.
public struct DBusSignal: Sendable, Hashable {
    public var sender: String
    public var path: String
    public var interface: String
    public var member: String
    public var arguments: [DBusValue]

    public init(sender: String = "", path: String, interface: String, member: String, arguments: [DBusValue] = []) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
    }

    /// The header alone: a signal is matched before its arguments are
    /// decoded, since any peer may send one to this connection.
    init(header message: OpaquePointer) {
        self.init(
            sender: dbus_message_get_sender(message).map { String(cString: $0) } ?? "",
            path: dbus_message_get_path(message).map { String(cString: $0) } ?? "",
            interface: dbus_message_get_interface(message).map { String(cString: $0) } ?? "",
            member: dbus_message_get_member(message).map { String(cString: $0) } ?? "")
    }
}
