/// The most recent RSSI samples of one beacon, in a fixed-size ring: bounded
/// memory per beacon however fast it advertises. Read only when the filter
/// detects a change, to re-seed its level from the samples since the change.
struct SampleWindow: Sendable {
    static let capacity = 64
    private var times: [Int64] = []
    private var values: [Double] = []
    private var next = 0

    init() {
        times.reserveCapacity(Self.capacity)
        values.reserveCapacity(Self.capacity)
    }

    var count: Int { values.count }

    mutating func append(_ value: Double, at time: Timestamp) {
        if values.count < Self.capacity {
            values.append(value)
            times.append(time.microsecondsSinceEpoch)
        } else {
            values[next] = value
            times[next] = time.microsecondsSinceEpoch
            next = (next + 1) % Self.capacity
        }
    }

    /// Median of the samples taken at or after `start` (and not older than `span` before `now`).
    /// `since` is the time of the earliest sample used.
    func median(since start: Timestamp, now: Timestamp, span: Duration) -> (median: Double, count: Int, since: Timestamp)? {
        let earliest = max(start.microsecondsSinceEpoch, now.microsecondsSinceEpoch.saturatingSubtract(span.microseconds))
        var selected: [Double] = []
        selected.reserveCapacity(values.count)
        var first = Int64.max
        for index in values.indices where times[index] >= earliest {
            selected.append(values[index])
            first = min(first, times[index])
        }
        guard !selected.isEmpty else { return nil }
        selected.sort()
        let middle = selected.count / 2
        let median = selected.count % 2 == 1 ? selected[middle] : (selected[middle - 1] + selected[middle]) / 2
        return (median, selected.count, Timestamp(microsecondsSinceEpoch: first))
    }

    /// Visits the samples taken at or after `start`, oldest first.
    func forEach(since start: Timestamp, _ body: (Double, Timestamp) -> Void) {
        forEach(where: { $0 >= start.microsecondsSinceEpoch }, body)
    }

    /// Visits the samples taken after `time`, oldest first.
    func forEach(after time: Timestamp, _ body: (Double, Timestamp) -> Void) {
        forEach(where: { $0 > time.microsecondsSinceEpoch }, body)
    }

    private func forEach(where isIncluded: (Int64) -> Bool, _ body: (Double, Timestamp) -> Void) {
        for offset in values.indices {
            let index = values.count < Self.capacity ? offset : (next + offset) % Self.capacity
            if isIncluded(times[index]) {
                body(values[index], Timestamp(microsecondsSinceEpoch: times[index]))
            }
        }
    }
}
