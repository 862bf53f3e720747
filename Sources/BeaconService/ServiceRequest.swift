import BeaconCore
import DBus

/// What D-Bus callers ask of the engine; answered by the engine's owner.
enum ServiceRequest: Sendable {
    /// With the Unix user the caller runs as, for the bound per user.
    case startMonitoring(RegionDefinition, user: UInt32, DBusMethodCall)
    case stopMonitoring(id: String, DBusMethodCall)
    case setPreferredVenue(String?, DBusMethodCall)
    case reload(DBusMethodCall?)
    /// A bus client went away: its regions go with it.
    case clientLeft(String)

    /// The call to answer (nil for what the bus itself says, and SIGHUP's reload).
    var call: DBusMethodCall? {
        switch self {
        case .startMonitoring(_, _, let call), .stopMonitoring(_, let call), .setPreferredVenue(_, let call): call
        case .reload(let call): call
        case .clientLeft: nil
        }
    }
}
