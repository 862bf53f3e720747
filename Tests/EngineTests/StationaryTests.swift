import BeaconCore
import BeaconSimulation
import Foundation
import Testing

/// The stationary listener (Core Location's `isStationary`), from the signal
/// alone, and the averaging it allows: detected within seconds when still,
/// never claimed during a walk, ended within seconds of one starting.
@Suite struct StationaryTests {
    typealias S = EngineTestSupport
    static let power = -59.0
    static let ranger = Ranger(settings: RangingSettings())

    /// One sample as the engine feeds it: the walking rate is the ranger's for the filter's current distance.
    static func feed(_ filter: inout RSSIFilter, rssi: Double, at time: Timestamp) {
        let distance = filter.estimate.isFinite ? ranger.model.distance(rssi: filter.estimate, measuredPower: power) : 1
        filter.update(rssi: rssi, at: time, walkingRate: ranger.model.levelRate(distance: distance, speed: Ranger.slowWalk))
    }

    /// The level a listener `distance` metres away receives, with Gaussian noise of `noise` dB.
    static func level(_ distance: Double, noise: Double, _ random: inout SeededRandom) -> Double {
        ranger.model.rssi(atDistance: distance, measuredPower: power) + noise * random.gaussian()
    }

    /// Standing 2 m from a beacon (10 Hz, 4 dB per packet; or 1 Hz): stationary within
    /// 8 s (20 s at 1 Hz, whose line needs more samples to rule out a slow walk),
    /// and kept nearly all the time after.
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64], [Duration.milliseconds(100), .seconds(1)])
    func aStillListenerIsDetectedWithinSeconds(seed: UInt64, interval: Duration) throws {
        var filter = RSSIFilter()
        var random = SeededRandom(seed: seed)
        var detected: Duration?
        var after = (samples: 0, still: 0)
        var time = S.t0
        while time < S.t0 + .seconds(120) {
            Self.feed(&filter, rssi: Self.level(2, noise: 4, &random), at: time)
            if detected == nil, filter.isStationary { detected = time - S.t0 }
            if detected != nil {
                after.samples += 1
                if filter.isStationary { after.still += 1 }
            }
            time = time + interval
        }
        let first = try #require(detected)
        #expect(first <= (interval < .seconds(1) ? .seconds(8) : .seconds(20)))
        #expect(Double(after.still) >= 0.85 * Double(after.samples), "still \(after.still) of \(after.samples)")
    }

    /// Walking straight to the beacon from 8 m to 0.5 m, or away from 0.5 m to 8 m,
    /// at a slow 0.5 m/s or an ordinary 1 m/s: never called still.
    @Test(arguments: [1, 2, 3] as [UInt64], [(0.5, true), (1.0, true), (0.5, false), (1.0, false)])
    func aWalkIsNeverCalledStill(seed: UInt64, walk: (speed: Double, towards: Bool)) {
        var filter = RSSIFilter()
        var random = SeededRandom(seed: seed)
        let duration = 7.5 / walk.speed
        var still = 0
        for step in 0..<Int(duration * 10) {
            let walked = walk.speed * Double(step) / 10
            let distance = walk.towards ? 8 - walked : 0.5 + walked
            Self.feed(&filter, rssi: Self.level(distance, noise: 4, &random), at: S.t0 + .milliseconds(100) * step)
            if filter.isStationary { still += 1 }
        }
        #expect(still == 0)
    }

    /// After a minute still at 4 m, walking towards the beacon at 1 m/s ends stationarity within 3 s.
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func startingToWalkEndsStationarityWithinThreeSeconds(seed: UInt64) throws {
        var filter = RSSIFilter()
        var random = SeededRandom(seed: seed)
        for step in 0..<600 { Self.feed(&filter, rssi: Self.level(4, noise: 4, &random), at: S.t0 + .milliseconds(100) * step) }
        #expect(filter.isStationary)
        let start = S.t0 + .seconds(60)
        var ended: Duration?
        for step in 0..<35 {
            let time = start + .milliseconds(100) * step
            Self.feed(&filter, rssi: Self.level(4 - Double(step) / 10, noise: 4, &random), at: time)
            if ended == nil, !filter.isStationary { ended = time - start }
        }
        let end = try #require(ended)
        #expect(end <= .seconds(3))
    }

    /// A silence long enough to hide a move (over 15.36 s) starts stillness over.
    @Test func aLongGapEndsStationarity() {
        var filter = RSSIFilter()
        var random = SeededRandom(seed: 9)
        for step in 0..<100 { Self.feed(&filter, rssi: Self.level(2, noise: 2, &random), at: S.t0 + .milliseconds(100) * step) }
        #expect(filter.isStationary)
        Self.feed(&filter, rssi: Self.level(2, noise: 2, &random), at: S.t0 + .seconds(40))
        #expect(!filter.isStationary)
        #expect(filter.stillSince == S.t0 + .seconds(40))
    }

    /// Times at the ends of the clock, and going backwards: no trap, a finite
    /// level, and never called still across such jumps.
    @Test func extremeAndBackwardTimesKeepTheFilterSane() {
        var filter = RSSIFilter()
        let times = [Int64.min, Int64.max, 0, Int64.max - 1, Int64.min + 1, 5, 5, 4].map(Timestamp.init(microsecondsSinceEpoch:))
        for (index, time) in times.enumerated() {
            Self.feed(&filter, rssi: index.isMultiple(of: 2) ? -60 : -127, at: time)
            #expect(filter.estimate.isFinite && filter.variance.isFinite)
            #expect(!filter.isStationary)
        }
        #expect(filter.packetSpread.map(\.isFinite) ?? true)
    }

    /// Through the engine: each ranged beacon says stationary once its level
    /// is flat, and the nearest venue once both counters' have said it for the
    /// switch dwell (2 s); a stale beacon does not.
    @Test func theEngineReportsAStationaryListener() throws {
        var engine = BeaconEngine(configuration: S.configuration(), restored: EngineState(regions: ["cafe": .inside]), now: S.t0)
        let beacons = [
            TestBeacon(identity: S.identity(1, 1), interval: .milliseconds(100), rssi: -62, noise: 3, seed: 1),
            TestBeacon(identity: S.identity(1, 2), interval: .milliseconds(100), rssi: -70, noise: 3, seed: 2),
        ]
        EngineDriver.play(&engine, beacons, from: S.t0, until: S.t0 + .seconds(1))
        #expect(engine.nearestVenue?.isStationary == false)
        EngineDriver.play(&engine, beacons, from: S.t0 + .seconds(1), until: S.t0 + .seconds(6))
        #expect(engine.rangedBeacons().allSatisfy { $0.isStationary })
        EngineDriver.play(&engine, beacons, from: S.t0 + .seconds(6), until: S.t0 + .seconds(9))
        let venue = try #require(engine.nearestVenue)
        #expect(venue.venueID == "counter-1")
        #expect(venue.isStationary)
        #expect(engine.rangedBeacons().allSatisfy { $0.isStationary })
        // Counter 2 falls silent: stale, so neither it nor the listener is called still.
        EngineDriver.play(&engine, [beacons[0]], from: S.t0 + .seconds(9), until: S.t0 + .seconds(15))
        #expect(engine.rangedBeacon(S.identity(1, 2))?.isStationary == false)
        #expect(engine.rangedBeacon(S.identity(1, 1))?.isStationary == true)
    }
}
