@testable import BeaconCore
import Foundation
import Testing

/// SPEC section 5: the nearest venue, with a switch margin and dwell, a confidence, and a preferred venue.
@Suite struct VenueSelectorTests {
    typealias S = EngineTestSupport
    typealias D = EngineDriver
    static let venues = ["a", "b", "c"].enumerated().map { index, id in
        VenueDefinition(
            id: id, name: "Venue \(id)", constraint: BeaconConstraint(uuid: S.uuid, major: 1, minor: UInt16(index + 1)))
    }

    static func at(_ milliseconds: Int64) -> Timestamp { S.t0 + .milliseconds(milliseconds) }

    /// Venue `venue`'s closest beacon at `distance` metres.
    static func candidate(_ venue: Int, _ distance: Double) -> VenueSelector.Candidate {
        VenueSelector.Candidate(
            venueIndex: venue,
            beacon: RangedBeacon(
                identity: S.identity(1, UInt16(venue + 1)), rssi: -60, filteredRSSI: -60, measuredPower: -59, advertisedPower: -59,
                distance: distance, accuracy: 0.1, proximity: .near, isStationary: false, lastSeen: S.t0,
                address: BluetoothAddress(0xC0, 0, 0, 0, 0, UInt8(venue)), venueID: venues[venue].id))
    }

    /// The listener's stillness is taken once the beacons have said it for
    /// the dwell: a runner-up whose word flickers every second (a detector's
    /// false alarm, or someone stepping a spoofed beacon) announces nothing,
    /// a change that holds is announced once.
    @Test func theListenersStillnessIsTakenOnceItHolds() {
        var selector = VenueSelector(margin: 0.2, dwell: .seconds(2))
        let still = Self.still
        var announced: [Bool?] = []
        for tick in 0..<100 {  // 20 s at 200 ms: "a" still throughout, "b" still from 1 s, flickering from 10 s, moving from 14 s
            let seconds = Double(tick) * 0.2
            let runnerUpStill = seconds >= 1 && (seconds < 10 || (seconds < 14 && Int(seconds) % 2 == 0))
            let candidates = [still(Self.candidate(0, 1.0), true), still(Self.candidate(1, 1.5), runnerUpStill)]
            if selector.update(candidates: candidates, venues: Self.venues, preferred: nil, now: Self.at(Int64(tick) * 200)) {
                announced.append(selector.current?.isStationary)
            }
        }
        // "a" at once (moving: "b" is not yet still), still 2 s after "b" settled, moving 2 s after it stopped flickering.
        #expect(announced == [false, true, false], "\(announced)")
    }

    /// `switch_dwell: 0` switches at the first update that sees the
    /// challenger ahead by the margin, not one tick later (an audit of 2026-11-28).
    @Test func aDwellOfZeroSwitchesAtOnce() {
        var selector = VenueSelector(margin: 0.2, dwell: .zero)
        _ = selector.update(candidates: [Self.candidate(0, 1)], venues: Self.venues, preferred: nil, now: Self.at(0))
        #expect(selector.current?.venueID == "a")
        _ = selector.update(candidates: [Self.candidate(0, 3), Self.candidate(1, 1)], venues: Self.venues, preferred: nil, now: Self.at(200))
        #expect(selector.current?.venueID == "b")
        // With a dwell, the first such update only starts it.
        var dwelling = VenueSelector(margin: 0.2, dwell: .milliseconds(400))
        _ = dwelling.update(candidates: [Self.candidate(0, 1)], venues: Self.venues, preferred: nil, now: Self.at(0))
        _ = dwelling.update(candidates: [Self.candidate(0, 3), Self.candidate(1, 1)], venues: Self.venues, preferred: nil, now: Self.at(200))
        #expect(dwelling.current?.venueID == "a")
        _ = dwelling.update(candidates: [Self.candidate(0, 3), Self.candidate(1, 1)], venues: Self.venues, preferred: nil, now: Self.at(600))
        #expect(dwelling.current?.venueID == "b")
    }

