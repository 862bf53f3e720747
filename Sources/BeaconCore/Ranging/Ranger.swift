#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns a beacon's filtered RSSI into a distance distribution
/// (`DistanceDistribution`): its median is the distance, its one-sigma
/// half-width the accuracy, its band masses the proximity.
///
/// A beacon is `unknown` with fewer than `minimumSamples` RSSI samples or when
/// it has had no RSSI sample for `staleAfter` (at least three of its own intervals).
public struct Ranger: Hashable, Sendable {
    public var model: PathLossModel
    public var classifier: ProximityClassifier
    public var uncertainty = RangingUncertainty()
    /// One sample is a guess; two show the beacon is really there (SPEC's "too few samples").
    public var minimumSamples = 2
    /// SPEC's "too old" (`RangingSettings.staleAfter`); never below three of the beacon's own intervals (`staleAfter(interval:minimum:)`).
    public var staleAfter: Duration
    /// The slowest walk the filter must follow, m/s: a shuffle in a queue,
    /// well under the 1.2–1.4 m/s of ordinary walking (published gait-speed norms).
    public static let slowWalk = 0.5

    public init(settings: RangingSettings) {
        model = PathLossModel(exponent: settings.pathLossExponent)
        classifier = ProximityClassifier(
            bands: ProximityBands(immediate: settings.immediateDistance, near: settings.nearDistance))
        classifier.switchMargin = settings.proximityHysteresis
        staleAfter = settings.staleAfter
    }

    /// How long a beacon advertising every `interval` stays fresh: `minimum`,
    /// never less than three of its intervals (a slow beacon is not gone
    /// after one missed packet).
    public static func staleAfter(interval: Duration?, minimum: Duration) -> Duration {
        max(minimum, (interval ?? .zero).tripled)
    }

    /// dB/s by which a slow walk would move this beacon's level at its
    /// current distance (at 1 m before there is a level).
    func walkingRate(level: Double, measuredPower: Int8) -> Double {
        let distance = level.isFinite ? model.distance(rssi: level, measuredPower: Double(measuredPower)) : 1
        return model.levelRate(distance: distance, speed: Self.slowWalk)
    }

    /// The distance distribution of a filtered level (`RSSIFilter`'s
    /// `estimate`, `variance`, `packetSpread` and `listener`; passed one by
    /// one, since passing a track's filter whole copied it at every sighting).
    public func distribution(
        level: Double, variance: Double, packetSpread: Double?, listener: RSSIFilter.Listener, measuredPower: Double
    ) -> DistanceDistribution {
        let median = model.distance(rssi: level, measuredPower: measuredPower)
        let sigma = uncertainty.logSigma(
            logDistance: log(median), filterVariance: variance, packetSpread: packetSpread, listener: listener, exponent: model.exponent)
        return DistanceDistribution(median: median, logSigma: sigma)
    }

    /// Updates the track's distance distribution and band after a sighting
    /// or as time passes. Whatever is reported comes from these (`beacon`).
    func range(_ track: inout BeaconTrack, now: Timestamp) {
        let fresh = track.isFresh(at: now, minimum: staleAfter)
        track.wasFresh = fresh
        if track.filter.samples >= minimumSamples, track.filter.estimate.isFinite, fresh {
            let estimate = distribution(
                level: track.filter.estimate, variance: track.filter.variance, packetSpread: track.filter.packetSpread,
                listener: track.filter.listener, measuredPower: Double(track.measuredPower))
            track.distance = estimate
            track.proximity = classifier.band(estimate, previous: track.proximity)
        } else {
            track.distance = nil
            track.proximity = .unknown
        }
    }

    /// What ranging reports for the track as it was last ranged. The
    /// accuracy is solved here, when read, unless `solvingAccuracy` is false
    /// (then it is `nan`, for a caller that solves only the one it keeps).
    static func beacon(_ track: BeaconTrack, venueID: String?, solvingAccuracy: Bool = true) -> RangedBeacon {
        let estimate = track.filter.estimate
        return RangedBeacon(
            identity: track.identity, rssi: track.lastRSSI,
            filteredRSSI: estimate.isFinite ? estimate : Double(track.lastRSSI ?? 0),
            measuredPower: track.measuredPower, advertisedPower: track.frameMeasuredPower, distance: track.distance?.median ?? -1,
            accuracy: track.distance.map { solvingAccuracy ? $0.accuracy : .nan } ?? -1,
            proximity: track.proximity, isStationary: track.wasFresh && track.filter.isStationary, listener: track.filter.listener,
            lastSeen: track.lastSeen, address: track.address, venueID: venueID, isVenueBeacon: track.isVenueBeacon)
    }
}
