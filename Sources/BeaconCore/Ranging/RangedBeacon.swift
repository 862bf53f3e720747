/// One beacon as ranging sees it, like Core Location's `CLBeacon`.
public struct RangedBeacon: Sendable, Equatable {
    public var identity: BeaconIdentity
    /// RSSI of the last advertisement, dBm; `nil` if the controller could not measure it.
    public var rssi: Int8?
    /// The filtered RSSI the distance comes from, dBm.
    public var filteredRSSI: Double
    /// The power at 1 m used for the distance (`IBeaconFrame.rangingPower`):
    /// the venue's calibration, else the frame's if it can be one, else the configured default.
    public var measuredPower: Int8
    /// The measured power the beacon's frame carries, as sent: outside
    /// `IBeaconFrame.plausibleMeasuredPower` it is no 1 m calibration (some
    /// trackers put a battery level there) and ranging does not use it.
    public var advertisedPower: Int8
    /// Metres; meaningful unless `proximity` is unknown.
    public var distance: Double
    /// One-sigma uncertainty of `distance`, metres (`CLBeacon.accuracy`): the
    /// truth lies within ±accuracy about two times in three, the spot's fading,
    /// calibration and the path-loss exponent's spread included.
    public var accuracy: Double
    public var proximity: Proximity
    /// The signal says the listener has not moved relative to this beacon (its
    /// level is flat enough to rule out a slow walk), like Core Location's `isStationary`.
    public var isStationary: Bool
    /// How the listener holds the device, as far as this beacon's packets tell: the model ranging reported (`RSSIFilter`).
    public var listener: RSSIFilter.Listener = .setDown
    public var lastSeen: Timestamp
    public var address: BluetoothAddress
    /// The venue this beacon marks, if any.
    public var venueID: String?
    /// One of that venue's venue beacons (`EngineLimits.venueBeaconsPerVenue`,
    /// the longest tracked), not one more identity minted under an open
    /// venue: the bus announces it before strangers.
    public var isVenueBeacon = false

    /// Nearest first, unknown last (then by identity, so the order is stable).
    public static func rangingOrder(_ a: RangedBeacon, _ b: RangedBeacon) -> Bool {
        if (a.proximity == .unknown) != (b.proximity == .unknown) { return b.proximity == .unknown }
        if a.proximity != .unknown, a.distance != b.distance { return a.distance < b.distance }
        return a.identity < b.identity
    }
}
