import BeaconCore
import Foundation
import Testing

@Suite struct RegionMonitorTests {
    typealias S = EngineTestSupport

    @Test func oneStrayPacketDoesNotEnterButTwoWithinTwoSecondsDo() {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        var events: [EngineEvent] = []
        engine.ingest(S.sighting(S.identity(), rssi: -60, at: S.t0), into: &events)
        engine.tick(now: S.t0 + .milliseconds(500), into: &events)
        #expect(S.transitions(events).isEmpty)
        #expect(engine.monitor.state(of: "cafe") == .unknown)
        engine.ingest(S.sighting(S.identity(), rssi: -60, at: S.t0 + .milliseconds(1500)), into: &events)
        let entered = S.transitions(events)
        #expect(entered.map(\.kind) == [.entered])
        #expect(entered.first?.notify == true)
        #expect(engine.monitor.state(of: "cafe") == .inside)
    }

    /// Two of the region's beacons once each are two sightings of the
    /// region, and the log's reason says so rather than naming one beacon twice.
    @Test func twoBeaconsOnceEachWithinTwoSecondsEnterAndTheReasonSaysSo() {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        var events: [EngineEvent] = []
        engine.ingest(S.sighting(S.identity(1, 1), rssi: -60, at: S.t0), into: &events)
        engine.ingest(S.sighting(S.identity(1, 2), rssi: -60, at: S.t0 + .seconds(1)), into: &events)
        let entered = S.transitions(events)
        #expect(entered.map(\.kind) == [.entered])
        #expect(entered.first?.reason == "2 sightings within 2.0 s, the last of \(S.identity(1, 2))")
    }

    @Test func twoSightingsThreeSecondsApartDoNotEnterAFastBeacon() {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        var events: [EngineEvent] = []
        engine.ingest(S.sighting(S.identity(), rssi: -60, at: S.t0), into: &events)
        engine.ingest(S.sighting(S.identity(), rssi: -60, at: S.t0 + .seconds(3)), into: &events)
        #expect(S.transitions(events).isEmpty)
    }

    /// `ranging.enter_window` widens (or narrows) the two sightings' window.
    @Test func theEnterWindowIsASetting() {
        var engine = BeaconEngine(configuration: S.configuration { $0.ranging.enterWindow = .seconds(4) }, now: S.t0)
        var events: [EngineEvent] = []
        engine.ingest(S.sighting(S.identity(), rssi: -60, at: S.t0), into: &events)
        engine.ingest(S.sighting(S.identity(), rssi: -60, at: S.t0 + .seconds(3)), into: &events)
        let entered = S.transitions(events)
        #expect(entered.map(\.kind) == [.entered])
        #expect(entered.first?.reason.hasPrefix("2 sightings within 4.0 s") == true, "\(entered)")
    }

    @Test func aSlowBeaconEntersOnItsThirdSighting() {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        var events: [EngineEvent] = []
        for second in [0, 3] { engine.ingest(S.sighting(S.identity(), rssi: -60, at: S.t0 + .seconds(Int64(second))), into: &events) }
        #expect(S.transitions(events).isEmpty)
        engine.ingest(S.sighting(S.identity(), rssi: -60, at: S.t0 + .seconds(6)), into: &events)
        #expect(S.transitions(events).map(\.kind) == [.entered])
    }

    @Test func sightingsBelowTheEnterFloorNeverEnter() {
        var engine = BeaconEngine(configuration: S.configuration { $0.ranging.enterRSSI = -80 }, now: S.t0)
        let events = S.feed(&engine, [(S.identity(), -85, .milliseconds(100))], from: S.t0, for: .seconds(5))
        #expect(S.transitions(events).allSatisfy { $0.kind != .entered })
    }

    @Test func exitAfterExitAfterWithoutSightingsAndNotATickBefore() {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        S.feed(&engine, [(S.identity(), -60, .milliseconds(100))], from: S.t0, for: .seconds(2))
        let last = S.t0 + .milliseconds(1900)  // the last sighting before the end
        var events: [EngineEvent] = []
        engine.tick(now: last + .milliseconds(9_900), into: &events)
        #expect(engine.monitor.state(of: "cafe") == .inside)
        engine.tick(now: last + .seconds(10), into: &events)
        #expect(S.transitions(events).map(\.kind) == [.exited])
        #expect(engine.monitor.state(of: "cafe") == .outside)
    }

