/// What a flood of identities from anyone in radio range can make the engine
/// hold. A beacon that marks a configured venue is never pushed out by one
/// that does not, so a stranger can add noise but not take the venue away.
public struct EngineLimits: Hashable, Sendable {
    /// Beacons tracked at once (heard and matching a region). At about 2 KB
    /// each this bounds the engine near 2 MB; a café has tens of beacons.
    public var trackedBeacons = 1_000
    /// Ranged beacons (reported and exported on D-Bus) that mark no
    /// configured venue: enough for a client region's beacons in a busy room,
    /// few enough that the bus stays quiet when someone sprays identities.
    public var rangedStrangers = 100

    public init() {}
}
