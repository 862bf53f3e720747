import BeaconCore
import BeaconSimulation
import Foundation
import Testing

/// The two listener models of `RSSIFilter`: a device set down is reported
/// as such and filtered as before; a device in a swaying hand is recognised,
/// averaged through the sway and still called stationary; a real move is
/// followed within seconds whichever model is reported.
@Suite struct ListenerModelTests {
    typealias S = EngineTestSupport
    typealias Stationary = StationaryTests
    static let interval: Duration = .milliseconds(100)

    /// The level 2 m from the beacon, a sway of `sway` dB over 8 s on top
    /// (a hand; 0 for a device set down), and 4 dB of packet noise.
    static func sample(_ step: Int, level: Double, sway: Double, _ random: inout SeededRandom) -> Double {
        let seconds = Double(step) / 10
        return level + sway * sin(2 * Double.pi * seconds / 8) + 4 * random.gaussian()
    }

    struct Run {
        var handHeld = 0
        var stationary = 0
        var samples = 0
        /// The level's errors, dB.
        var filterErrors: [Double] = []
        /// The same for a 20 s running mean of the same samples.
        var averageErrors: [Double] = []
        /// Median absolute errors, as `beacond evaluate` scores them.
        var filterError: Double { Self.median(filterErrors) }
        var averageError: Double { Self.median(averageErrors) }
        static func median(_ values: [Double]) -> Double { values.map(abs).sorted()[values.count / 2] }
    }

    /// Three minutes at 2 m; the last two are scored.
    static func stand(sway: Double, seed: UInt64) -> Run {
        var filter = RSSIFilter()
        var random = SeededRandom(seed: seed)
        let level = Stationary.ranger.model.rssi(atDistance: 2, measuredPower: Stationary.power)
        var recent: [Double] = []
        var run = Run()
        for step in 0..<1_800 {
            let rssi = sample(step, level: level, sway: sway, &random)
            Stationary.feed(&filter, rssi: rssi, at: S.t0 + interval * step)
            recent.append(rssi)
            if recent.count > 200 { recent.removeFirst() }
            guard step >= 600 else { continue }
            run.samples += 1
            if filter.listener == .handHeld { run.handHeld += 1 }
            if filter.isStationary { run.stationary += 1 }
            run.filterErrors.append(filter.estimate - level)
            run.averageErrors.append(recent.reduce(0, +) / Double(recent.count) - level)
        }
        return run
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func aDeviceSetDownIsReportedAsSetDown(seed: UInt64) {
        let run = Self.stand(sway: 0, seed: seed)
        #expect(Double(run.handHeld) <= 0.05 * Double(run.samples), "hand-held \(run.handHeld) of \(run.samples)")
        #expect(Double(run.stationary) >= 0.85 * Double(run.samples))
        #expect(run.filterError <= run.averageError, "filter \(run.filterError) dB, 20 s mean \(run.averageError) dB")
    }

    /// A sway of ±3 dB over 8 s, which the set-down model alone took for
    /// moves (re-seeding on the swings, still a third of the time): the
    /// level is no worse than a 20 s mean's (0.10–0.15 dB against
    /// 0.32–0.35 dB, median, on these seeds), and the listener is still most of the time.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func aSwayingHandIsRecognisedAveragedAndStill(seed: UInt64) {
        let run = Self.stand(sway: 3, seed: seed)
        #expect(Double(run.handHeld) >= 0.9 * Double(run.samples), "hand-held \(run.handHeld) of \(run.samples)")
        #expect(Double(run.stationary) >= 0.8 * Double(run.samples), "stationary \(run.stationary) of \(run.samples)")
        #expect(run.filterError <= run.averageError, "filter \(run.filterError) dB, 20 s mean \(run.averageError) dB")
    }

    /// After a minute in a swaying hand at 2 m, the listener steps to 1 m
    /// (6 dB): within 10 s the reported level is nearer the new level than the
    /// old (4.8–9.7 s on these seeds; a device set down follows within 3 s,
    /// `RangingTests`). The price of averaging through the sway: the step
    /// looks like a swing until it has outlasted one.
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func aMoveIsFollowedWithinSecondsByAHandHeldListener(seed: UInt64) throws {
        var filter = RSSIFilter()
        var random = SeededRandom(seed: seed)
        let far = Stationary.ranger.model.rssi(atDistance: 2, measuredPower: Stationary.power)
        let near = Stationary.ranger.model.rssi(atDistance: 1, measuredPower: Stationary.power)
        for step in 0..<600 {
            Stationary.feed(&filter, rssi: Self.sample(step, level: far, sway: 3, &random), at: S.t0 + Self.interval * step)
        }
        #expect(filter.listener == .handHeld)
        var followed: Duration?
        for step in 600..<700 {
            let time = S.t0 + Self.interval * step
            Stationary.feed(&filter, rssi: Self.sample(step, level: near, sway: 3, &random), at: time)
            if followed == nil, abs(filter.estimate - near) < abs(filter.estimate - far) { followed = time - (S.t0 + .seconds(60)) }
        }
        let delay = try #require(followed)
        #expect(delay <= .seconds(10))
    }

    /// After a minute in a swaying hand, an 8 dB swing for 3 s (the phone
    /// lifted to the face and lowered): the set-down model takes it for a
    /// move and hands it over, and the hand-over is undone when the level
    /// comes back: 3 s later the level is within 1 dB of where it was and the
    /// listener is still, the stillness of the minute before kept.
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func aSwingThatComesBackIsNotAMove(seed: UInt64) {
        var filter = RSSIFilter()
        var random = SeededRandom(seed: seed)
        let level = Stationary.ranger.model.rssi(atDistance: 2, measuredPower: Stationary.power)
        for step in 0..<660 {
            let swing = (600..<630).contains(step) ? 8.0 : 0
            Stationary.feed(&filter, rssi: Self.sample(step, level: level + swing, sway: 3, &random), at: S.t0 + Self.interval * step)
        }
        #expect(filter.listener == .handHeld)
        #expect(abs(filter.estimate - level) < 1, "level \(filter.estimate), truth \(level)")
        #expect(filter.isStationary)
        #expect(filter.stillSince < S.t0 + .seconds(60))
    }
}
