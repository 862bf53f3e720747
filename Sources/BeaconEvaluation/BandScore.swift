import BeaconCore

/// Band accuracy, median distance error and band switches of one ranger.
public struct BandScore: Sendable, Equatable {
    public var samples = 0
    public var correctBands = 0
    public var switches = 0
    private var errors: [Double] = []
    private var lastBand: [BeaconIdentity: Proximity] = [:]

    public init() {}

    /// One estimate against the truth. `distance` is `nil` when unknown, which
    /// counts as a wrong band and is left out of the distance error.
    public mutating func record(
        _ identity: BeaconIdentity, band: Proximity, distance: Double?, trueDistance: Double, bands: ProximityBands
    ) {
        samples += 1
        if band == bands.band(for: trueDistance) { correctBands += 1 }
        if let distance { errors.append(abs(distance - trueDistance)) }
        if let previous = lastBand[identity], previous != band { switches += 1 }
        lastBand[identity] = band
    }

    public var bandAccuracy: Double { samples == 0 ? 0 : Double(correctBands) / Double(samples) }

    public var medianError: Double {
        guard !errors.isEmpty else { return .nan }
        let sorted = errors.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
