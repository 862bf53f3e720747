import BeaconCore
import Foundation
import Testing

/// SPEC section 4: entering on evidence, exiting by timeout or weak signal, hysteresis, restore.
@Suite struct RegionMonitorSpecTests {
    typealias S = EngineTestSupport
    typealias D = EngineDriver
    static let beacon = S.identity(1, 1)
    /// Enter at −80 dBm or better, leave below −90 dBm.
    static let thresholds = S.configuration {
        $0.ranging.enterRSSI = -80
        $0.ranging.exitRSSI = -90
    }

    static func at(_ milliseconds: Int64) -> Timestamp { S.t0 + .milliseconds(milliseconds) }

    static func steady(_ rssi: Int8, every interval: Duration = .milliseconds(100), noise: Int8 = 0) -> TestBeacon {
        TestBeacon(identity: beacon, interval: interval, rssi: rssi, noise: noise)
    }

    @Test func aSingleSightingDoesNotEnter() {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        var events: [EngineEvent] = []
        engine.ingest(S.sighting(Self.beacon, rssi: -60, at: S.t0), into: &events)
        events += D.play(&engine, [], from: Self.at(200), until: Self.at(5_000))
        #expect(events.isEmpty)
        #expect(engine.monitor.state(of: "cafe") == .unknown)
        #expect(engine.rangedBeacons().isEmpty)
    }

    @Test(arguments: [true, false])
    func twoSightingsWithinTwoSecondsEnterOnce(notifyOnEntry: Bool) {
        var engine = BeaconEngine(configuration: S.configuration { $0.regions[0].notifyOnEntry = notifyOnEntry }, now: S.t0)
        var events: [EngineEvent] = []
        engine.ingest(S.sighting(Self.beacon, rssi: -60, at: S.t0), into: &events)
        engine.ingest(S.sighting(Self.beacon, rssi: -60, at: Self.at(1_900)), into: &events)
        events += D.play(&engine, [Self.steady(-60, every: .milliseconds(500))], from: Self.at(2_000), until: Self.at(6_000))
        let transitions = S.transitions(events)
        #expect(transitions.map(\.kind) == [.entered])
        #expect(transitions.first?.regionID == "cafe")
        #expect(transitions.first?.time == Self.at(1_900))
        #expect(transitions.first?.notify == notifyOnEntry)
        #expect(engine.monitor.state(of: "cafe") == .inside)
    }

    @Test func twoQualifyingSightingsThreeSecondsApartDoNotEnterAFastBeacon() {
        // Heard every 100 ms below the floor first, so the beacon is known to be fast.
        var engine = BeaconEngine(configuration: Self.thresholds, now: S.t0)
        var events = D.play(&engine, [Self.steady(-85)], from: S.t0, until: Self.at(2_000))
        engine.ingest(S.sighting(Self.beacon, rssi: -70, at: Self.at(2_000)), into: &events)
        engine.ingest(S.sighting(Self.beacon, rssi: -70, at: Self.at(5_000)), into: &events)
        #expect(S.transitions(events).isEmpty)
        #expect(engine.monitor.state(of: "cafe") == .unknown)
        // Half a second later a third one does make two within 2 s.
        engine.ingest(S.sighting(Self.beacon, rssi: -70, at: Self.at(5_500)), into: &events)
        #expect(S.transitions(events).map(\.kind) == [.entered])
    }

    @Test func aSlowBeaconEntersOnItsThirdSighting() {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        let events = D.play(&engine, [Self.steady(-60, every: .seconds(3))], from: S.t0, until: Self.at(8_000))
        let transitions = S.transitions(events)
        #expect(transitions.map(\.kind) == [.entered])
        #expect(transitions.first?.time == Self.at(6_000))
    }

    @Test func sightingsBelowTheEnterFloorNeverEnter() {
        var engine = BeaconEngine(configuration: S.configuration { $0.ranging.enterRSSI = -80 }, now: S.t0)
        let events = D.play(&engine, [Self.steady(-81)], from: S.t0, until: Self.at(30_000))
        #expect(!S.transitions(events).contains { $0.kind == .entered })
        #expect(engine.monitor.state(of: "cafe") != .inside)
        #expect(engine.rangedBeacons().isEmpty)
    }

    @Test func sightingsAtTheEnterFloorEnter() {
        var engine = BeaconEngine(configuration: S.configuration { $0.ranging.enterRSSI = -80 }, now: S.t0)
        let events = D.play(&engine, [Self.steady(-80)], from: S.t0, until: Self.at(1_000))
        #expect(S.transitions(events).map(\.kind) == [.entered])
    }

