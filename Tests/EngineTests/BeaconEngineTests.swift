import BeaconCore
import Foundation
import Testing

/// The engine as the service drives it: announcements, client regions, saved state, reconfiguration.
@Suite struct BeaconEngineTests {
    typealias S = EngineTestSupport
    typealias D = EngineDriver

    static func at(_ milliseconds: Int64) -> Timestamp { S.t0 + .milliseconds(milliseconds) }

    static func beacon(_ identity: BeaconIdentity, _ rssi: Int8, noise: Int8 = 0) -> TestBeacon {
        TestBeacon(identity: identity, interval: .milliseconds(100), rssi: rssi, noise: noise, seed: UInt64(identity.minor))
    }

    /// A café region over major 1 only, and a client's region over the whole UUID.
    static func clientSetUp() throws -> BeaconEngine {
        var configuration = S.configuration()
        configuration.regions = [RegionDefinition(id: "cafe", constraint: BeaconConstraint(uuid: S.uuid, major: 1))]
        var engine = BeaconEngine(configuration: configuration, now: S.t0)
        try engine.startMonitoring(RegionDefinition(id: "mine", constraint: BeaconConstraint(uuid: S.uuid), owner: ":1.42"), now: S.t0)
        return engine
    }

    /// Announced again only for a change of venue, of source or of the
    /// listener's stillness: never for a distance alone.
    @Test func nearestVenueChangedOnlyWhenTheIdTheSourceOrStillnessChanges() throws {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        let counters = [Self.beacon(S.identity(1, 1), -60, noise: 3), Self.beacon(S.identity(1, 2), -75, noise: 3)]
        var events = D.play(&engine, counters, from: S.t0, until: Self.at(10_000))
        // The distances change with every packet; the venue does not.
        #expect(S.venueChanges(events) == ["counter-1"])
        #expect(D.venueAnswers(events).allSatisfy { $0?.source == .ranging })
        let stillness = D.venueAnswers(events).map { $0?.isStationary ?? false }
        #expect(zip(stillness, stillness.dropFirst()).allSatisfy { $0 != $1 }, "each announcement a change: \(stillness)")
        // A preference changes nothing while ranging answers.
        try engine.setPreferredVenue("counter-1")
        events = D.play(&engine, counters, from: Self.at(10_000), until: Self.at(12_000))
        #expect(D.venueAnswers(events).isEmpty)
        // The same venue, now as the preference: announced once.
        events = D.play(&engine, [], from: Self.at(12_000), until: Self.at(40_000))
        let answers = D.venueAnswers(events)
        #expect(answers.map { $0?.venueID } == ["counter-1"])
        #expect(answers.first??.source == .preference)
    }

    @Test func startMonitoringAddsARegionOwnedByTheClient() throws {
        var engine = try Self.clientSetUp()
        let mine = try #require(engine.monitor.definitions.first { $0.id == "mine" })
        #expect(mine.owner == ":1.42")
        #expect(engine.monitor.state(of: ":1.42/mine") == .unknown)
        #expect(engine.monitor.state(of: "mine") == nil)  // a client's region is known by owner and id
        let other = S.identity(2, 1)  // only the client's region covers it
        let events = D.play(&engine, [Self.beacon(other, -60)], from: S.t0, until: Self.at(2_000))
        #expect(S.transitions(events).map(\.regionID) == [":1.42/mine"])
        #expect(events.contains(.beaconAppeared(other)))
        #expect(engine.monitor.state(of: "cafe") == .unknown)
    }

    @Test func stopMonitoringDropsOnlyTheBeaconsNoRegionCoversAnyMore() throws {
        var engine = try Self.clientSetUp()
        let shared = S.identity(1, 1)  // covered by both regions
        let onlyMine = S.identity(2, 1)
        D.play(&engine, [Self.beacon(shared, -60), Self.beacon(onlyMine, -60)], from: S.t0, until: Self.at(3_000))
        var events: [EngineEvent] = []
        try engine.stopMonitoring(key: ":1.42/mine", into: &events)
        #expect(events == [.beaconDisappeared(onlyMine)])
        #expect(engine.monitor.state(of: ":1.42/mine") == nil)
        #expect(engine.rangedBeacon(shared) != nil)
        // The uncovered beacon is ignored from now on; the other is still ranged.
        events = D.play(&engine, [Self.beacon(shared, -60), Self.beacon(onlyMine, -60)], from: Self.at(3_000), until: Self.at(6_000))
        // Nothing of either beacon (the listener settling at counter 1 may be announced meanwhile).
        #expect(events.filter { if case .nearestVenueChanged = $0 { false } else { true } }.isEmpty, "\(events)")
        #expect(engine.rangedBeacons().map(\.identity) == [shared])
        #expect(throws: EngineError.unknownRegion(":1.42/mine")) { try engine.stopMonitoring(key: ":1.42/mine", into: &events) }
    }

