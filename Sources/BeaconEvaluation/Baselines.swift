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
    /// A beacon not heard for this long is out of the answer, as for beacond's ranger by default.
    public static let staleAfter = RangingSettings().staleAfter
    private let model: PathLossModel
    private var samples: [BeaconIdentity: RecentRSSI] = [:]
    private var power: [BeaconIdentity: Double] = [:]

    public init(kind: Kind, settings: RangingSettings) {
        self.kind = kind
        model = PathLossModel(exponent: settings.pathLossExponent)
    }

    public mutating func observe(_ identity: BeaconIdentity, rssi: Int8, measuredPower: Int8, at time: Timestamp) {
        power[identity] = Double(measuredPower)
        samples[identity, default: RecentRSSI()].append(rssi, at: time, keeping: kind == .raw ? nil : Self.window)
    }

    /// The estimated distance of a beacon, or `nil` if it is not fresh.
    public func distance(_ identity: BeaconIdentity, now: Timestamp) -> Double? {
        guard let recent = samples[identity], let last = recent.last, now - last.time <= Self.staleAfter,
            let power = power[identity]
        else { return nil }
        let level = kind == .raw ? Double(last.rssi) : recent.trimmedMean(trimming: 10)
        return model.distance(rssi: level, measuredPower: power)
    }

    /// The venue of the closest fresh beacon.
    public func nearestVenue(_ configuration: Configuration, now: Timestamp) -> String? {
        var best: (id: String, distance: Double)?
        for identity in samples.keys.sorted() {
            guard let venue = configuration.venues.first(where: { $0.constraint.matches(identity) }),
                let distance = distance(identity, now: now)
            else { continue }
            if let limit = configuration.maxDistance(of: venue), distance > limit { continue }
            if best == nil || distance < best!.distance { best = (venue.id, distance) }
        }
        return best?.id
    }
}

/// A beacon's RSSI over the last `window` (or the last one alone), with a
/// count per dBm value: the trimmed mean is a walk over 256 counts, and a
/// sample comes and goes in a step, however many a file puts in 20 s.
/// (Sorting the window for every row made a trace of many rows a second
/// cost the square of them: 20,000 rows in 0.2 s took 10.7 s.)
struct RecentRSSI: Sendable {
    private var times: [Timestamp] = []
    private var values: [Int8] = []
    private var head = 0
    private var counts = [Int](repeating: 0, count: 256)

    var last: (time: Timestamp, rssi: Int8)? { values.count > head ? (times[times.count - 1], values[values.count - 1]) : nil }

    /// Adds a sample and drops those older than `window` before it (all but
    /// this one for `nil`).
    mutating func append(_ rssi: Int8, at time: Timestamp, keeping window: Duration?) {
        times.append(time)
        values.append(rssi)
        counts[Int(rssi) + 128] += 1
        while head < values.count - 1, window.map({ time - times[head] >= $0 }) ?? true {
            counts[Int(values[head]) + 128] -= 1
            head += 1
        }
        // The dropped front is given back once it is half the storage.
        if head > 64, head * 2 > values.count {
            times.removeFirst(head)
            values.removeFirst(head)
            head = 0
        }
    }

    /// The mean after leaving out the lowest and the highest `percent` of the samples (rounded down).
    func trimmedMean(trimming percent: Int) -> Double {
        let count = values.count - head
        let trim = count * percent / 100
        var (skip, take, sum) = (trim, count - 2 * trim, 0)
        for (index, number) in counts.enumerated() where number > 0 && take > 0 {
            let skipped = min(skip, number)
            skip -= skipped
            let taken = min(take, number - skipped)
            take -= taken
            sum += taken * (index - 128)
        }
        return Double(sum) / Double(count - 2 * trim)
    }
}
