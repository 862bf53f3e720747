/// The figures of region monitoring, ranging and venue selection, with the
/// defaults SPEC section 5 gives; each can be set under `ranging:`.
public struct RangingSettings: Hashable, Sendable {
    /// n in `d = 10 ^ ((P1m - RSSI) / (10 n))`: 2 in free space, 2.5-4 indoors.
    public var pathLossExponent: Double = 2.0
    /// Proximity band edges, in metres.
    public var immediateDistance: Double = 0.5
    public var nearDistance: Double = 3.0
    /// How much more probable another band must be before a beacon's band
    /// changes (`ProximityClassifier.switchMargin`). A design choice, not a
    /// measurement: a tenth of the probability, enough that a median sitting
    /// on a band's edge does not flip the band with every packet.
    public var proximityHysteresis: Double = 0.1
    /// Two sightings within this long enter a region, not a single stray
    /// packet (a slower beacon: within three of its own intervals).
    public var enterWindow: Duration = .seconds(2)
    /// A beacon not heard for this long is `unknown` (never sooner than three
    /// of its own intervals): SPEC's "too old".
    public var staleAfter: Duration = .seconds(5)
    /// A region is left after this long without a matching sighting.
    public var exitAfter: Duration = .seconds(10)
    /// A challenger venue must be this much closer (a fraction) ...
    public var switchMargin: Double = 0.2
    /// ... for this long before the nearest venue changes.
    public var switchDwell: Duration = .seconds(2)
    /// Default for every venue without its own `max_distance`.
    public var maxDistance: Double?
    /// RSSI floor for entering a region, and the lower one for leaving it.
    public var enterRSSI: Double?
    public var exitRSSI: Double?
    /// P1m for a beacon whose frame says something no 1 m calibration can be
    /// (`IBeaconFrame.plausibleMeasuredPower`) and whose venue has no
    /// `measured_power`: −59 dBm, the 1 m figure most iBeacons ship with.
    public var defaultMeasuredPower: Int8 = -59

    public init() {}
}