    static func still(_ candidate: VenueSelector.Candidate, _ isStill: Bool) -> VenueSelector.Candidate {
        var candidate = candidate
        candidate.beacon.isStationary = isStill
        return candidate
    }

    /// A new answer takes the beacons' word on stillness at once and keeps
    /// it: not "moving" at the next tick and "stationary" again after the
    /// dwell, three announcements for one (the audit of 2026-11-27).
    @Test func stillnessTakenWithANewAnswerIsKept() {
        var selector = VenueSelector(margin: 0.2, dwell: .seconds(2))
        var announced: [String] = []
        for tick in 0..<60 {  // 12 s at 200 ms: both beacons still throughout, but stale from 4 to 6 s
            let seconds = Double(tick) * 0.2
            let candidates = (4..<6).contains(seconds) ? [] : [Self.still(Self.candidate(0, 1.0), true), Self.still(Self.candidate(1, 1.5), true)]
            if selector.update(candidates: candidates, venues: Self.venues, preferred: 2, now: Self.at(Int64(tick) * 200)) {
                announced.append("\(selector.current?.venueID ?? "none") \(selector.current?.isStationary == true ? "still" : "moving")")
            }
        }
        #expect(announced == ["a still", "c moving", "a still"], "\(announced)")
    }

    /// A reload while the preferred venue is the answer keeps no incumbent:
    /// the closest venue ranged next wins at once, as without the reload (the
    /// audit of 2026-11-27: the preferred venue held on like a ranged winner).
    @Test func aReloadDuringAPreferenceAnswerKeepsNoIncumbent() {
        var selector = VenueSelector(margin: 0.2, dwell: .seconds(2))
        _ = selector.update(candidates: [], venues: Self.venues, preferred: 0, now: S.t0)
        #expect(selector.current?.source == .preference)
        selector.retarget(currentIndex: 0)
        _ = selector.update(candidates: [Self.candidate(0, 2.3), Self.candidate(1, 2.0)], venues: Self.venues, preferred: 0, now: Self.at(200))
        #expect(selector.current?.venueID == "b")
    }

    /// A reload that renames the nearest venue is a change of the answer:
    /// NearestVenueChanged carries the new name (it never did).
    @Test func aRenamedNearestVenueIsAChange() {
        var selector = Self.answeringA()
        var renamed = Self.venues
        renamed[0].name = "Venue A, renamed"
        selector.retarget(currentIndex: 0)
        let changed = selector.update(candidates: [Self.candidate(0, 1.0), Self.candidate(1, 1.5)], venues: renamed, preferred: nil, now: Self.at(200))
        #expect(changed && selector.current?.name == "Venue A, renamed")
        let again = selector.update(candidates: [Self.candidate(0, 1.0), Self.candidate(1, 1.5)], venues: renamed, preferred: nil, now: Self.at(400))
        #expect(!again)
    }

    /// A selector that answered "a" (at 1 m, "b" at 1.5 m) at t0.
    static func answeringA() -> VenueSelector {
        var selector = VenueSelector(margin: 0.2, dwell: .seconds(2))
        _ = selector.update(candidates: [candidate(0, 1.0), candidate(1, 1.5)], venues: venues, preferred: nil, now: S.t0)
        return selector
    }

    /// Feeds the same candidates every 100 ms from `start` until just before `end`; returns the answers' ids.
    static func hold(
        _ selector: inout VenueSelector, _ candidates: [VenueSelector.Candidate], from start: Timestamp, until end: Timestamp
    ) -> [String?] {
        var answers: [String?] = []
        var now = start
        while now < end {
            _ = selector.update(candidates: candidates, venues: venues, preferred: nil, now: now)
            answers.append(selector.current?.venueID)
            now = now + .milliseconds(100)
        }
        return answers
    }

    @Test func theFirstAnswerComesAtOnce() {
        var selector = VenueSelector(margin: 0.2, dwell: .seconds(2))
        let changed = selector.update(candidates: [Self.candidate(1, 1.5), Self.candidate(0, 1.0)], venues: Self.venues, preferred: nil, now: S.t0)
        #expect(changed)
        #expect(selector.current?.venueID == "a")
        #expect(selector.current?.name == "Venue a")
        #expect(selector.current?.source == .ranging)
        #expect(selector.current?.beacon?.identity == S.identity(1, 1))
    }

