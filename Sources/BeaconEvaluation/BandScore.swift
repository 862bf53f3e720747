import BeaconCore

/// Band accuracy, median distance error, accuracy coverage and band switches of one ranger.
public struct BandScore: Sendable, Equatable {
    public var samples = 0
    public var correctBands = 0
    /// Band switches of each beacon scored (SPEC §5 asks for them per beacon; one that never switched counts 0).
    public private(set) var switchesPerBeacon: [BeaconIdentity: Int] = [:]
    /// Estimates that came with an accuracy, and those whose truth lay within it.
    public var withAccuracy = 0
    public var covered = 0
    /// Estimates made while the beacon said the listener was stationary.
    public var stationary = 0
    /// Estimates made while the hand-held listener model was reported.
    public var handHeld = 0
    private var errors: [Double] = []
    /// |error| / distance of every estimate, and accuracy / distance of those with an accuracy.
    private var relativeErrors: [Double] = []
    private var relativeAccuracies: [Double] = []
    /// Per true distance: estimates with an accuracy, and those covered.
    private var byDistance: [Double: Tally] = [:]

    private struct Tally: Sendable, Equatable {
        var estimates = 0
        var covered = 0
    }
    private var lastBand: [BeaconIdentity: Proximity] = [:]

    public init() {}

    /// One estimate against the truth. `distance` is `nil` when unknown, which
    /// counts as a wrong band and is left out of the distance error; `accuracy`
    /// is `nil` for a ranger that claims none.
    public mutating func record(
        _ identity: BeaconIdentity, band: Proximity, distance: Double?, accuracy: Double?, isStationary: Bool,
        isHandHeld: Bool = false, trueDistance: Double, bands: ProximityBands
    ) {
        samples += 1
        if band == bands.band(for: trueDistance) { correctBands += 1 }
        if let distance {
            errors.append(abs(distance - trueDistance))
            if distance > 0 { relativeErrors.append(abs(distance - trueDistance) / distance) }
            if let accuracy {
                if distance > 0 { relativeAccuracies.append(accuracy / distance) }
                let inside = abs(distance - trueDistance) <= accuracy
                withAccuracy += 1
                byDistance[trueDistance, default: Tally()].estimates += 1
                if inside {
                    covered += 1
                    byDistance[trueDistance, default: Tally()].covered += 1
                }
            }
        }
        if isStationary { stationary += 1 }
        if isHandHeld { handHeld += 1 }
        let previous = lastBand.updateValue(band, forKey: identity)
        switchesPerBeacon[identity, default: 0] += previous == nil || previous == band ? 0 : 1
    }

    /// One estimate of a ranger that claims no accuracy and answers by plain
    /// band thresholds (the baselines, the stand average): its band is its
    /// distance's, worked out once here.
    public mutating func record(_ identity: BeaconIdentity, plainDistance distance: Double?, trueDistance: Double, bands: ProximityBands) {
        record(
            identity, band: distance.map { bands.band(for: $0) } ?? .unknown, distance: distance, accuracy: nil, isStationary: false,
            trueDistance: trueDistance, bands: bands)
    }

    /// Band switches over all beacons.
    public var switches: Int { switchesPerBeacon.values.reduce(0, +) }

    public var bandAccuracy: Double { samples == 0 ? 0 : Double(correctBands) / Double(samples) }

    /// Share of estimates with `|distance − truth| ≤ accuracy`: about 68 % for
    /// an honest one-sigma accuracy; `nil` for a ranger that claims none.
    public var coverage: Double? { withAccuracy == 0 ? nil : Double(covered) / Double(withAccuracy) }

    /// Coverage with each true distance weighted equally: a recording that
    /// stands ten times longer at one distance (often the one it was
    /// calibrated at) does not decide the figure alone.
    public var coverageByDistance: Double? {
        guard !byDistance.isEmpty else { return nil }
        // Summed in the order of the distances, so the figure is the same to its last digit on every run.
        return byDistance.sorted { $0.key < $1.key }.map { Double($0.value.covered) / Double($0.value.estimates) }.reduce(0, +)
            / Double(byDistance.count)
    }

    public var stationaryShare: Double { samples == 0 ? 0 : Double(stationary) / Double(samples) }

    /// Share of estimates the hand-held listener model made (`RSSIFilter.Listener`).
    public var handHeldShare: Double { samples == 0 ? 0 : Double(handHeld) / Double(samples) }

    public var medianError: Double { Self.quantile(errors, 0.5) ?? .nan }

    /// The accuracy as a share of the distance, median: how wide the ranger claims to be.
    public var medianRelativeAccuracy: Double? { Self.quantile(relativeAccuracies, 0.5) }

    /// The accuracy as a share of the distance that would have covered
    /// two thirds of this recording (|error| / distance at the 68.27th
    /// percentile). Recordings disagree on it: a file that stands most of
    /// its rows where it was calibrated needs a narrow one, a file with
    /// strong shadowing a wide one — no accuracy that does not know the
    /// truth can meet both.
    public var relativeErrorAtOneSigma: Double? { Self.quantile(relativeErrors, DistanceDistribution.oneSigma) }

    /// The q-quantile (linear between order statistics; the median of an even count is the mean of the middle two).
    static func quantile(_ values: [Double], _ q: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let position = q * Double(sorted.count - 1)
        let lower = Int(position.rounded(.down))
        let upper = min(lower + 1, sorted.count - 1)
        return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - Double(lower))
    }
}
