import CDBus
import Synchronization

/// A method call received by an exported object. Answer it exactly once,
/// now or later, from any thread; one dropped without an answer fails, so a
/// caller is never left waiting for nothing.
public final class DBusMethodCall: Sendable {
    public let sender: String
    public let path: String
    public let interface: String
    public let member: String
    public let arguments: [DBusValue]
    private let message: Handle
    private let connection: DBusConnection
    private let answered = Atomic<Bool>(false)

    init(message: OpaquePointer, connection: DBusConnection) {
        dbus_message_ref(message)
        self.message = Handle(pointer: message)
        self.connection = connection
        sender = dbus_message_get_sender(message).map { String(cString: $0) } ?? ""
        path = dbus_message_get_path(message).map { String(cString: $0) } ?? ""
        interface = dbus_message_get_interface(message).map { String(cString: $0) } ?? ""
        member = dbus_message_get_member(message).map { String(cString: $0) } ?? ""
        arguments = MessageCoder.read(message)
    }

    deinit {
        if !answered.load(ordering: .acquiring) {
            send(.failure(.failed("\(member) was not answered")))
        }
        let message = message
        connection.perform { dbus_message_unref(message.pointer) }
    }

    public func reply(_ values: [DBusValue] = []) {
        answer(.success(values))
    }

    public func fail(_ error: DBusError) {
        answer(.failure(error))
    }

    /// Whether this call has been answered (a deferred reply may race a timeout).
    public var isAnswered: Bool { answered.load(ordering: .acquiring) }

    private func answer(_ result: Result<[DBusValue], DBusError>) {
        guard answered.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            return
        }
        send(result)
    }

    private func send(_ result: Result<[DBusValue], DBusError>) {
        let message = message
        connection.perform { [connection] in
            guard dbus_message_get_no_reply(message.pointer) == 0 else { return }
            let reply: OpaquePointer?
            switch result {
            case .success(let values):
                reply = dbus_message_new_method_return(message.pointer)
                if let reply {
                    do throws(DBusError) {
                        try MessageCoder.append(values, to: reply)
                    } catch {
                        dbus_message_unref(reply)
                        Self.sendError(.failed("reply could not be encoded: \(error.message)"), to: message.pointer, on: connection)
                        return
                    }
                }
            case .failure(let error):
                Self.sendError(error, to: message.pointer, on: connection)
                return
            }
            if let reply {
                dbus_connection_send(connection.raw, reply, nil)
                dbus_message_unref(reply)
            }
        }
    }

    static func sendError(_ error: DBusError, to message: OpaquePointer, on connection: DBusConnection) {
        guard let reply = dbus_message_new_error(message, error.name, error.message) else { return }
        dbus_connection_send(connection.raw, reply, nil)
        dbus_message_unref(reply)
    }
}

/// A libdbus object (message, watch, timeout) handed between threads. libdbus
/// is initialised for threads, and this binding uses such objects only on the
/// connection's thread or under its lock.
struct Handle: Hashable, @unchecked Sendable {
    let pointer: OpaquePointer
}