    @Test func aChallengerTenPercentCloserNeverTakesOver() {
        var selector = Self.answeringA()
        let answers = Self.hold(&selector, [Self.candidate(0, 1.0), Self.candidate(1, 0.9)], from: Self.at(100), until: Self.at(60_000))
        #expect(answers.allSatisfy { $0 == "a" })
    }

    @Test func aChallengerThirtyPercentCloserTakesOverAfterTheDwellNotBefore() {
        var selector = Self.answeringA()
        let closer = [Self.candidate(0, 1.0), Self.candidate(1, 0.7)]
        let start = Self.at(1_000)
        let waiting = Self.hold(&selector, closer, from: start, until: start + .milliseconds(2_000))
        #expect(waiting.allSatisfy { $0 == "a" })  // the last of these is at dwell − 100 ms
        let changed = selector.update(candidates: closer, venues: Self.venues, preferred: nil, now: start + .seconds(2))
        #expect(changed)
        #expect(selector.current?.venueID == "b")
    }

    @Test func aChallengerThatDropsBackBeforeTheDwellStartsItsDwellAgain() {
        var selector = Self.answeringA()
        let closer = [Self.candidate(0, 1.0), Self.candidate(1, 0.7)]
        _ = Self.hold(&selector, closer, from: Self.at(1_000), until: Self.at(2_500))
        _ = selector.update(candidates: [Self.candidate(0, 1.0), Self.candidate(1, 0.95)], venues: Self.venues, preferred: nil, now: Self.at(2_500))
        let restart = Self.at(2_600)
        let waiting = Self.hold(&selector, closer, from: restart, until: restart + .seconds(2))
        #expect(waiting.allSatisfy { $0 == "a" })
        _ = selector.update(candidates: closer, venues: Self.venues, preferred: nil, now: restart + .seconds(2))
        #expect(selector.current?.venueID == "b")
    }

    /// Someone standing between two counters, far from the one that has the
    /// answer: the two near ones take turns as the closest every second, each
    /// 20 % nearer than the incumbent throughout. The incumbent was beaten
    /// for the dwell, so the closest of that moment takes over (until
    /// 2026-11-27 the dwell followed one challenger and started again at each
    /// turn: the far venue kept the answer for good).
    @Test func twoChallengersTakingTurnsTakeTheAnswerAfterTheDwell() {
        var selector = VenueSelector(margin: 0.2, dwell: .seconds(2))
        _ = selector.update(candidates: [Self.candidate(0, 5.0)], venues: Self.venues, preferred: nil, now: S.t0)
        var answers: [String?] = []
        for tick in 1...50 {  // 10 s at 200 ms
            let turn = (tick / 5) % 2 == 0
            let candidates = [Self.candidate(0, 5.0), Self.candidate(1, turn ? 1.0 : 1.05), Self.candidate(2, turn ? 1.05 : 1.0)]
            _ = selector.update(candidates: candidates, venues: Self.venues, preferred: nil, now: Self.at(Int64(tick) * 200))
            answers.append(selector.current?.venueID)
        }
        // Beaten from 200 ms: "a" within the dwell, another venue from 2.2 s.
        #expect(answers.prefix(10).allSatisfy { $0 == "a" }, "\(answers)")
        #expect(answers[10] != "a", "\(answers)")
        // And then it stays: neither near one is 20 % nearer than the other.
        #expect(Set(answers.dropFirst(10)).count == 1, "\(answers)")
    }