    @Test func aSlowBeaconStretchesTheExitTimeout() {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        S.feed(&engine, [(S.identity(), -60, .seconds(5))], from: S.t0, for: .seconds(21))
        // Last sighting at 20 s; three 5 s intervals is 15 s > exit_after 10 s.
        var events: [EngineEvent] = []
        engine.tick(now: S.t0 + .seconds(32), into: &events)
        #expect(engine.monitor.state(of: "cafe") == .inside)
        engine.tick(now: S.t0 + .seconds(36), into: &events)
        #expect(engine.monitor.state(of: "cafe") == .outside)
        // The reason says how long it really was not seen, not exit_after.
        #expect(S.transitions(events).first?.reason == "not seen for 16.0 s")
    }

    /// The café entering at −80 dBm and leaving below −90 dBm.
    static func hysteresis(_ change: (inout Configuration) -> Void = { _ in }) -> BeaconEngine {
        BeaconEngine(
            configuration: S.configuration {
                $0.ranging.enterRSSI = -80
                $0.ranging.exitRSSI = -90
                change(&$0)
            }, now: S.t0)
    }

    @Test func weakSignalExitsAndHysteresisPreventsAStorm() {
        var engine = Self.hysteresis()
        var events = S.feed(&engine, [(S.identity(), -70, .milliseconds(100))], from: S.t0, for: .seconds(5))
        #expect(S.transitions(events).map(\.kind) == [.entered])
        events = S.feed(&engine, [(S.identity(), -95, .milliseconds(100))], from: S.t0 + .seconds(5), for: .seconds(10))
        #expect(S.transitions(events).map(\.kind) == [.exited])
        // Between the two thresholds for a minute: no event at all.
        events = S.feed(&engine, [(S.identity(), -85, .milliseconds(100))], from: S.t0 + .seconds(15), for: .seconds(60))
        #expect(S.transitions(events).isEmpty)
    }

    /// A strong beacon silent for a few seconds (stale, not yet gone) still
    /// speaks for its region: a weak beacon heard alone meanwhile does not
    /// make it exit below exit_rssi (an audit of 2026-11-28: it did, at once,
    /// and the region entered again when the strong one was next heard).
    /// Once the strong one has been silent for exit_after, the weak one decides.
    @Test func aWeakBeaconDoesNotExitARegionWhoseStrongOneIsBrieflySilent() {
        var engine = Self.hysteresis()
        let (strong, weak) = ((S.identity(1, 1), Int8(-70), Duration.milliseconds(100)), (S.identity(1, 2), Int8(-95), Duration.milliseconds(100)))
        var events = S.feed(&engine, [strong, weak], from: S.t0, for: .seconds(5))
        #expect(S.transitions(events).map(\.kind) == [.entered])
        events = S.feed(&engine, [weak], from: S.t0 + .seconds(5), for: .seconds(6))
        #expect(S.transitions(events).isEmpty, "\(S.transitions(events))")
        events = S.feed(&engine, [weak], from: S.t0 + .seconds(11), for: .seconds(10))
        #expect(S.transitions(events).map(\.kind) == [.exited])
        #expect(S.transitions(events).first.map { $0.time >= S.t0 + .seconds(15) } == true, "\(S.transitions(events))")
    }

    /// While the radio is down no region exits, by its RSSI either: the
    /// strong beacon heard before the weak one ages out of its region first,
    /// and the weak one's old level decided (the review of 2026-11-28).
    @Test func noRSSIExitWhileTheRadioIsDown() {
        var engine = Self.hysteresis()
        let strong = (S.identity(1, 1), Int8(-70), Duration.milliseconds(100))
        let weak = (S.identity(1, 2), Int8(-95), Duration.milliseconds(100))
        var events = S.feed(&engine, [strong, weak], from: S.t0, for: .seconds(5))
        events += S.feed(&engine, [weak], from: S.t0 + .seconds(5), for: .seconds(3))
        #expect(S.transitions(events).map(\.kind) == [.entered])
        engine.radio(available: false, now: S.t0 + .seconds(8))
        events = []
        for tenth in 81...200 { engine.tick(now: S.t0 + .milliseconds(Int64(tenth) * 100), into: &events) }
        #expect(S.transitions(events).isEmpty, "\(S.transitions(events))")
    }

    /// The same beside a region's own exit_after, and a strong beacon's own
    /// slow rhythm: it speaks for as long as the region would wait for it
    /// (the review of 2026-11-28: the file's exit_after alone was used).
    @Test(arguments: [(Duration.seconds(30), Duration.milliseconds(100), Duration.seconds(20)), (.seconds(10), .seconds(4), .milliseconds(9_500))])
    func aStrongBeaconSpeaksAsLongAsItsRegionWouldWait(regionExitAfter: Duration, strongInterval: Duration, silence: Duration) {
        var engine = Self.hysteresis { $0.regions[0].exitAfter = regionExitAfter }
        let strong = (S.identity(1, 1), Int8(-70), strongInterval)
        let weak = (S.identity(1, 2), Int8(-95), Duration.milliseconds(100))
        var events = S.feed(&engine, [strong, weak], from: S.t0, for: .seconds(30))
        #expect(S.transitions(events).map(\.kind) == [.entered])
        events = S.feed(&engine, [weak], from: S.t0 + .seconds(30), for: silence)
        #expect(S.transitions(events).isEmpty, "\(S.transitions(events))")
    }

