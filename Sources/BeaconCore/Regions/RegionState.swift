/// Where the listener is with respect to a region (`CLRegionState`).
public enum RegionState: String, Sendable, Hashable, Codable {
    /// Just started, no evidence either way yet.
    case unknown
    case inside
    case outside
}

/// A region's state changed.
public struct RegionTransition: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case entered, exited
        /// unknown → outside: determined, but nothing to announce (as Core Location's `didDetermineState`).
        case determinedOutside
    }

    /// The region's key (`RegionDefinition.key`): its id, or `owner/id` for a client's.
    public var regionID: String
    public var kind: Kind
    public var time: Timestamp
    /// Whether the region asked to be told (`notify_on_entry` / `notify_on_exit`).
    public var notify: Bool
    /// Why, for the log: "2 sightings within 2.0 s, the last of …", "not seen for 10.1 s", "RSSI -91 below -90".
    public var reason: String
}
