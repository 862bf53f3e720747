import BeaconCore
import BeaconSimulation
import Foundation
import Testing

/// SPEC section 5: the filtered RSSI rejects outliers and converges within a few seconds.
@Suite struct RSSIFilterTests {
    static let t0 = EngineTestSupport.t0
    static let packetInterval: Duration = .milliseconds(100)
    /// What a slow walk does to the level of a beacon 3.5 m away (−70 dBm at −59 dBm at 1 m), about 1.2 dB/s.
    static let walkingRate = PathLossModel(exponent: 2).levelRate(distance: 3.5, speed: Ranger.slowWalk)

    /// Feeds `count` samples at 10 Hz, the first at `start`; returns the estimate after each.
    static func feed(
        _ filter: inout RSSIFilter, count: Int, from start: Timestamp, _ rssi: (Int) -> Double
    ) -> [Double] {
        (0..<count).map { index in
            filter.update(rssi: rssi(index), at: start + packetInterval * index, walkingRate: walkingRate)
            return filter.estimate
        }
    }

    @Test func convergesToAConstantLevelFromAWrongFirstSample() throws {
        var filter = RSSIFilter()
        let estimates = Self.feed(&filter, count: 50, from: Self.t0) { $0 == 0 ? -60 : -70 }
        // Within 3 s the level is −70, and it stays there.
        for estimate in estimates[30...] { #expect(abs(estimate - -70) < 0.5) }
        #expect(filter.sigma < RSSIFilter.Parameters().measurementSigma)
    }

    /// After half a second (the filter still young, its gain large) and after ten seconds.
    @Test(arguments: [5, 100], [20.0, -20.0])
    func aSingleOutlierMovesTheEstimateLessThanTwoDecibels(warmUp: Int, outlier: Double) {
        var filter = RSSIFilter()
        var random = SeededRandom(seed: 7)
        _ = Self.feed(&filter, count: warmUp, from: Self.t0) { _ in -70 + 2 * random.gaussian() }
        let before = filter.estimate
        filter.update(rssi: -70 + outlier, at: Self.t0 + Self.packetInterval * warmUp, walkingRate: Self.walkingRate)
        #expect(abs(filter.estimate - before) < 2)
        #expect(abs(filter.estimate - before) > 0)
    }

    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func aTenDecibelStepIsFollowedWithinThreeSeconds(seed: UInt64) {
        var filter = RSSIFilter()
        var random = SeededRandom(seed: seed)
        _ = Self.feed(&filter, count: 200, from: Self.t0) { _ in -70 + 3 * random.gaussian() }
        let step = Self.t0 + .seconds(20)
        let estimates = Self.feed(&filter, count: 100, from: step) { _ in -60 + 3 * random.gaussian() }
        // From 3 s after the step on (sample 30 is at step + 3 s), always within 2 dB of the new level.
        let late = estimates[30...].map { abs($0 - -60) }
        #expect(late.allSatisfy { $0 < 2 }, "worst error after 3 s: \(late.max() ?? 0) dB")
    }
}

/// The estimator while the listener stands still, and after it moves.
@Suite struct StillAveragingTests {
    typealias F = RSSIFilterTests

    /// A minute still at 10 Hz with 4 dB per packet: the level is known far
    /// better than a 4-second average would know it (4/√40 = 0.63 dB), and stays within 1.2 dB.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func theLevelKeepsConvergingWhileStill(seed: UInt64) {
        var filter = RSSIFilter()
        var random = SeededRandom(seed: seed)
        let estimates = F.feed(&filter, count: 1_200, from: F.t0) { _ in -70 + 4 * random.gaussian() }
        #expect(filter.isStationary)
        #expect(filter.sigma < 0.5)
        let late = estimates[600...].map { abs($0 - -70) }
        #expect(late.allSatisfy { $0 < 1.2 }, "worst: \(late.max() ?? 0) dB")
    }

    /// After two minutes still, a 6 dB step (1.5 sigma: a person stepping
    /// from 2 m to 1 m) is followed within 3 s, despite the long averaging.
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func aStepAfterLongStillnessIsFollowedWithinThreeSeconds(seed: UInt64) {
        var filter = RSSIFilter()
        var random = SeededRandom(seed: seed)
        _ = F.feed(&filter, count: 1_200, from: F.t0) { _ in -70 + 4 * random.gaussian() }
        let estimates = F.feed(&filter, count: 100, from: F.t0 + .seconds(120)) { _ in -64 + 4 * random.gaussian() }
        let late = estimates[30...].map { abs($0 - -64) }
        #expect(late.allSatisfy { $0 < 2 }, "worst error after 3 s: \(late.max() ?? 0) dB")
    }

