/// The most recent RSSI samples of one beacon within a time span, in a
/// fixed-size ring: bounded memory per beacon however fast it advertises.
struct SampleWindow: Sendable {
    static let capacity = 32
    private var times: [Int64] = []
    private var values: [Double] = []
    private var head = 0

    init() {
        times.reserveCapacity(Self.capacity)
        values.reserveCapacity(Self.capacity)
    }

    var count: Int { values.count }

    mutating func append(_ value: Double, at time: Timestamp, keeping span: Duration) {
        if values.count < Self.capacity {
            values.append(value)
            times.append(time.microsecondsSinceEpoch)
        } else {
            values[head] = value
            times[head] = time.microsecondsSinceEpoch
            head = (head + 1) % Self.capacity
        }
        let oldest = time.microsecondsSinceEpoch - span.microseconds
        if times.contains(where: { $0 < oldest }) {
            let kept = zip(times, values).filter { $0.0 >= oldest }
            times = kept.map(\.0)
            values = kept.map(\.1)
            head = 0
        }
    }

    mutating func removeAll() {
        times.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
        head = 0
    }

    /// Median of the window, and the median absolute deviation from `center` scaled to a sigma.
    func median() -> Double {
        Self.median(of: values)
    }

    func robustSigma(around center: Double) -> Double {
        1.4826 * Self.median(of: values.map { abs($0 - center) })
    }

    private static func median(of values: [Double]) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
