import BeaconCore
import BeaconSimulation
import Foundation
import Testing

@Suite struct RangingTests {
    typealias S = EngineTestSupport

    @Test func filterConvergesAndShrugsOffAnOutlier() {
        var filter = RSSIFilter()
        var random = SeededRandom(seed: 1)
        var time = S.t0
        for _ in 0..<100 {
            filter.update(rssi: -70 + 3 * random.gaussian(), at: time, walkingRate: RSSIFilterTests.walkingRate)
            time = time + .milliseconds(100)
        }
        #expect(abs(filter.estimate - -70) < 1.5)
        let before = filter.estimate
        filter.update(rssi: -50, at: time, walkingRate: RSSIFilterTests.walkingRate)
        #expect(abs(filter.estimate - before) < 2)
    }

    @Test func filterFollowsARealStepWithinThreeSeconds() {
        var filter = RSSIFilter()
        var random = SeededRandom(seed: 2)
        var time = S.t0
        for _ in 0..<200 {
            filter.update(rssi: -70 + 3 * random.gaussian(), at: time, walkingRate: RSSIFilterTests.walkingRate)
            time = time + .milliseconds(100)
        }
        let step = time
        var settled: Timestamp?
        for _ in 0..<100 {
            filter.update(rssi: -60 + 3 * random.gaussian(), at: time, walkingRate: RSSIFilterTests.walkingRate)
            if settled == nil, abs(filter.estimate - -60) < 2 { settled = time }
            time = time + .milliseconds(100)
        }
        let after = try! #require(settled)
        #expect(after - step <= .seconds(3))
        #expect(abs(filter.estimate - -60) < 2)
    }

    @Test func distanceFollowsTheLogDistanceModel() {
        let model = PathLossModel(exponent: 2)
        #expect(abs(model.distance(rssi: -59, measuredPower: -59) - 1) < 1e-9)
        #expect(abs(model.distance(rssi: -79, measuredPower: -59) - 10) < 1e-9)
        // d = 10^((P − RSSI)/(10 n)) with n = 2.5: 10^(10/25)
        #expect(abs(PathLossModel(exponent: 2.5).distance(rssi: -69, measuredPower: -59) - 2.5118864315) < 1e-6)
    }

    @Test func venueCalibrationOverridesTheFramePower() {
        var plain = BeaconEngine(configuration: S.configuration(), now: S.t0)
        var calibrated = BeaconEngine(configuration: S.configuration { $0.venues[0].measuredPower = -69 }, now: S.t0)
        S.feed(&plain, [(S.identity(), -69, .milliseconds(100))], from: S.t0, for: .seconds(5))
        S.feed(&calibrated, [(S.identity(), -69, .milliseconds(100))], from: S.t0, for: .seconds(5))
        let a = try! #require(plain.rangedBeacon(S.identity()))
        let b = try! #require(calibrated.rangedBeacon(S.identity()))
        #expect(abs(a.distance - 10 / 3.1622776601) < 0.2)  // 10^(10/20) with P1m -59
        #expect(abs(b.distance - 1) < 0.1)
        #expect(b.measuredPower == -69)
        #expect(a.accuracy > 0 && b.accuracy > 0 && a.accuracy > b.accuracy)
    }

    @Test func unknownWithTooFewSamplesOrWhenStale() {
        var engine = BeaconEngine(configuration: S.configuration(), restored: EngineState(regions: ["cafe": .inside]), now: S.t0)
        var events: [EngineEvent] = []
        engine.ingest(S.sighting(S.identity(), rssi: nil, at: S.t0), into: &events)
        engine.ingest(S.sighting(S.identity(), rssi: -60, at: S.t0 + .milliseconds(50)), into: &events)
        #expect(engine.rangedBeacon(S.identity())?.proximity == .unknown)
        engine.ingest(S.sighting(S.identity(), rssi: -60, at: S.t0 + .milliseconds(100)), into: &events)
        #expect(engine.rangedBeacon(S.identity())?.proximity != .unknown)
        engine.tick(now: S.t0 + .seconds(6), into: &events)
        #expect(engine.rangedBeacon(S.identity())?.proximity == .unknown)
    }

    @Test func aBeaconBackAfterALongGapAppearsAgain() {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        var events = S.feed(&engine, [(S.identity(), -60, .milliseconds(100))], from: S.t0, for: .seconds(2))
        #expect(events.contains(.beaconAppeared(S.identity())))
        events = S.feed(&engine, [], from: S.t0 + .seconds(2), for: .seconds(15))
        #expect(events.contains(.beaconDisappeared(S.identity())))
        events = S.feed(&engine, [(S.identity(), -70, .milliseconds(100))], from: S.t0 + .seconds(30), for: .seconds(3))
        #expect(events.contains(.beaconAppeared(S.identity())))
        #expect(abs((engine.rangedBeacon(S.identity())?.filteredRSSI ?? 0) - -70) < 1)
    }

    /// A beacon on the edge between near and far with a dB of noise: the band
    /// settles once and stays (filter plus classifier margin).
    @Test func aBeaconOnABandEdgeDoesNotFlicker() {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        // -59 - 20·log10(2.7) ≈ -67.6 dBm: the near/far decision edge of a settled filter.
        let beacon = TestBeacon(identity: S.identity(), interval: .milliseconds(100), rssi: -68, noise: 1, seed: 3)
        EngineDriver.play(&engine, [beacon], from: S.t0, until: S.t0 + .seconds(5))
        var bands: [Proximity] = []
        for second in 5..<65 {
            let start = S.t0 + .seconds(Int64(second))
            EngineDriver.play(&engine, [beacon], from: start, until: start + .seconds(1))
            bands.append(engine.rangedBeacon(S.identity())?.proximity ?? .unknown)
        }
        #expect(!bands.contains(.unknown))
        #expect(zip(bands, bands.dropFirst()).filter { $0 != $1 }.count <= 1)
    }

    @Test func rangedBeaconsAreNearestFirstUnknownLast() {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        S.feed(&engine, [(S.identity(1, 1), -75, .milliseconds(100)), (S.identity(1, 2), -55, .milliseconds(100))], from: S.t0, for: .seconds(4))
        var events: [EngineEvent] = []
        engine.ingest(S.sighting(S.identity(2, 9), rssi: nil, at: S.t0 + .milliseconds(3_900)), into: &events)
        engine.ingest(S.sighting(S.identity(2, 9), rssi: -40, at: S.t0 + .seconds(4)), into: &events)
        let order = engine.rangedBeacons().map(\.identity)
        #expect(order == [S.identity(1, 2), S.identity(1, 1), S.identity(2, 9)])
        #expect(engine.rangedBeacons().last?.proximity == .unknown)
    }
}
