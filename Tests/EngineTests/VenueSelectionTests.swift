@testable import BeaconCore
import Foundation
import Testing

@Suite struct VenueSelectionTests {
    typealias S = EngineTestSupport
    static let venues = S.configuration().venues

    static func candidate(_ venue: Int, _ distance: Double) -> VenueSelector.Candidate {
        VenueSelector.Candidate(
            venueIndex: venue,
            beacon: RangedBeacon(
                identity: S.identity(1, UInt16(venue + 1)), rssi: -60, filteredRSSI: -60, measuredPower: -59, advertisedPower: -59,
                distance: distance, accuracy: 0.1, proximity: .near, isStationary: false, lastSeen: S.t0, address: BluetoothAddress(0, 0, 0, 0, 0, 0),
                venueID: venues[venue].id))
    }

    @Test func firstAnswerAtOnceAndAChallengerNeedsMarginAndDwell() {
        var selector = VenueSelector(margin: 0.2, dwell: .seconds(2))
        let changed = selector.update(candidates: [Self.candidate(0, 1.0), Self.candidate(1, 1.5)], venues: Self.venues, preferred: nil, now: S.t0)
        #expect(changed)
        #expect(selector.current?.venueID == "counter-1")
        // 10% closer: never.
        for second in 1...10 {
            _ = selector.update(candidates: [Self.candidate(0, 1.0), Self.candidate(1, 0.9)], venues: Self.venues, preferred: nil, now: S.t0 + .seconds(Int64(second)))
        }
        #expect(selector.current?.venueID == "counter-1")
        // 30% closer: only after the dwell.
        let start = S.t0 + .seconds(20)
        _ = selector.update(candidates: [Self.candidate(0, 1.0), Self.candidate(1, 0.7)], venues: Self.venues, preferred: nil, now: start)
        _ = selector.update(candidates: [Self.candidate(0, 1.0), Self.candidate(1, 0.7)], venues: Self.venues, preferred: nil, now: start + .milliseconds(1900))
        #expect(selector.current?.venueID == "counter-1")
        let switched = selector.update(candidates: [Self.candidate(0, 1.0), Self.candidate(1, 0.7)], venues: Self.venues, preferred: nil, now: start + .seconds(2))
        #expect(switched)
        #expect(selector.current?.venueID == "counter-2")
    }

    @Test func aChallengerThatFallsBackStartsItsDwellAgain() {
        var selector = VenueSelector(margin: 0.2, dwell: .seconds(2))
        _ = selector.update(candidates: [Self.candidate(0, 1.0)], venues: Self.venues, preferred: nil, now: S.t0)
        _ = selector.update(candidates: [Self.candidate(0, 1.0), Self.candidate(1, 0.5)], venues: Self.venues, preferred: nil, now: S.t0 + .seconds(1))
        _ = selector.update(candidates: [Self.candidate(0, 1.0), Self.candidate(1, 0.95)], venues: Self.venues, preferred: nil, now: S.t0 + .milliseconds(2500))
        _ = selector.update(candidates: [Self.candidate(0, 1.0), Self.candidate(1, 0.5)], venues: Self.venues, preferred: nil, now: S.t0 + .seconds(3))
        #expect(selector.current?.venueID == "counter-1")
        _ = selector.update(candidates: [Self.candidate(0, 1.0), Self.candidate(1, 0.5)], venues: Self.venues, preferred: nil, now: S.t0 + .seconds(5))
        #expect(selector.current?.venueID == "counter-2")
    }

    @Test func anIncumbentOutOfRangeIsReplacedAtOnceAndTheMarginIsReported() {
        var selector = VenueSelector(margin: 0.2, dwell: .seconds(2))
        _ = selector.update(candidates: [Self.candidate(0, 1.0), Self.candidate(1, 4.0)], venues: Self.venues, preferred: nil, now: S.t0)
        #expect(selector.current?.runnerUpID == "counter-2")
        #expect(abs((selector.current?.margin ?? 0) - 0.75) < 1e-9)  // (4 − 1) / 4
        _ = selector.update(candidates: [Self.candidate(1, 4.0)], venues: Self.venues, preferred: nil, now: S.t0 + .milliseconds(200))
        #expect(selector.current?.venueID == "counter-2")
        #expect(selector.current?.margin == 1)
    }

