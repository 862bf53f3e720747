import BeaconCore
import BeacondAPI
import DBus

/// What D-Bus callers ask of the engine; answered by the engine's owner.
enum ServiceRequest: Sendable {
    case startMonitoring(RegionDefinition, Caller)
    case stopMonitoring(id: String, Caller)
    case setPreferredVenue(String?, Caller)
    /// nil: SIGHUP's, which no caller waits for.
    case reload(Caller?)
    /// A bus client went away: its regions go with it.
    case clientLeft(String)

    /// The call to answer (nil for what the bus itself says, and SIGHUP's reload).
    var call: DBusMethodCall? {
        switch self {
        case .startMonitoring(_, let caller), .stopMonitoring(_, let caller), .setPreferredVenue(_, let caller): caller.call
        case .reload(let caller): caller?.call
        case .clientLeft: nil
        }
    }
}

extension BeacondError {
    /// StopMonitoring of an id the caller has no region of: said where the id
    /// is checked before its call is held (BusService) and where the regions are.
    static func notYourRegion(_ id: String) -> BeacondError {
        .unknownRegion("you monitor no region '\(id.quotedForMessage)'")
    }
}

/// A call with the Unix user its client runs as, for the bounds per user (`CallerBounds`).
struct Caller: Sendable {
    let call: DBusMethodCall
    let user: UInt32
}
