import BeaconCore

/// Band accuracy, median distance error, accuracy coverage and band switches of one ranger.
public struct BandScore: Sendable, Equatable {
    public var samples = 0
    public var correctBands = 0
    public var switches = 0
    /// Estimates that came with an accuracy, and those whose truth lay within it.
    public var withAccuracy = 0
    public var covered = 0
    /// Estimates made while the beacon said the listener was stationary.
    public var stationary = 0
    private var errors: [Double] = []
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
        trueDistance: Double, bands: ProximityBands
    ) {
        samples += 1
        if band == bands.band(for: trueDistance) { correctBands += 1 }
        if let distance {
            errors.append(abs(distance - trueDistance))
            if let accuracy {
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
        if let previous = lastBand[identity], previous != band { switches += 1 }
        lastBand[identity] = band
    }

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

    public var medianError: Double {
        guard !errors.isEmpty else { return .nan }
        let sorted = errors.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
