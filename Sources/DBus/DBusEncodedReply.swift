import CDBus

/// Reply values encoded once, for an answer given many times (beacond's
/// GetNearestVenue between two publications): each reply copies the encoded
/// body instead of encoding the values again.
///
/// A value D-Bus cannot carry is refused here, and each call answered with
/// this fails as `reply(values)` would have ("reply could not be encoded").
///
/// Threading: made on any thread; replies only read it (libdbus copies a
/// message without changing it), on any connection's thread.
public final class DBusEncodedReply: @unchecked Sendable {
    public let values: [DBusValue]
    /// A method return with the values and no call to answer yet, which
    /// replies copy; or why the values cannot be sent.
    private let template: Result<Handle, DBusError>

    public init(_ values: [DBusValue]) {
        self.values = values
        template = Self.encode(values)
    }

    deinit {
        if case .success(let message) = template { dbus_message_unref(message.pointer) }
    }

    private static func encode(_ values: [DBusValue]) -> Result<Handle, DBusError> {
        guard let message = dbus_message_new(DBUS_MESSAGE_TYPE_METHOD_RETURN) else {
            return .failure(.failed("libdbus ran out of memory"))
        }
        do throws(DBusError) {
            try MessageCoder.append(values, to: message)
            return .success(Handle(pointer: message))
        } catch {
            dbus_message_unref(message)
            return .failure(error)
        }
    }

    /// A reply to `call` carrying the values, addressed as
    /// `dbus_message_new_method_return` addresses one; nil when libdbus is out
    /// of memory. On the connection's thread.
    func reply(to call: OpaquePointer) throws(DBusError) -> OpaquePointer? {
        guard let reply = dbus_message_copy(try template.get().pointer) else { return nil }
        dbus_message_set_no_reply(reply, 1)
        let sender = dbus_message_get_sender(call)
        guard dbus_message_set_reply_serial(reply, dbus_message_get_serial(call)) != 0,
            sender == nil || dbus_message_set_destination(reply, sender) != 0
        else {
            dbus_message_unref(reply)
            return nil
        }
        return reply
    }
}
