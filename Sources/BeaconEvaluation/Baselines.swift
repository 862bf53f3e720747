import BeaconCore

/// The two naive rangers beacond is measured against, fed the same sightings.
///
/// - `raw`: each advertisement's RSSI alone through the path-loss model.
/// - `runningAverage`: the 10%-trimmed mean of the last 20 s of RSSI.
/// Both use plain band thresholds and pick the nearest venue with no margin
/// or dwell.
public struct BaselineRanger: Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        case raw = "strongest raw RSSI"
        case runningAverage = "20 s running average"
    }

    public let kind: Kind
    public static let window: Duration = .seconds(20)
    /// A beacon not heard for this long is out of the answer, as for beacond's ranger.
    public static let staleAfter: Duration = .seconds(5)
    private let model: PathLossModel
    private var samples: [BeaconIdentity: [(time: Timestamp, rssi: Double)]] = [:]
    private var power: [BeaconIdentity: Double] = [:]

    public init(kind: Kind, settings: RangingSettings) {
        self.kind = kind
        model = PathLossModel(exponent: settings.pathLossExponent)
    }

    public mutating func observe(_ identity: BeaconIdentity, rssi: Int8, measuredPower: Int8, at time: Timestamp) {
        power[identity] = Double(measuredPower)
        var history = samples[identity, default: []]
        history.append((time, Double(rssi)))
        let keep = kind == .raw ? 1 : history.count - (history.firstIndex { time - $0.time < Self.window } ?? history.count)
        if history.count > keep { history.removeFirst(history.count - keep) }
        samples[identity] = history
    }

    /// The estimated distance of a beacon, or `nil` if it is not fresh.
    public func distance(_ identity: BeaconIdentity, now: Timestamp) -> Double? {
        guard let history = samples[identity], let last = history.last, now - last.time <= Self.staleAfter,
            let power = power[identity]
        else { return nil }
        let level: Double
        switch kind {
        case .raw:
            level = last.rssi
        case .runningAverage:
            let sorted = history.map(\.rssi).sorted()
            let trim = sorted.count / 10
            let kept = sorted[trim..<(sorted.count - trim)]
            level = kept.reduce(0, +) / Double(kept.count)
        }
        return model.distance(rssi: level, measuredPower: power)
    }

    /// The venue of the closest fresh beacon.
    public func nearestVenue(_ venues: [VenueDefinition], now: Timestamp) -> String? {
        var best: (id: String, distance: Double)?
        for identity in samples.keys.sorted() {
            guard let venue = venues.first(where: { $0.constraint.matches(identity) }),
                let distance = distance(identity, now: now)
            else { continue }
            if let limit = venue.maxDistance, distance > limit { continue }
            if best == nil || distance < best!.distance { best = (venue.id, distance) }
        }
        return best?.id
    }
}