    @Test func withoutEvidenceTheRegionIsDeterminedOutsideSilently() {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        var events: [EngineEvent] = []
        engine.tick(now: S.t0 + .seconds(10), into: &events)
        let transitions = S.transitions(events)
        #expect(transitions.map(\.kind) == [.determinedOutside])
        #expect(transitions.first?.notify == false)
    }

    @Test func restoredInsideGivesNoSecondEnterAndOneExitWhenGone() {
        let restored = EngineState(regions: ["cafe": .inside])
        var engine = BeaconEngine(configuration: S.configuration(), restored: restored, now: S.t0)
        var events = S.feed(&engine, [(S.identity(), -60, .milliseconds(100))], from: S.t0, for: .seconds(3))
        #expect(S.transitions(events).isEmpty)
        var quiet = BeaconEngine(configuration: S.configuration(), restored: restored, now: S.t0)
        events = []
        for second in stride(from: 1, through: 30, by: 1) { quiet.tick(now: S.t0 + .seconds(Int64(second)), into: &events) }
        #expect(S.transitions(events).map(\.kind) == [.exited])
    }

    /// A beacon advertising every 10.24 s (or heard so through BlueZ on some
    /// Pis) after a restart inside its region: its interval is unknown until
    /// its second sighting, so the first silence must not be taken for an
    /// exit (until 2026-11-27 every restart exited and entered again: SPEC
    /// §4's restart without a new enter, broken for slow beacons).
    @Test func aSlowBeaconRestoredInsideDoesNotExitBeforeItsIntervalIsKnown() {
        var engine = BeaconEngine(configuration: S.configuration(), restored: EngineState(regions: ["cafe": .inside]), now: S.t0)
        let events = Self.slowBeacon(&engine, heardAt: [1.0, 11.24, 21.48, 31.72], until: 40)
        #expect(S.transitions(events).isEmpty, "\(S.transitions(events))")
        #expect(engine.monitor.state(of: "cafe") == .inside)
    }

    /// The same after the radio came back from an outage long enough for
    /// the beacon to be forgotten, its interval with it.
    @Test func aSlowBeaconAfterAnOutageDoesNotExitBeforeItsIntervalIsKnownAgain() {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        var events = Self.slowBeacon(&engine, heardAt: [0, 10.24, 20.48], until: 25)
        #expect(engine.monitor.state(of: "cafe") == .inside)
        engine.radio(available: false, now: S.t0 + .seconds(25))
        engine.radio(available: true, now: S.t0 + .seconds(60))
        events = Self.slowBeacon(&engine, heardAt: [61, 71.24, 81.48], from: 60, until: 90)
        #expect(S.transitions(events).isEmpty, "\(S.transitions(events))")
    }

    /// Not in the normal case: a region entered by two of its beacons, once
    /// each (no interval known), leaves after `exit_after` as before.
    @Test func aRegionEnteredByTwoBeaconsOnceEachStillExitsAfterExitAfter() {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        var events: [EngineEvent] = []
        engine.ingest(S.sighting(S.identity(1, 1), rssi: -60, at: S.t0), into: &events)
        engine.ingest(S.sighting(S.identity(1, 2), rssi: -60, at: S.t0 + .seconds(1)), into: &events)
        for tick in stride(from: 1_200, through: 12_000, by: 200) { engine.tick(now: S.t0 + .milliseconds(Int64(tick)), into: &events) }
        #expect(S.transitions(events).map(\.kind) == [.entered, .exited], "\(S.transitions(events))")
    }

    /// Restored inside and left (nothing heard), then entered again by two
    /// beacons once each: a normal entry, so a normal exit after `exit_after`
    /// (the restore's patience ended with the region's stay).
    @Test func aRestoredRegionThatLeftAndCameBackExitsAfterExitAfter() {
        var engine = BeaconEngine(configuration: S.configuration(), restored: EngineState(regions: ["cafe": .inside]), now: S.t0)
        var events: [EngineEvent] = []
        for tick in stride(from: 200, through: 12_000, by: 200) { engine.tick(now: S.t0 + .milliseconds(Int64(tick)), into: &events) }
        #expect(S.transitions(events).map(\.kind) == [.exited])
        engine.ingest(S.sighting(S.identity(1, 1), rssi: -60, at: S.t0 + .seconds(20)), into: &events)
        engine.ingest(S.sighting(S.identity(1, 2), rssi: -60, at: S.t0 + .seconds(21)), into: &events)
        for tick in stride(from: 21_200, through: 32_000, by: 200) { engine.tick(now: S.t0 + .milliseconds(Int64(tick)), into: &events) }
        #expect(S.transitions(events).map(\.kind) == [.exited, .entered, .exited], "\(S.transitions(events))")
    }