    /// A client that leaves takes all its regions, and only its own, in one step.
    @Test func aClientThatLeavesTakesItsRegionsOnly() throws {
        var engine = try Self.clientSetUp()
        try engine.startMonitoring(RegionDefinition(id: "also-mine", constraint: BeaconConstraint(uuid: S.uuid, major: 2), owner: ":1.42"), now: S.t0)
        try engine.startMonitoring(RegionDefinition(id: "mine", constraint: BeaconConstraint(uuid: S.uuid), owner: ":1.43"), now: S.t0)
        let onlyMine = S.identity(2, 1)
        D.play(&engine, [Self.beacon(S.identity(1, 1), -60), Self.beacon(onlyMine, -60)], from: S.t0, until: Self.at(3_000))
        var events: [EngineEvent] = []
        #expect(engine.stopMonitoring(owner: ":1.42", into: &events) == [":1.42/mine", ":1.42/also-mine"])
        #expect(engine.monitor.definitions.map(\.key) == ["cafe", ":1.43/mine"])
        // The other client's region still covers the beacon of major 2.
        #expect(events.isEmpty)
        #expect(engine.stopMonitoring(owner: ":1.43", into: &events) == [":1.43/mine"])
        #expect(events == [.beaconDisappeared(onlyMine)])
        #expect(engine.stopMonitoring(owner: ":1.43", into: &events).isEmpty)
    }

    @Test func aClientMayNotAddTheSameIdTwice() throws {
        var engine = try Self.clientSetUp()
        let duplicate = RegionDefinition(id: "mine", constraint: BeaconConstraint(uuid: S.uuid, major: 9), owner: ":1.42")
        #expect(throws: EngineError.regionExists("mine")) { try engine.startMonitoring(duplicate, now: S.t0) }
        #expect(engine.monitor.definitions.filter { $0.key == duplicate.key }.count == 1)
    }

    /// Ids live per owner: another client's "mine", or a client's "cafe",
    /// never takes or shadows a region it does not own.
    @Test(arguments: ["cafe", "mine"])
    func idsAreKeptApartByOwner(id: String) throws {
        var engine = try Self.clientSetUp()
        let other = RegionDefinition(id: id, constraint: BeaconConstraint(uuid: S.uuid, major: 9), owner: ":1.43")
        try engine.startMonitoring(other, now: S.t0)
        #expect(engine.monitor.definitions.filter { $0.id == id }.count == 2)
        #expect(engine.monitor.state(of: ":1.43/\(id)") == .unknown)
        #expect(engine.state.regions.keys.sorted() == ["cafe"])
    }

    @Test func theSavedStateHoldsConfiguredRegionsAndThePreferenceOnly() throws {
        var engine = try Self.clientSetUp()
        D.play(&engine, [Self.beacon(S.identity(1, 1), -60)], from: S.t0, until: Self.at(3_000))
        try engine.setPreferredVenue("counter-2")
        #expect(engine.monitor.state(of: ":1.42/mine") == .inside)
        #expect(engine.state == EngineState(regions: ["cafe": .inside], preferredVenue: "counter-2"))
    }

    @Test func reconfigureKeepsUnchangedRegionsWithoutANewEnter() throws {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        let counter = Self.beacon(S.identity(1, 1), -60)
        D.play(&engine, [counter], from: S.t0, until: Self.at(3_000))
        var next = S.configuration()
        let elsewhere = try #require(UUID(uuidString: "F7826DA6-4FA2-4E98-8024-BC5B71E0893E"))
        next.regions.append(RegionDefinition(id: "bar", constraint: BeaconConstraint(uuid: elsewhere)))
        var reloadEvents: [EngineEvent] = []
        let dropped = engine.reconfigure(next, now: Self.at(3_000), into: &reloadEvents)
        #expect(dropped.removedRegions.isEmpty && dropped.droppedPreferredVenue == nil)
        #expect(reloadEvents.isEmpty)
        #expect(engine.monitor.state(of: "cafe") == .inside)
        #expect(engine.monitor.state(of: "bar") == .unknown)
        // And back: the file no longer has "bar", which the reload says.
        #expect(engine.reconfigure(S.configuration(), now: Self.at(3_000), into: &reloadEvents).removedRegions == ["bar"])
        let events = D.play(&engine, [counter], from: Self.at(3_000), until: Self.at(8_000))
        #expect(S.transitions(events).isEmpty)
        #expect(engine.rangedBeacon(S.identity(1, 1)) != nil)
    }

