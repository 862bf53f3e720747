/// What a flood of identities from anyone in radio range can make the engine
/// hold. A venue beacon is never pushed out by one that is not, so a stranger
/// can add noise but not take a venue away.
public struct EngineLimits: Hashable, Sendable {
    /// Beacons tracked at once (heard and matching a region). At about 2 KB
    /// each this bounds the engine near 2 MB; a café has tens of beacons.
    public var trackedBeacons = 1_000
    /// Ranged beacons (reported and exported on D-Bus) that mark no
    /// configured venue: enough for a client region's beacons in a busy room,
    /// few enough that the bus stays quiet when someone sprays identities.
    public var rangedStrangers = 100
    /// Venue beacons per venue: the beacons matching a venue tracked longest,
    /// the others strangers. A venue that names its beacon's minor matches
    /// one identity; one that leaves the minor (or major) open matches any
    /// identity minted under it, and without a bound such a flood would be
    /// ranged, logged and kept as venue beacons — pushing other venues'
    /// beacons out. A counter has a handful of beacons.
    public var venueBeaconsPerVenue = 8

    public init() {}
}
