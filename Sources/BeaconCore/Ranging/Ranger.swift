/// Turns a beacon's filtered RSSI into distance, accuracy (one sigma from the
/// filter's variance, first order) and proximity.
///
/// A beacon is `unknown` with fewer than `minimumSamples` RSSI samples or when
/// it has not been heard for `staleAfter` (at least three of its own intervals).
public struct Ranger: Hashable, Sendable {
    public var model: PathLossModel
    public var classifier: ProximityClassifier
    public var minimumSamples = 2
    public var staleAfter: Duration = .seconds(5)

    public init(settings: RangingSettings) {
        model = PathLossModel(exponent: settings.pathLossExponent)
        classifier = ProximityClassifier(
            bands: ProximityBands(immediate: settings.immediateDistance, near: settings.nearDistance),
            pathLossExponent: settings.pathLossExponent)
    }

    /// Updates the track's band after a sighting or as time passes, and
    /// returns what ranging reports for it now.
    func range(_ track: inout BeaconTrack, now: Timestamp, venueID: String?) -> RangedBeacon {
        let filter = track.filter
        let fresh = now - track.lastSeen <= track.staleAfter(minimum: staleAfter)
        var distance = -1.0
        var accuracy = -1.0
        if filter.samples >= minimumSamples, filter.estimate.isFinite, fresh {
            let power = Double(track.measuredPower)
            distance = model.distance(rssi: filter.estimate, measuredPower: power)
            accuracy = model.distanceSigma(distance: distance, rssiSigma: filter.sigma)
            track.proximity = classifier.band(distance: distance, rssiVariance: filter.variance, previous: track.proximity)
        } else {
            track.proximity = .unknown
        }
        return RangedBeacon(
            identity: track.identity, rssi: track.lastRSSI,
            filteredRSSI: filter.estimate.isFinite ? filter.estimate : Double(track.lastRSSI ?? 0),
            measuredPower: track.measuredPower, distance: distance, accuracy: accuracy,
            proximity: track.proximity, lastSeen: track.lastSeen, address: track.address, venueID: venueID)
    }
}
