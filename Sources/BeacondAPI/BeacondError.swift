/// What can go wrong asking beacond, each with a message a person can act
/// on. beacond sends the first eleven as `org.beacond.Error.<Code>`; the bus
/// itself says the last three (a client maps them).
public enum BeacondError: Error, Sendable, Hashable, CustomStringConvertible {
    case noVenue(String)
    case locationUnknown(String)
    case invalidConfig(String)
    case unknownRegion(String)
    case unknownVenue(String)
    case regionExists(String)
    case tooManyRegions(String)
    case notOwner(String)
    case invalidArguments(String)
    /// A change that could not be written to the state directory, and so was not made.
    case stateNotSaved(String)
    /// Too many of the caller's requests wait already, or too many callers wait for a venue.
    case busy(String)
    /// The D-Bus policy does not let this user ask beacond.
    case accessDenied(String)
    /// beacond is not on the bus, or left it.
    case serviceNotRunning(String)
    /// Anything else the bus said: no connection, a timeout, a reply of the wrong shape.
    case bus(name: String, message: String)

    /// The errors beacond itself sends, by the last element of their D-Bus name.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        case noVenue = "NoVenue"
        case locationUnknown = "LocationUnknown"
        case invalidConfig = "InvalidConfig"
        case unknownRegion = "UnknownRegion"
        case unknownVenue = "UnknownVenue"
        case regionExists = "RegionExists"
        case tooManyRegions = "TooManyRegions"
        case notOwner = "NotOwner"
        case invalidArguments = "InvalidArguments"
        case stateNotSaved = "StateNotSaved"
        case busy = "Busy"

        /// `org.beacond.Error.NoVenue`.
        public var name: String { "\(Beacond.busName).Error.\(rawValue)" }

        /// What the error means, for the reference.
        public var meaning: String {
            let limits = ServiceLimits()
            return switch self {
            case .noVenue: "No venue is in range and no preferred venue is set."
            case .locationUnknown: "No venue could be determined before the timeout."
            case .invalidConfig: "beacons.yaml is invalid; the message names every problem as file:line: field. The running configuration is kept."
            case .unknownRegion: "No region of that id is monitored (the caller's own, or one of beacons.yaml)."
            case .unknownVenue: "No venue of that id is in beacons.yaml; the message lists the venues."
            case .regionExists: "The caller already monitors a region of that id."
            case .tooManyRegions:
                "At most \(limits.regionsPerClient) regions per client, \(limits.regionsPerUser) for all clients of one Unix user, and \(limits.clientRegions) across all clients."
            case .notOwner: "The region comes from beacons.yaml: edit the file and Reload."
            case .invalidArguments: "An argument is malformed or out of range; the message says which and what is expected."
            case .stateNotSaved: "The state directory could not be written, so nothing was changed."
            case .busy:
                "Too much asked at once, and the message says which: \(limits.queuedPerClient) of the caller's requests wait for beacond already "
                    + "(\(limits.waitingForUserPerClient) while beacond learns which user the caller runs as, at its first call); "
                    + "or calls wait for a venue, \(limits.waitersPerClient) of the caller's, \(limits.waitersPerUser) of its Unix user's clients "
                    + "or \(limits.waiters) in all; or its Unix user's clients started \(limits.regionsPerUser) regions in a row, after which one "
                    + "may start every \(limits.regionStartInterval.seconds.decimals(0)) s, or made \(limits.changesPerUser) changes (SetPreferredVenue, "
                    + "Reload) in a row, after which one every \(limits.changeInterval.seconds.decimals(0)) s. "
                    + "Wait for the answers, or the time the message names, then ask again."
            }
        }
    }

    /// The error of `code` with `message`.
    public init(_ code: Code, _ message: String) {
        switch code {
        case .noVenue: self = .noVenue(message)
        case .locationUnknown: self = .locationUnknown(message)
        case .invalidConfig: self = .invalidConfig(message)
        case .unknownRegion: self = .unknownRegion(message)
        case .unknownVenue: self = .unknownVenue(message)
        case .regionExists: self = .regionExists(message)
        case .tooManyRegions: self = .tooManyRegions(message)
        case .notOwner: self = .notOwner(message)
        case .invalidArguments: self = .invalidArguments(message)
        case .stateNotSaved: self = .stateNotSaved(message)
        case .busy: self = .busy(message)
        }
    }

    /// The code beacond sends this error with; `nil` for the bus's own.
    public var code: Code? {
        switch self {
        case .noVenue: .noVenue
        case .locationUnknown: .locationUnknown
        case .invalidConfig: .invalidConfig
        case .unknownRegion: .unknownRegion
        case .unknownVenue: .unknownVenue
        case .regionExists: .regionExists
        case .tooManyRegions: .tooManyRegions
        case .notOwner: .notOwner
        case .invalidArguments: .invalidArguments
        case .stateNotSaved: .stateNotSaved
        case .busy: .busy
        case .accessDenied, .serviceNotRunning, .bus: nil
        }
    }

    public var message: String {
        switch self {
        case .noVenue(let message), .locationUnknown(let message), .invalidConfig(let message), .unknownRegion(let message),
            .unknownVenue(let message), .regionExists(let message), .tooManyRegions(let message), .notOwner(let message),
            .invalidArguments(let message), .stateNotSaved(let message), .busy(let message), .accessDenied(let message),
            .serviceNotRunning(let message), .bus(_, let message):
            message
        }
    }

    public var description: String { message }
}
