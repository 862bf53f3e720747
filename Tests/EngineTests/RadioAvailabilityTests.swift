import BeaconCore
import Testing

/// The engine while the source has lost the radio: beacons go unknown, regions
/// hold, and exit timeouts start afresh when the radio is back.
@Suite struct RadioAvailabilityTests {
    typealias S = EngineTestSupport
    typealias D = EngineDriver

    static func at(_ seconds: Int64) -> Timestamp { S.t0 + .seconds(seconds) }
    static let counter = TestBeacon(identity: S.identity(1, 1), interval: .milliseconds(100), rssi: -60)

    /// Inside the café at t = 5 s (exit_after is 10 s by default).
    static func insideCafe() -> BeaconEngine {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        let events = D.play(&engine, [counter], from: S.t0, until: at(5))
        #expect(S.transitions(events).map(\.kind) == [.entered])
        return engine
    }

    @Test func noRegionExitsWhileTheRadioIsDownButBeaconsGoUnknown() {
        var engine = Self.insideCafe()
        engine.radio(available: false, now: Self.at(5))
        let events = D.play(&engine, [], from: Self.at(5), until: Self.at(65))
        #expect(S.transitions(events).isEmpty)
        #expect(engine.monitor.state(of: "cafe") == .inside)
        // Nothing is known of the beacon: no nearest venue from ranging.
        #expect(engine.rangedBeacon(S.identity(1, 1))?.proximity ?? .unknown == .unknown)
        #expect(engine.nearestVenue == nil)
        #expect(D.venueAnswers(events).map { $0?.venueID } == [nil])
    }

    /// A reload (SIGHUP, Reload) during an outage builds the regions anew:
    /// the outage must still not count as silence.
    @Test func aReloadWhileTheRadioIsDownDoesNotExitTheRegion() {
        var engine = Self.insideCafe()
        engine.radio(available: false, now: Self.at(5))
        D.play(&engine, [], from: Self.at(5), until: Self.at(20))
        var events: [EngineEvent] = []
        engine.reconfigure(S.configuration(), now: Self.at(20), into: &events)
        events += D.play(&engine, [], from: Self.at(20), until: Self.at(65))
        #expect(S.transitions(events).isEmpty)
        #expect(engine.monitor.state(of: "cafe") == .inside)
        // And once the radio is back, silence counts again from the return.
        engine.radio(available: true, now: Self.at(65))
        #expect(S.transitions(D.play(&engine, [], from: Self.at(65), until: Self.at(80))).first?.time == Self.at(75))
    }

    @Test func afterTheRadioReturnsTheRegionHasAWholeExitTimeoutToBeHeardAgain() {
        var engine = Self.insideCafe()
        engine.radio(available: false, now: Self.at(5))
        D.play(&engine, [], from: Self.at(5), until: Self.at(65))
        engine.radio(available: true, now: Self.at(65))
        // Silence after the return counts again, from the return: out at 65 + 10 s.
        let events = D.play(&engine, [], from: Self.at(65), until: Self.at(80))
        let exits = S.transitions(events)
        #expect(exits.map(\.kind) == [.exited])
        #expect(exits.first?.time == Self.at(75))
    }

    @Test func beaconsHeardAgainAfterTheReturnKeepTheRegionWithoutASecondEnter() {
        var engine = Self.insideCafe()
        engine.radio(available: false, now: Self.at(5))
        D.play(&engine, [], from: Self.at(5), until: Self.at(65))
        engine.radio(available: true, now: Self.at(65))
        let events = D.play(&engine, [Self.counter], from: Self.at(66), until: Self.at(90))
        #expect(S.transitions(events).isEmpty)
        #expect(S.venueChanges(events) == ["counter-1"])
    }

    @Test func aRegionNotYetDeterminedStaysUnknownWhileTheRadioIsDown() {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        engine.radio(available: false, now: S.t0)
        var events = D.play(&engine, [], from: S.t0, until: Self.at(120))
        #expect(S.transitions(events).isEmpty)
        #expect(engine.monitor.state(of: "cafe") == .unknown)
        engine.radio(available: true, now: Self.at(120))
        events = D.play(&engine, [], from: Self.at(120), until: Self.at(140))
        #expect(S.transitions(events).map(\.kind) == [.determinedOutside])
        #expect(S.transitions(events).first.map { $0.time >= Self.at(130) } == true)
    }

    /// The same rules with the radio up: silence exits (the control for the tests above).
    @Test func withTheRadioUpSilenceExits() {
        var engine = Self.insideCafe()
        let events = D.play(&engine, [], from: Self.at(5), until: Self.at(20))
        #expect(S.transitions(events).map(\.kind) == [.exited])
    }
}
