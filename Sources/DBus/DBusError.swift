/// A D-Bus error: a name (`org.beacond.Error.NoVenue`) and a message for people.
public struct DBusError: Error, Sendable, Hashable, CustomStringConvertible {
    public var name: String
    public var message: String

    public init(_ name: String, _ message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { "\(name): \(message)" }

    // The standard errors this binding itself sends.
    public static func invalidArgs(_ message: String) -> DBusError {
        DBusError("org.freedesktop.DBus.Error.InvalidArgs", message)
    }

    public static func unknownMethod(_ message: String) -> DBusError {
        DBusError("org.freedesktop.DBus.Error.UnknownMethod", message)
    }

    public static func unknownObject(_ message: String) -> DBusError {
        DBusError("org.freedesktop.DBus.Error.UnknownObject", message)
    }

    public static func unknownInterface(_ message: String) -> DBusError {
        DBusError("org.freedesktop.DBus.Error.UnknownInterface", message)
    }

    public static func unknownProperty(_ message: String) -> DBusError {
        DBusError("org.freedesktop.DBus.Error.UnknownProperty", message)
    }

    public static func propertyReadOnly(_ message: String) -> DBusError {
        DBusError("org.freedesktop.DBus.Error.PropertyReadOnly", message)
    }

    public static func failed(_ message: String) -> DBusError {
        DBusError("org.freedesktop.DBus.Error.Failed", message)
    }

    /// The connection is closing or closed (libdbus's name for it).
    public static func disconnected(_ message: String) -> DBusError {
        DBusError(disconnectedName, message)
    }

    public static let disconnectedName = "org.freedesktop.DBus.Error.Disconnected"

    /// The calling task was cancelled before the reply came. Never sent on the
    /// bus, so it has a name of the binding's own.
    public static func cancelled(_ message: String) -> DBusError {
        DBusError(cancelledName, message)
    }

    public static let cancelledName = "DBus.Error.Cancelled"

    /// A reply held more values than this binding decodes
    /// (`MessageCoder.mostValuesInReplies`). Never sent on the bus: libdbus's
    /// name for a limit exceeded, as dbus-daemon uses it for its own limits.
    public static func replyTooLarge(_ message: String) -> DBusError {
        DBusError(limitsExceededName, message)
    }

    public static let limitsExceededName = "org.freedesktop.DBus.Error.LimitsExceeded"
}