    /// The same when the region comes back at once: restored inside, heard
    /// once, gone after the patience, and entered again by two beacons once
    /// each before the next tick: a normal stay, a normal exit.
    @Test func aRestoredRegionThatLeftAndCameBackAtOnceExitsAfterExitAfter() {
        var engine = BeaconEngine(configuration: S.configuration(), restored: EngineState(regions: ["cafe": .inside]), now: S.t0)
        var events: [EngineEvent] = []
        engine.ingest(S.sighting(S.identity(1, 1), rssi: -60, at: S.t0 + .seconds(1)), into: &events)
        var tick: Int64 = 1_200
        while S.transitions(events).isEmpty, tick <= 40_000 {
            engine.tick(now: S.t0 + .milliseconds(tick), into: &events)
            tick += 200
        }
        #expect(S.transitions(events).map(\.kind) == [.exited])
        let left = S.t0 + .milliseconds(tick - 200)
        engine.ingest(S.sighting(S.identity(1, 3), rssi: -60, at: left + .milliseconds(50)), into: &events)
        engine.ingest(S.sighting(S.identity(1, 4), rssi: -60, at: left + .milliseconds(100)), into: &events)
        for later in stride(from: 200, through: 11_000, by: 200) { engine.tick(now: left + .milliseconds(Int64(later)), into: &events) }
        #expect(S.transitions(events).map(\.kind) == [.exited, .entered, .exited], "\(S.transitions(events))")
    }

    /// One beacon heard at `heardAt` seconds, the engine ticking every 200 ms from `from` until `until`.
    static func slowBeacon(_ engine: inout BeaconEngine, heardAt: [Double], from: Double = 0, until: Double) -> [EngineEvent] {
        var events: [EngineEvent] = []
        let sightings = heardAt.map { S.t0 + .milliseconds(Int64($0 * 1000)) }
        var next = 0
        for tick in stride(from: Int64(from * 1000) + 200, through: Int64(until * 1000), by: 200) {
            let now = S.t0 + .milliseconds(tick)
            while next < sightings.count, sightings[next] <= now {
                engine.ingest(S.sighting(S.identity(), rssi: -60, at: sightings[next]), into: &events)
                next += 1
            }
            engine.tick(now: now, into: &events)
        }
        return events
    }

    /// The patience is for a beacon heard but not yet learnt: one whose
    /// interval is known (10 a second here) leaves after `exit_after` as before,
    /// also once its track is forgotten.
    @Test func aFastBeaconRestoredInsideStillExitsAfterExitAfter() {
        var engine = BeaconEngine(configuration: S.configuration(), restored: EngineState(regions: ["cafe": .inside]), now: S.t0)
        var events = S.feed(&engine, [(S.identity(), -60, .milliseconds(100))], from: S.t0, for: .seconds(2))
        events = []
        for tick in stride(from: 2_200, through: 13_000, by: 200) { engine.tick(now: S.t0 + .milliseconds(Int64(tick)), into: &events) }
        let exits = S.transitions(events)
        #expect(exits.map(\.kind) == [.exited], "\(exits)")
        #expect(exits.first.map { $0.time <= S.t0 + .milliseconds(12_200) } == true, "\(exits)")
    }

    @Test func notifyOnExitFalseStillChangesState() {
        var engine = BeaconEngine(
            configuration: S.configuration { $0.regions[0].notifyOnExit = false }, now: S.t0)
        var events = S.feed(&engine, [(S.identity(), -60, .milliseconds(100))], from: S.t0, for: .seconds(2))
        events = []
        engine.tick(now: S.t0 + .seconds(20), into: &events)
        let exit = S.transitions(events).first
        #expect(exit?.kind == .exited)
        #expect(exit?.notify == false)
    }

    @Test func beaconsNoRegionCoversAreIgnored() {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        let other = BeaconIdentity(uuid: UUID(), major: 1, minor: 1)
        let events = S.feed(&engine, [(other, -50, .milliseconds(100))], from: S.t0, for: .seconds(3))
        #expect(events.allSatisfy { if case .region(let t) = $0 { t.kind == .determinedOutside } else { false } })
        #expect(engine.rangedBeacons().isEmpty)
    }
}
