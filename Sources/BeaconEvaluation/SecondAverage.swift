import BeaconCore

/// A receiver that reports each beacon once a second, with the mean of the
/// readings of that second, as iOS reports a ranged beacon (`CLBeacon.rssi`:
/// "the average signal strength of the samples received since Core Location
/// last reported the range of the beacon", once a second). Made from a
/// recording of single packets, it shows how beacond ranges on such a
/// receiver with the room's real fading, not a simulator's:
/// `beacond evaluate --trace FILE --per-second`.
public enum SecondAverage {
    /// One row per beacon and second of `trace`: the mean of its readings in
    /// dBm, rounded to whole dB as receivers report it and kept within
    /// −127…−1 dBm (a second without a reading, `BeaconSighting.reading`, gives 127, no
    /// reading), with the measured power and truth of the beacon's last row
    /// in that second. All of a second's rows are reported at once, at the
    /// time of its latest row, so time never goes back; within a second they
    /// go by each beacon's first row in it. Rows are grouped by the second
    /// their `time_ms` falls in, so a file whose time goes back is put in order.
    public static func applied(to trace: Trace) -> Trace {
        struct Second {
            var first: Int
            var last: Trace.Row
            var sum = 0
            var readings = 0
        }
        var seconds: [Key: Second] = [:]
        var reported: [Int64: Int64] = [:]
        for (index, row) in trace.rows.enumerated() {
            let number = Timestamp.milliseconds(row.timeMilliseconds).wholeSeconds
            let key = Key(identity: row.identity, second: number)
            var second = seconds[key] ?? Second(first: index, last: row)
            second.last = row
            if let reading = BeaconSighting.reading(row.rssi) {
                second.sum += Int(reading)
                second.readings += 1
            }
            seconds[key] = second
            reported[number] = max(reported[number] ?? .min, row.timeMilliseconds)
        }
        var averaged = trace
        averaged.rows = seconds.sorted { ($0.key.second, $0.value.first) < ($1.key.second, $1.value.first) }.map { key, second in
            var row = second.last
            row.timeMilliseconds = reported[key.second]!
            if second.readings == 0 {
                row.rssi = 127
            } else {
                let mean = (Double(second.sum) / Double(second.readings)).rounded()
                row.rssi = Int8(min(-1, max(-127, mean)))
            }
            return row
        }
        return averaged
    }

    private struct Key: Hashable {
        var identity: BeaconIdentity
        var second: Int64
    }
}
