/// What the engine tells the service: the things worth a log line or a signal.
public enum EngineEvent: Sendable, Equatable {
    case region(RegionTransition)
    /// The nearest venue changed, or the listener settled or moved on (`nil`: no answer any more).
    case nearestVenueChanged(NearestVenue?)
    /// A beacon started or stopped being ranged (it is in a region the listener is inside).
    case beaconAppeared(BeaconIdentity)
    case beaconDisappeared(BeaconIdentity)
    /// A tracked beacon's frame carries a measured power no 1 m calibration
    /// can be; ranging uses `rangingWith` instead. Once per track, so the log
    /// says it once, not at every advertisement.
    case implausibleMeasuredPower(BeaconIdentity, advertised: Int8, rangingWith: Int8)
}