    @Test func nothingInRangeIsNoneOrThePreference() {
        var selector = VenueSelector(margin: 0.2, dwell: .seconds(2))
        _ = selector.update(candidates: [], venues: Self.venues, preferred: nil, now: S.t0)
        #expect(selector.current == nil)
        let changed = selector.update(candidates: [], venues: Self.venues, preferred: 1, now: S.t0)
        #expect(changed)
        #expect(selector.current?.venueID == "counter-2")
        #expect(selector.current?.source == .preference)
    }

    @Test func maxDistanceKeepsAVenueOut() {
        var engine = BeaconEngine(configuration: S.configuration { $0.venues[0].maxDistance = 2 }, now: S.t0)
        // counter-1 at about 5.6 m (RSSI −74), counter-2 at about 8 m (−77): only counter-2 may answer.
        S.feed(&engine, [(S.identity(1, 1), -74, .milliseconds(100)), (S.identity(1, 2), -77, .milliseconds(100))], from: S.t0, for: .seconds(5))
        #expect(engine.nearestVenue?.venueID == "counter-2")
    }

    @Test func engineAnnouncesOnlyRealChangesAndRefusesUnknownPreferences() throws {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        var events = S.feed(&engine, [(S.identity(1, 1), -60, .milliseconds(100)), (S.identity(1, 2), -75, .milliseconds(100))], from: S.t0, for: .seconds(10))
        #expect(S.venueChanges(events) == ["counter-1"])
        do {
            try engine.setPreferredVenue("nowhere")
            Issue.record("an unknown venue was accepted")
        } catch {
            #expect(error == .unknownVenue("nowhere"))
        }
        try engine.setPreferredVenue("counter-2")
        #expect(engine.state.preferredVenue == "counter-2")
        events = S.feed(&engine, [], from: S.t0 + .seconds(10), for: .seconds(20))
        // Both beacons gone: the preference stands in, announced once.
        #expect(S.venueChanges(events) == ["counter-2"])
        #expect(engine.nearestVenue?.source == .preference)
    }

    @Test func clientRegionsComeAndGoAndStayOutOfTheSavedState() throws {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        let other = BeaconIdentity(uuid: UUID(uuidString: "F7826DA6-4FA2-4E98-8024-BC5B71E0893E")!, major: 3, minor: 3)
        let region = RegionDefinition(id: "mine", constraint: BeaconConstraint(uuid: other.uuid), owner: ":1.42")
        try engine.startMonitoring(region, now: S.t0)
        do {
            try engine.startMonitoring(region, now: S.t0)
            Issue.record("a duplicate region was accepted")
        } catch {
            #expect(error == .regionExists("mine"))
        }
        var events = S.feed(&engine, [(other, -60, .milliseconds(100))], from: S.t0, for: .seconds(3))
        #expect(events.contains(.beaconAppeared(other)))
        #expect(engine.state.regions["mine"] == nil)
        #expect(engine.state.regions[region.key] == nil)
        events = []
        try engine.stopMonitoring(key: region.key, into: &events)
        #expect(events.contains(.beaconDisappeared(other)))
    }

    @Test func reconfigureKeepsUnchangedRegionsInsideWithoutANewEnter() {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        S.feed(&engine, [(S.identity(), -60, .milliseconds(100))], from: S.t0, for: .seconds(3))
        try? engine.setPreferredVenue("counter-2")
        var changed = S.configuration()
        changed.venues.removeLast()
        var reloadEvents: [EngineEvent] = []
        engine.reconfigure(changed, now: S.t0 + .seconds(3), into: &reloadEvents)
        #expect(engine.monitor.state(of: "cafe") == .inside)
        #expect(engine.preferredVenueID == nil)
        let events = S.feed(&engine, [(S.identity(), -60, .milliseconds(100))], from: S.t0 + .seconds(3), for: .seconds(3))
        #expect(S.transitions(events).isEmpty)
    }
}
