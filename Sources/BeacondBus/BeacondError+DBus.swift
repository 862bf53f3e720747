import BeacondAPI
import DBus

extension BeacondError {
    /// The bus's own errors a client turns into `accessDenied` and `serviceNotRunning`.
    static let accessDeniedName = "org.freedesktop.DBus.Error.AccessDenied"
    static let serviceUnknownName = "org.freedesktop.DBus.Error.ServiceUnknown"
    static let nameHasNoOwnerName = "org.freedesktop.DBus.Error.NameHasNoOwner"

    /// As sent on the bus.
    public var dbusError: DBusError {
        switch self {
        case .accessDenied(let message): DBusError(Self.accessDeniedName, message)
        case .serviceNotRunning(let message): DBusError(Self.serviceUnknownName, message)
        case .bus(let name, let message): DBusError(name, message)
        default: DBusError(code!.name, message)
        }
    }

    /// A bus error as received by a client on `bus`, said as what to do about it.
    public init(_ error: DBusError, bus: DBusConnection.Bus) {
        if let code = Code.allCases.first(where: { $0.name == error.name }) {
            self.init(code, error.message)
            return
        }
        switch error.name {
        case Self.serviceUnknownName, Self.nameHasNoOwnerName:
            self = .serviceNotRunning(Self.notRunning(on: bus))
        case Self.accessDeniedName:
            self = .accessDenied(
                "not allowed to ask beacond: location is private to root and group beacond. "
                    + "Add yourself with `sudo usermod -aG beacond $USER` and log in again.")
        default:
            self = .bus(name: error.name, message: error.message)
        }
    }

    /// What `serviceNotRunning` says: the unit serves the system bus; on
    /// another, beacond was started by hand.
    public static func notRunning(on bus: DBusConnection.Bus) -> String {
        switch bus {
        case .system: "beacond is not running on the system bus. Start it (sudo systemctl start beacond)."
        case .session, .address: "beacond is not running on the \(bus) bus. Start it there (beacond --bus \(bus))."
        }
    }
}

extension DBusMethodCall {
    /// Answers with one of the API's errors.
    public func fail(_ error: BeacondError) {
        fail(error.dbusError)
    }
}