    /// `max_distance` admits a venue at or within the limit, and keeps the
    /// answer's venue until it is the switch margin beyond it: a listener
    /// standing at the limit, its distance wandering across it, sees one
    /// answer (until 2026-11-27 it came and went at every crossing, each a
    /// NearestVenueChanged, a journal line and an MQTT publish).
    @Test func theAnswerDoesNotComeAndGoAtTheMaxDistance() {
        func at(_ distance: Double, venue: Int = 0) -> VenueSelector.Candidate {
            var candidate = Self.candidate(venue, distance)
            candidate.limit = 5.0
            return candidate
        }
        var selector = VenueSelector(margin: 0.2, dwell: .seconds(2))
        // Not admitted beyond the limit, even alone.
        _ = selector.update(candidates: [at(5.01)], venues: Self.venues, preferred: nil, now: S.t0)
        #expect(selector.current == nil)
        var changes = 0
        for tick in 1...50 {
            let distance = tick % 2 == 0 ? 4.99 : 5.01
            if selector.update(candidates: [at(distance)], venues: Self.venues, preferred: nil, now: Self.at(Int64(tick) * 200)) {
                changes += 1
            }
        }
        #expect(changes == 1 && selector.current?.venueID == "a", "\(changes) \(String(describing: selector.current))")
        // Kept up to its reach (5 m × 1.2); past it, gone at once.
        #expect(selector.reach(of: 5.0) == 6.0)
        _ = selector.update(candidates: [at(5.99)], venues: Self.venues, preferred: nil, now: Self.at(10_200))
        #expect(selector.current?.venueID == "a")
        // Another venue past its own limit is no runner-up, nor a challenger.
        _ = selector.update(candidates: [at(5.5), at(5.2, venue: 1)], venues: Self.venues, preferred: nil, now: Self.at(10_400))
        #expect(selector.current?.venueID == "a" && selector.current?.runnerUpID == nil)
        _ = selector.update(candidates: [at(6.01)], venues: Self.venues, preferred: nil, now: Self.at(10_600))
        #expect(selector.current == nil)
    }

    @Test func anIncumbentOutOfRangeIsReplacedAtOnce() {
        var selector = Self.answeringA()
        let changed = selector.update(candidates: [Self.candidate(1, 1.5)], venues: Self.venues, preferred: nil, now: Self.at(100))
        #expect(changed)
        #expect(selector.current?.venueID == "b")
    }

    @Test func theAnswerCarriesTheRunnerUpAndTheMargin() throws {
        var selector = VenueSelector(margin: 0.2, dwell: .seconds(2))
        _ = selector.update(
            candidates: [Self.candidate(2, 4.0), Self.candidate(0, 1.5), Self.candidate(1, 2.5)], venues: Self.venues, preferred: nil,
            now: S.t0)
        let answer = try #require(selector.current)
        #expect(answer.venueID == "a")
        #expect(answer.runnerUpID == "b")
        #expect(abs(answer.margin - (2.5 - 1.5) / 2.5) < 1e-12)
        // Alone: no runner-up, and a full lead.
        _ = selector.update(candidates: [Self.candidate(0, 1.5)], venues: Self.venues, preferred: nil, now: Self.at(100))
        #expect(selector.current?.runnerUpID == nil)
        #expect(selector.current?.margin == 1)
    }

    @Test func nothingInRangeIsNoAnswer() {
        var selector = Self.answeringA()
        let changed = selector.update(candidates: [], venues: Self.venues, preferred: nil, now: Self.at(100))
        #expect(changed)
        #expect(selector.current == nil)
        let changedAgain = selector.update(candidates: [], venues: Self.venues, preferred: nil, now: Self.at(200))
        #expect(!changedAgain)
    }

    @Test func withNothingInRangeThePreferredVenueAnswersAsAPreference() throws {
        var selector = Self.answeringA()
        _ = selector.update(candidates: [], venues: Self.venues, preferred: 2, now: Self.at(100))
        let answer = try #require(selector.current)
        #expect(answer.venueID == "c")
        #expect(answer.source == .preference)
        #expect(answer.beacon == nil)
        // Ranging wins over the preference as soon as something is in range.
        _ = selector.update(candidates: [Self.candidate(1, 2.0)], venues: Self.venues, preferred: 2, now: Self.at(200))
        #expect(selector.current?.venueID == "b")
        #expect(selector.current?.source == .ranging)
    }

