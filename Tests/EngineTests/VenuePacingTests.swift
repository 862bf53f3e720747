@testable import BeaconCore
@testable import BeaconService
import Testing

/// Venue1's PropertiesChanged on a hand clock: `Nearest` and `Proximity` at
/// once, a distance at most once a second per venue and `budget` venues per
/// period in all, the longest waiting first.
@Suite struct VenuePacingTests {
    static let t0 = Timestamp.milliseconds(1_000_000)
    static let distance = ["Distance"]

    @Test func nearestAndProximityGoAtOnceADistanceOnceASecond() {
        var pacing = VenuePacing(coalescing: .seconds(1), budget: 20, period: .milliseconds(200))
        #expect(pacing.admit([("a", Self.distance)], now: Self.t0) == ["a"])
        // 200 ms later: the distance waits; Nearest (with it) goes.
        #expect(pacing.admit([("a", Self.distance)], now: Self.t0 + .milliseconds(200)).isEmpty)
        #expect(pacing.admit([("a", ["Distance", "Nearest"])], now: Self.t0 + .milliseconds(400)) == ["a"])
        #expect(pacing.admit([("a", ["Proximity"])], now: Self.t0 + .milliseconds(600)) == ["a"])
        // A second after the last announcement, a distance goes again.
        #expect(pacing.admit([("a", Self.distance)], now: Self.t0 + .milliseconds(1_400)).isEmpty)
        #expect(pacing.admit([("a", Self.distance)], now: Self.t0 + .milliseconds(1_600)) == ["a"])
    }

    /// A thousand venues whose distances all change at every publication
    /// (5 a second): at most 20 announcements per 200 ms, and every venue
    /// has its turn within ten seconds (1,000 / 100 a second).
    @Test func aThousandChangingVenuesTakeTheBudgetInTurn() {
        var pacing = VenuePacing(coalescing: .seconds(1), budget: 20, period: .milliseconds(200))
        let venues = (0..<1_000).map { (id: "v\($0)", names: Self.distance) }
        var lastTurn: [String: Timestamp] = [:]
        var longestWait = Duration.zero
        for step in 0..<250 {  // 50 s
            let now = Self.t0 + .milliseconds(Int64(step) * 200)
            let admitted = pacing.admit(venues, now: now)
            #expect(admitted.count <= 20)
            for id in admitted {
                if let last = lastTurn[id] { longestWait = max(longestWait, now - last) }
                lastTurn[id] = now
            }
        }
        #expect(lastTurn.count == 1_000)
        #expect(longestWait <= .seconds(10), "\(longestWait)")
        // Urgent changes are never held back by the spent budget.
        #expect(pacing.admit([("v1", ["Nearest"])], now: Self.t0 + .milliseconds(50_000)) == ["v1"])
    }
}