    /// The region's beacons change under the same id: a region still occupied
    /// stays inside without a second enter (and ranging goes on); one no
    /// longer occupied exits, announced, once its exit timeout has passed
    /// without any of its new beacons.
    @Test func aRegionWhoseBeaconsChangeKeepsItsStateUntilEvidenceSaysOtherwise() throws {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        let counter = Self.beacon(S.identity(1, 1), -60)
        D.play(&engine, [counter], from: S.t0, until: Self.at(3_000))
        var reloadEvents: [EngineEvent] = []
        // Narrowed to major 1, which the counter is: still occupied.
        engine.reconfigure(S.configuration { $0.regions[0].constraint.major = 1 }, now: Self.at(3_000), into: &reloadEvents)
        #expect(reloadEvents.isEmpty)
        #expect(engine.monitor.state(of: "cafe") == .inside)
        var events = D.play(&engine, [counter], from: Self.at(3_000), until: Self.at(20_000))
        #expect(S.transitions(events).isEmpty)
        #expect(D.venueAnswers(events).allSatisfy { $0?.venueID == "counter-1" })
        // Narrowed to major 2, which nothing here is: out 10 s (exit_after)
        // after the reload. The counter, in no region now, is forgotten at
        // once, though still heard (it stayed tracked, and kept its venue
        // beacon's place, until 2026-11-28: an audit).
        engine.reconfigure(S.configuration { $0.regions[0].constraint.major = 2 }, now: Self.at(20_000), into: &reloadEvents)
        #expect(reloadEvents == [.beaconDisappeared(S.identity(1, 1))])
        #expect(engine.trackedBeacons == 0 && !engine.isVenueBeacon(S.identity(1, 1)))
        events = D.play(&engine, [counter], from: Self.at(20_000), until: Self.at(40_000))
        #expect(engine.trackedBeacons == 0)
        let exits = S.transitions(events)
        #expect(exits.map(\.kind) == [.exited])
        #expect(exits.first?.time == Self.at(30_000))
    }

    /// The answer is announced again, the same venue, when the listener
    /// settles and when they move on, like Core Location's live updates with
    /// `isStationary`: a client learns it without polling. The move: a slow
    /// walk (0.5 m/s) from 1 m to 4 m, then still again.
    @Test func theListenerSettlingAndMovingOnIsAnnounced() {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        func rssi(at distance: Double) -> Int8 { Int8((-59 - 20 * log10(distance)).rounded()) }
        var events = D.play(&engine, [Self.beacon(S.identity(1, 1), rssi(at: 1))], from: S.t0, until: Self.at(20_000))
        for tenth in 0..<60 {
            let start = Self.at(20_000 + Int64(tenth) * 100)
            events += D.play(
                &engine, [Self.beacon(S.identity(1, 1), rssi(at: 1 + 0.05 * Double(tenth)))], from: start, until: start + .milliseconds(100))
        }
        events += D.play(&engine, [Self.beacon(S.identity(1, 1), rssi(at: 4))], from: Self.at(26_000), until: Self.at(50_000))
        let answers = D.venueAnswers(events)
        #expect(answers.allSatisfy { $0?.venueID == "counter-1" })
        #expect(answers.map { $0?.isStationary } == [false, true, false, true], "\(answers.map { $0?.isStationary })")
    }

    @Test func reconfigurePostponesNoExit() {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        D.play(&engine, [Self.beacon(S.identity(1, 1), -60)], from: S.t0, until: Self.at(3_000))  // last sighting at 2.9 s
        D.play(&engine, [], from: Self.at(3_000), until: Self.at(8_000))
        var reloadEvents: [EngineEvent] = []
        engine.reconfigure(S.configuration(), now: Self.at(8_000), into: &reloadEvents)
        let events = D.play(&engine, [], from: Self.at(8_000), until: Self.at(30_000))
        let exits = S.transitions(events)
        // Not seen since 2.9 s: out at the first tick 10 s after that, reload or not.
        #expect(exits.map(\.kind) == [.exited])
        #expect(exits.first?.time == Self.at(13_000))
    }

    @Test func reconfigureDropsARemovedVenueFromThePreference() throws {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        try engine.setPreferredVenue("counter-2")
        var next = S.configuration()
        next.venues.removeAll { $0.id == "counter-2" }
        var reloadEvents: [EngineEvent] = []
        let dropped = engine.reconfigure(next, now: Self.at(1_000), into: &reloadEvents)
        #expect(dropped.removedRegions.isEmpty && dropped.droppedPreferredVenue == "counter-2")
        #expect(engine.preferredVenueID == nil)
        #expect(engine.state.preferredVenue == nil)
    }

    @Test func reconfigureThatRemovesTheCurrentVenueAnnouncesItsLoss() throws {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        let counter2 = Self.beacon(S.identity(1, 2), -60)
        var events = D.play(&engine, [counter2], from: S.t0, until: Self.at(3_000))
        #expect(S.venueChanges(events) == ["counter-2"])
        var next = S.configuration()
        next.venues.removeAll { $0.id == "counter-2" }
        events = []
        engine.reconfigure(next, now: Self.at(3_000), into: &events)
        events += D.play(&engine, [counter2], from: Self.at(3_000), until: Self.at(6_000))
        // Whoever listened to NearestVenueChanged still believes "counter-2" unless told otherwise.
        #expect(D.venueAnswers(events).map { $0?.venueID } == [nil])
        #expect(engine.nearestVenue == nil)
    }
}
