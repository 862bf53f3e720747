import BeacondAPI
import DBus

extension BeacondError {
    /// The bus's own errors a client turns into `accessDenied` and `serviceNotRunning`.
    static let accessDeniedName = "org.freedesktop.DBus.Error.AccessDenied"
    static let serviceUnknownName = "org.freedesktop.DBus.Error.ServiceUnknown"
    static let nameHasNoOwnerName = "org.freedesktop.DBus.Error.NameHasNoOwner"

    /// What the bus answers instead when it tried to start beacond for the
    /// call (D-Bus activation: the package installs org.beacond.service) and
    /// could not: systemd's unit disabled (its dbus-org.beacond.service alias
    /// is gone) or masked; without systemd, the program failing. (A unit that
    /// starts and then fails sends the bus no answer: the call times out.)
    static func isActivationFailure(_ name: String) -> Bool {
        name.hasPrefix("org.freedesktop.DBus.Error.Spawn.")
            || ["org.freedesktop.systemd1.NoSuchUnit", "org.freedesktop.systemd1.UnitMasked"].contains(name)
    }

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
        case Self.serviceUnknownName where error.message.hasPrefix(Self.stoppingPrefix):
            self = .serviceNotRunning(error.message)  // beacond's own, as it stops
        case Self.serviceUnknownName, Self.nameHasNoOwnerName:
            self = .serviceNotRunning(Self.notRunning(on: bus))
        case let name where Self.isActivationFailure(name):
            self = .serviceNotRunning(Self.notStarted(on: bus, because: error.message))
        case Self.accessDeniedName:
            self = .accessDenied(
                "not allowed to ask beacond: location is private to root and group beacond. "
                    + "Add yourself with `sudo usermod -aG beacond $USER` and log in again.")
        default:
            self = .bus(name: error.name, message: error.message)
        }
    }

    /// What `serviceNotRunning` says when the bus could not start beacond.
    public static func notStarted(on bus: DBusConnection.Bus, because reason: String) -> String {
        let tried = "beacond is not running on the \(bus) bus, and the bus could not start it (\(reason))."
        return switch bus {
        case .system: tried + " If it is disabled or masked: sudo systemctl unmask beacond; sudo systemctl enable --now beacond. Why it stopped: journalctl -u beacond."
        case .session, .address: tried + " Start it there (beacond --bus \(bus))."
        }
    }

    /// What beacond answers every call with once it stops (`why`), until it
    /// has left the bus: ServiceUnknown, as the bus says once it has, but
    /// beacond's own words (a crash leaves the bus's NoReply).
    public static func stopping(_ why: String) -> BeacondError {
        .serviceNotRunning("\(stoppingPrefix) (\(why)); ask again once it is back")
    }

    static let stoppingPrefix = "beacond is stopping"

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
