/// What survives a restart: region states and the preferred venue.
public struct EngineState: Codable, Sendable, Equatable {
    public var regions: [String: RegionState]
    public var preferredVenue: String?

    public init(regions: [String: RegionState] = [:], preferredVenue: String? = nil) {
        self.regions = regions
        self.preferredVenue = preferredVenue
    }
}

/// A request the engine refuses, worded for the person who made it.
public enum EngineError: Error, Equatable, Sendable, CustomStringConvertible {
    case unknownVenue(String)
    case unknownRegion(String)
    case regionExists(String)

    public var description: String {
        switch self {
        case .unknownVenue(let id): "no venue '\(id.quotedForMessage)' in the configuration"
        case .unknownRegion(let id): "no region '\(id.quotedForMessage)' is monitored"
        case .regionExists(let id): "a region '\(id.quotedForMessage)' is already monitored"
        }
    }
}