    @Test func exitsExactlyExitAfterTheLastSightingAndNotATickBefore() {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        D.play(&engine, [Self.steady(-60, every: .milliseconds(200))], from: S.t0, until: Self.at(3_000))
        let last = Self.at(2_800)
        var events = D.play(&engine, [], from: Self.at(3_000), until: last + .seconds(10))
        #expect(S.transitions(events).isEmpty)
        #expect(engine.monitor.state(of: "cafe") == .inside)
        events = D.play(&engine, [], from: last + .seconds(10), until: last + .seconds(20))
        let exits = S.transitions(events)
        #expect(exits.map(\.kind) == [.exited])
        #expect(exits.first?.time == last + .seconds(10))
        #expect(exits.first?.notify == true)
        #expect(engine.monitor.state(of: "cafe") == .outside)
    }

    @Test func aFiveSecondBeaconDoesNotExitAtTenSeconds() {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        let entered = D.play(&engine, [Self.steady(-60, every: .seconds(5))], from: S.t0, until: Self.at(20_200))
        #expect(S.transitions(entered).map(\.kind) == [.entered])
        let last = Self.at(20_000)
        let events = D.play(&engine, [], from: Self.at(20_200), until: last + .seconds(30))
        let exits = S.transitions(events)
        // Three observed intervals (15 s), not exit_after (10 s).
        #expect(exits.map(\.kind) == [.exited])
        #expect(exits.first?.time == last + .seconds(15))
    }

    @Test func aBeaconAtTheLongestBluetoothIntervalEntersAndStaysInside() {
        // Bluetooth LE allows advertising intervals up to 10.24 s.
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        let events = D.play(&engine, [Self.steady(-60, every: .milliseconds(10_240))], from: S.t0, until: Self.at(120_000))
        let transitions = S.transitions(events)
        #expect(transitions.map(\.kind) == [.entered])
        #expect(transitions.first?.time == Self.at(20_480))
        #expect(engine.monitor.state(of: "cafe") == .inside)
    }

    @Test func aWeakFilteredSignalExitsWhileTheBeaconIsStillHeard() {
        var engine = BeaconEngine(configuration: Self.thresholds, now: S.t0)
        let entered = D.play(&engine, [Self.steady(-70)], from: S.t0, until: Self.at(5_000))
        #expect(S.transitions(entered).map(\.kind) == [.entered])
        let events = D.play(&engine, [Self.steady(-95)], from: Self.at(5_000), until: Self.at(15_000))
        let exits = S.transitions(events)
        #expect(exits.map(\.kind) == [.exited])
        // Heard every 100 ms throughout, so this is the signal, not the timeout.
        #expect((exits.first?.time).map { $0 < Self.at(15_000) } == true)
        #expect(engine.monitor.state(of: "cafe") == .outside)
    }

    @Test func oneWeakPacketDoesNotExit() {
        var engine = BeaconEngine(configuration: Self.thresholds, now: S.t0)
        var events = D.play(&engine, [Self.steady(-70)], from: S.t0, until: Self.at(5_000))
        engine.ingest(S.sighting(Self.beacon, rssi: -100, at: Self.at(5_000)), into: &events)
        events += D.play(&engine, [Self.steady(-70)], from: Self.at(5_050), until: Self.at(10_000))
        #expect(S.transitions(events).map(\.kind) == [.entered])
    }

    @Test func anEdgeBeaconBetweenTheThresholdsMakesNoStorm() {
        var engine = BeaconEngine(configuration: Self.thresholds, now: S.t0)
        let edge = Self.steady(-85, noise: 3)  // −88…−82: always between exit (−90) and enter (−80)
        var events = D.play(&engine, [Self.steady(-70)], from: S.t0, until: Self.at(5_000))
        #expect(S.transitions(events).map(\.kind) == [.entered])
        // A minute at the edge while inside: it stays inside, silently.
        events = D.play(&engine, [edge], from: Self.at(5_000), until: Self.at(65_000))
        #expect(S.transitions(events).isEmpty)
        #expect(engine.monitor.state(of: "cafe") == .inside)
        events = D.play(&engine, [Self.steady(-95)], from: Self.at(65_000), until: Self.at(75_000))
        #expect(S.transitions(events).map(\.kind) == [.exited])
        // A minute at the edge while outside: no re-entry.
        events = D.play(&engine, [edge], from: Self.at(75_000), until: Self.at(135_000))
        #expect(S.transitions(events).isEmpty)
        #expect(engine.monitor.state(of: "cafe") == .outside)
    }