    @Test func maxDistanceExcludesAVenue() {
        // counter-1 at 10^(10/20) ≈ 3.2 m, counter-2 at 10^(14/20) ≈ 5.0 m.
        let signals = [
            TestBeacon(identity: S.identity(1, 1), interval: .milliseconds(100), rssi: -69),
            TestBeacon(identity: S.identity(1, 2), interval: .milliseconds(100), rssi: -73),
        ]
        var open = BeaconEngine(configuration: S.configuration(), now: S.t0)
        var limited = BeaconEngine(configuration: S.configuration { $0.venues[0].maxDistance = 3 }, now: S.t0)
        D.play(&open, signals, from: S.t0, until: Self.at(3_000))
        D.play(&limited, signals, from: S.t0, until: Self.at(3_000))
        #expect(open.nearestVenue?.venueID == "counter-1")
        #expect(limited.nearestVenue?.venueID == "counter-2")
        #expect(limited.nearestVenue?.runnerUpID == nil)
    }

    /// Through the engine: the answer's venue, its beacon now past the limit
    /// but within the reach, reaches the selector and keeps the answer; past
    /// the reach it is gone. The limit is set between the distances the
    /// engine itself makes of the two levels (a probe engine, same input).
    @Test func theEngineKeepsTheAnswersVenuePastItsLimitWithinItsReach() throws {
        let counter1 = S.identity(1, 1)
        func phases(_ engine: inout BeaconEngine) -> [Double?] {
            [-66, -68, -75].enumerated().map { phase, rssi in
                D.play(
                    &engine, [TestBeacon(identity: counter1, interval: .milliseconds(100), rssi: Int8(rssi))],
                    from: Self.at(Int64(phase) * 15_000), until: Self.at(Int64(phase + 1) * 15_000))
                return engine.rangedBeacon(counter1)?.distance
            }
        }
        var probe = BeaconEngine(configuration: S.configuration(), now: S.t0)
        let distances = phases(&probe).compactMap { $0 }
        try #require(distances.count == 3)
        let limit = (distances[0] + distances[1]) / 2
        try #require(distances[1] < limit * 1.2 && distances[2] > limit * 1.2, "\(distances), limit \(limit)")
        var engine = BeaconEngine(configuration: S.configuration { $0.venues[0].maxDistance = limit }, now: S.t0)
        var answers: [String?] = []
        for phase in 0..<3 {
            D.play(
                &engine, [TestBeacon(identity: counter1, interval: .milliseconds(100), rssi: [-66, -68, -75][phase])],
                from: Self.at(Int64(phase) * 15_000), until: Self.at(Int64(phase + 1) * 15_000))
            answers.append(engine.nearestVenue?.venueID)
        }
        #expect(answers == ["counter-1", "counter-1", nil], "\(answers), distances \(distances), limit \(limit)")
    }

    @Test func theRangingMaxDistanceIsEveryVenuesDefault() {
        var engine = BeaconEngine(configuration: S.configuration { $0.ranging.maxDistance = 3 }, now: S.t0)
        D.play(
            &engine, [TestBeacon(identity: S.identity(1, 1), interval: .milliseconds(100), rssi: -69)], from: S.t0, until: Self.at(3_000))
        #expect(engine.rangedBeacon(S.identity(1, 1))?.proximity == .far)
        #expect(engine.nearestVenue == nil)
    }

    @Test func setPreferredVenueRefusesAnUnknownVenue() throws {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        try engine.setPreferredVenue("counter-2")
        #expect(throws: EngineError.unknownVenue("nowhere")) { try engine.setPreferredVenue("nowhere") }
        #expect(engine.preferredVenueID == "counter-2")
    }

    @Test func thePreferredVenueStandsInThroughTheEngine() throws {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        try engine.setPreferredVenue("counter-2")
        let events = D.play(&engine, [], from: S.t0, until: Self.at(1_000))
        let answers = D.venueAnswers(events)
        #expect(answers.count == 1)
        #expect(answers.first??.venueID == "counter-2")
        #expect(answers.first??.source == .preference)
    }
}
