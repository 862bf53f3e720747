import BeaconCore
import BeaconEvaluation
import Testing

/// `SecondAverage`: a recording of packets as a receiver that reports each
/// beacon once a second with the mean of that second's readings (iOS).
struct SecondAverageTests {
    private static func trace(_ rows: [(time: Int64, minor: Int, rssi: Int, truth: Double)]) throws -> Trace {
        let lines = rows.map { "\($0.time),E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,\($0.minor),\($0.rssi),-59,\($0.truth)" }
        return try Trace(csv: ([Trace.header] + lines).joined(separator: "\n"))
    }

    @Test func aSecondsReadingsBecomeTheirMeanAtItsLastRowWithItsTruth() throws {
        let averaged = SecondAverage.applied(to: try Self.trace([
            (0, 1, -60, 1), (300, 1, -63, 1), (900, 1, -64, 1.5),  // mean −62.33: −62, the last row's truth and time
            (1_000, 1, -70, 2), (1_999, 1, -71, 2),  // −70.5 rounds away from zero: −71
        ]))
        #expect(averaged.rows.map(\.rssi) == [-62, -71])
        #expect(averaged.rows.map(\.timeMilliseconds) == [900, 1_999])
        #expect(averaged.rows.map(\.trueDistance) == [1.5, 2])
        #expect(averaged.rows.allSatisfy { $0.measuredPower == -59 })
    }

    @Test func noReadingsAreLeftOutAndASecondWithoutAnyIsNoReading() throws {
        let averaged = SecondAverage.applied(to: try Self.trace([
            (0, 1, 127, 1), (100, 1, -60, 1), (200, 1, 0, 1), (300, 1, -62, 1),  // −61, not pulled towards 0 or 127
            (1_100, 1, 127, 1), (1_200, 1, 0, 1),
        ]))
        #expect(averaged.rows.map(\.rssi) == [-61, 127])
    }

    @Test func eachBeaconIsReportedOnceASecondInTheOrderItCameIn() throws {
        let averaged = SecondAverage.applied(to: try Self.trace([
            (0, 2, -70, 3), (100, 1, -60, 1), (200, 2, -72, 3), (1_000, 1, -61, 1), (1_500, 2, -74, 3), (-1, 1, -50, 1),
        ]))
        // Second −1 (time −1 ms rounds down), then second 0 (minor 2 first), then second 1 (minor 1 first).
        #expect(averaged.rows.map(\.identity.minor) == [1, 2, 1, 1, 2])
        #expect(averaged.rows.map(\.rssi) == [-50, -71, -60, -61, -74])
        // A second's rows are reported at once, at its latest row: time never goes back.
        #expect(averaged.rows.map(\.timeMilliseconds) == [-1, 200, 200, 1_500, 1_500])
    }

    @Test func aMeanIsAlwaysAReading() throws {
        // −1 and +1 average to 0, which means "no reading": kept at −1, as a receiver would report it.
        let averaged = SecondAverage.applied(to: try Self.trace([(0, 1, -1, 1), (100, 1, 1, 1)]))
        #expect(averaged.rows.map(\.rssi) == [-1])
    }
}