    @Test func walkingBackInAfterAWeakSignalExitEntersOnceWithoutFlapping() {
        var engine = BeaconEngine(configuration: Self.thresholds, now: S.t0)
        var events = D.play(&engine, [Self.steady(-70)], from: S.t0, until: Self.at(5_000))
        events += D.play(&engine, [Self.steady(-95)], from: Self.at(5_000), until: Self.at(20_000))
        events += D.play(&engine, [Self.steady(-70)], from: Self.at(20_000), until: Self.at(30_000))
        #expect(S.transitions(events).map(\.kind) == [.entered, .exited, .entered])
        #expect(engine.monitor.state(of: "cafe") == .inside)
    }

    @Test func withoutEvidenceUnknownBecomesOutsideSilentlyAfterTheTimeout() {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        let events = D.play(&engine, [], from: S.t0, until: Self.at(30_000))
        let transitions = S.transitions(events)
        #expect(transitions.map(\.kind) == [.determinedOutside])
        #expect(transitions.first?.time == Self.at(10_000))
        #expect(transitions.first?.notify == false)
        #expect(engine.monitor.state(of: "cafe") == .outside)
    }

    @Test func aRegionHeardOnlyBelowItsExitThresholdIsDeterminedOutside() {
        // The same evidence that makes an inside region exit must not leave the region unknown forever.
        var engine = BeaconEngine(configuration: Self.thresholds, now: S.t0)
        let events = D.play(&engine, [Self.steady(-95)], from: S.t0, until: Self.at(30_000))
        #expect(S.transitions(events).map(\.kind) == [.determinedOutside])
        #expect(S.transitions(events).first?.reason.hasPrefix("none of its beacons heard at ") == true, "\(S.transitions(events))")
        #expect(engine.monitor.state(of: "cafe") == .outside)
    }

    @Test func restoredInsideEmitsNoEnterOnTheNextSightings() {
        var engine = BeaconEngine(configuration: S.configuration(), restored: EngineState(regions: ["cafe": .inside]), now: S.t0)
        let events = D.play(&engine, [Self.steady(-60)], from: S.t0, until: Self.at(5_000))
        #expect(S.transitions(events).isEmpty)
        #expect(events.contains(.beaconAppeared(Self.beacon)))
        #expect(engine.monitor.state(of: "cafe") == .inside)
    }

    @Test func restoredInsideWithNoSightingsExitsExactlyOnceAfterTheTimeout() {
        var engine = BeaconEngine(configuration: S.configuration(), restored: EngineState(regions: ["cafe": .inside]), now: S.t0)
        let events = D.play(&engine, [], from: S.t0, until: Self.at(60_000))
        let transitions = S.transitions(events)
        #expect(transitions.map(\.kind) == [.exited])
        #expect(transitions.first?.time == Self.at(10_000))
        #expect(transitions.first?.notify == true)
    }

    @Test func notifyOnExitFalseStillLeavesTheRegion() {
        var engine = BeaconEngine(configuration: S.configuration { $0.regions[0].notifyOnExit = false }, now: S.t0)
        var events = D.play(&engine, [Self.steady(-60)], from: S.t0, until: Self.at(2_000))
        events += D.play(&engine, [], from: Self.at(2_000), until: Self.at(20_000))
        let transitions = S.transitions(events)
        #expect(transitions.map(\.kind) == [.entered, .exited])
        #expect(transitions.map(\.notify) == [true, false])
        #expect(engine.monitor.state(of: "cafe") == .outside)
        #expect(events.contains(.beaconDisappeared(Self.beacon)))
    }

    @Test func beaconsMatchingNoRegionAreIgnoredEntirely() throws {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        let stranger = BeaconIdentity(uuid: try #require(UUID(uuidString: "F7826DA6-4FA2-4E98-8024-BC5B71E0893E")), major: 1, minor: 1)
        let events = D.play(
            &engine, [TestBeacon(identity: stranger, interval: .milliseconds(100), rssi: -50)], from: S.t0, until: Self.at(20_000))
        // Only the region's own determination, as if nothing had been heard, and the log line says so:
        // most often a UUID that matches nothing in range, not a weak signal.
        #expect(events.count == 1)
        #expect(S.transitions(events).map(\.kind) == [.determinedOutside])
        #expect(S.transitions(events).first?.reason == "none of its beacons heard for 10s; `beacond scan` shows what is in range")
        #expect(S.transitions(events).first?.time == Self.at(10_000))
        #expect(engine.rangedBeacons().isEmpty)
        #expect(engine.rangedBeacon(stranger) == nil)
    }
}