    /// A wild packet after a minute still neither moves the level by 1 dB nor ends stationarity.
    @Test(arguments: [30.0, -30.0])
    func anOutlierDoesNotEndStillness(outlier: Double) {
        var filter = RSSIFilter()
        var random = SeededRandom(seed: 4)
        _ = F.feed(&filter, count: 600, from: F.t0) { _ in -70 + 4 * random.gaussian() }
        #expect(filter.isStationary)
        let before = filter.estimate
        filter.update(rssi: -70 + outlier, at: F.t0 + .seconds(60), walkingRate: F.walkingRate)
        #expect(abs(filter.estimate - before) < 1)
        #expect(filter.isStationary)
    }
}

/// The small-move detector (`RSSIFilter.Parameters.smallMoveDetector`): a
/// CUSUM built for 2 dB, beside the one built for 4 dB.
@Suite struct SmallMoveDetectorTests {
    typealias F = RSSIFilterTests

    /// A filter with only one of the two detectors.
    static func filter(smallMovesOnly: Bool? = nil) -> RSSIFilter {
        var parameters = RSSIFilter.Parameters()
        switch smallMovesOnly {
        case true?: parameters.moveDetector.threshold = .infinity
        case false?: parameters.smallMoveDetector.threshold = .infinity
        case nil: break
        }
        return RSSIFilter(parameters: parameters)
    }

    /// Its threshold is chosen so that on the filter's own noise (4 dB per
    /// packet, Gaussian) it false-alarms no more often than the move detector:
    /// on eight hours at 10 Hz, 28 times against 40.
    @Test func onNoiseAloneItFalseAlarmsNoMoreOftenThanTheMoveDetector() {
        func falseAlarms(smallMovesOnly: Bool) -> Int {
            var filter = Self.filter(smallMovesOnly: smallMovesOnly)
            var random = SeededRandom(seed: 3)
            var alarms = 0
            var since: Timestamp?
            for index in 0..<(8 * 36_000) {
                filter.update(rssi: -70 + 4 * random.gaussian(), at: F.t0 + F.packetInterval * index, walkingRate: F.walkingRate)
                // With no gap in the packets, stillness starts over only when a detector fires.
                if let since, filter.stillSince != since { alarms += 1 }
                since = filter.stillSince
            }
            return alarms
        }
        let moves = falseAlarms(smallMovesOnly: false)
        let smallMoves = falseAlarms(smallMovesOnly: true)
        #expect(moves > 0)
        #expect(smallMoves <= moves)
    }

    /// A robot carrying the phone from 1 m to 4 m at 0.05 m/s (0.4–0.1 dB/s,
    /// under 4 dB per packet): neither detector's design shift, but the small
    /// one keeps re-seeding behind it. Median level error after the first 10 s:
    /// 0.8–1.6 dB (under the 2 dB it is built for), against 1.6–2.5 dB with
    /// the move detector alone (1.61 against 1.62 dB on seed 4).
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func aRobotsSlowRampIsTrackedCloser(seed: UInt64) {
        let model = PathLossModel(exponent: 2)
        func medianError(_ filter: RSSIFilter) -> Double {
            var filter = filter
            var random = SeededRandom(seed: seed)
            var errors: [Double] = []
            for index in 0..<600 {
                let distance = 1 + 0.005 * Double(index)
                let level = -59 - 10 * model.exponent * log10(distance)
                filter.update(
                    rssi: level + 4 * random.gaussian(), at: F.t0 + F.packetInterval * index,
                    walkingRate: model.levelRate(distance: distance, speed: Ranger.slowWalk))
                if index >= 100 { errors.append(abs(filter.estimate - level)) }
            }
            return errors.sorted()[errors.count / 2]
        }
        let both = medianError(Self.filter())
        #expect(both < RSSIFilter.Parameters().smallMoveDetector.shift * RSSIFilter.Parameters().measurementSigma)
        #expect(both < medianError(Self.filter(smallMovesOnly: false)))
    }
}
