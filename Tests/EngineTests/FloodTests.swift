import BeaconCore
import Foundation
import Testing

private typealias S = EngineTestSupport

/// Anyone in radio range can spray identities of a configured UUID: the
/// engine stays bounded, and the venue a listener stands at stays the answer
/// (SPEC section 6: "a flood of unknown identities cannot evict configured
/// beacons, grow memory without bound, or delay the answers").
@Suite struct FloodTests {
    static let counter1 = S.identity(1, 1)

    /// Identities no venue claims (majors from 1000 up), `n` of them.
    static func stranger(_ n: Int) -> BeaconIdentity {
        S.identity(UInt16(1_000 + n / 65_536), UInt16(n % 65_536))
    }

    struct Run {
        var events: [EngineEvent] = []
        var answers: [String?] = []
        var largestTracked = 0
        var largestRanged = 0
    }

    /// Counter 1 at −60 dBm every 100 ms beside `rate` strangers a second,
    /// each sending twice 20 ms apart (entry evidence of its own) and louder,
    /// for `seconds`, on a hand clock that ticks every 200 ms.
    static func flood(
        _ engine: inout BeaconEngine, rate: Int, seconds: Int, louder: Int8 = -40, minting: (Int) -> BeaconIdentity = stranger
    ) -> Run {
        var run = Run()
        let step: Duration = .microseconds(1_000_000 / Int64(rate))
        var next = 0
        var stranger = S.t0
        var genuine = S.t0
        var tick = S.t0
        let end = S.t0 + .seconds(Int64(seconds))
        while tick < end {
            let until = tick + .milliseconds(200)
            while genuine < until || stranger < until {
                if genuine <= stranger {
                    engine.ingest(S.sighting(counter1, rssi: -60, at: genuine), into: &run.events)
                    genuine = genuine + .milliseconds(100)
                } else {
                    let identity = minting(next)
                    engine.ingest(S.sighting(identity, rssi: louder, at: stranger), into: &run.events)
                    engine.ingest(S.sighting(identity, rssi: louder, at: stranger + .milliseconds(20)), into: &run.events)
                    next += 1
                    stranger = stranger + step
                }
            }
            tick = until
            engine.tick(now: tick, into: &run.events)
            run.answers.append(engine.nearestVenue?.venueID)
            run.largestTracked = max(run.largestTracked, engine.trackedBeacons)
            run.largestRanged = max(run.largestRanged, engine.rangedBeacons().count)
        }
        return run
    }

    @Test(arguments: [50, 1_000])
    func aFloodOfStrangersLeavesTheVenueAndTheRegionAlone(rate: Int) {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        let run = Self.flood(&engine, rate: rate, seconds: 60)
        // Counter 1 is the answer from the first seconds on, and stays it.
        let settled = run.answers.drop { $0 == nil }
        #expect(run.answers.prefix(15).contains("counter-1"))
        #expect(settled.allSatisfy { $0 == "counter-1" })
        #expect(!S.transitions(run.events).contains { $0.kind == .exited })
        // Bounded, whatever the rate.
        #expect(run.largestTracked <= engine.limits.trackedBeacons)
        #expect(run.largestRanged <= engine.limits.rangedStrangers + 1)
        // Strangers are not churned through the ranged set: a handful of
        // generations (each lives out its forget timeout), not one per arrival.
        let appeared = run.events.count { if case .beaconAppeared = $0 { true } else { false } }
        #expect(appeared <= engine.limits.rangedStrangers * 8 + 1, "\(appeared) beacons appeared")
    }

    @Test func aVenueBeaconIsNeverEvictedByStrangers() {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        engine.limits.trackedBeacons = 20
        engine.limits.rangedStrangers = 5
        let run = Self.flood(&engine, rate: 1_000, seconds: 10)
        #expect(engine.rangedBeacon(Self.counter1) != nil)
        #expect(run.largestTracked == 20)
        #expect(run.largestRanged == 6)
        #expect(engine.evictions > 0)
        #expect(engine.nearestVenue?.venueID == "counter-1")
    }

    /// A venue of every beacon of major 7.
    static let bar = VenueDefinition(id: "bar", name: "Bar", constraint: BeaconConstraint(uuid: S.uuid, major: 7))

    /// A venue that leaves the minor open (`{uuid, major: 7}`, as
    /// configuration.md allows) matches every identity minted under it: only
    /// its eight longest tracked beacons are venue beacons, the rest
    /// strangers — evicted first, ranged within the strangers' cap. Until
    /// 2026-11-27 every one was a venue beacon: a flood of them was ranged
    /// past the cap and pushed counter 1's beacon out, so counter 1 was
    /// never the answer (the audit of that day).
    @Test func identitiesMintedUnderAnOpenVenueAreStrangersPastTheFirstEight() {
        var engine = BeaconEngine(configuration: S.configuration { $0.venues.append(Self.bar) }, now: S.t0)
        engine.limits.trackedBeacons = 20
        engine.limits.rangedStrangers = 5
        let run = Self.flood(&engine, rate: 1_000, seconds: 10, louder: -70) { S.identity(7, UInt16($0 % 65_536)) }
        #expect(engine.rangedBeacon(Self.counter1) != nil)
        #expect(!run.events.contains(.beaconDisappeared(Self.counter1)))
        #expect(run.answers.drop { $0 == nil }.allSatisfy { $0 == "counter-1" }, "\(run.answers)")
        // Counter 1, the bar's first eight, and five strangers at most.
        #expect(run.largestRanged <= 1 + engine.limits.venueBeaconsPerVenue + engine.limits.rangedStrangers, "\(run.largestRanged)")
        #expect(engine.isVenueBeacon(Self.counter1))
    }

    /// The bar's place goes to its longest tracked stranger when one of its
    /// venue beacons is forgotten, and a reload counts them again.
    @Test func anOpenVenuesPlaceGoesToItsLongestTrackedBeacon() {
        var engine = BeaconEngine(configuration: S.configuration { $0.venues.append(Self.bar) }, now: S.t0)
        engine.limits.venueBeaconsPerVenue = 2
        var events: [EngineEvent] = []
        // Three bar beacons, first heard in this order; the first then falls silent.
        for (offset, minor) in [(0, 1), (10, 2), (20, 3)] {
            engine.ingest(S.sighting(S.identity(7, UInt16(minor)), rssi: -60, at: S.t0 + .milliseconds(Int64(offset))), into: &events)
        }
        #expect([1, 2, 3].map { engine.isVenueBeacon(S.identity(7, UInt16($0))) } == [true, true, false])
        // A fourth from the first second on: a stranger, and still one once minor 1's place goes to minor 3, tracked longer.
        for second in 1...40 {
            let now = S.t0 + .seconds(Int64(second))
            for minor in [2, 3, 4] { engine.ingest(S.sighting(S.identity(7, UInt16(minor)), rssi: -60, at: now), into: &events) }
            engine.tick(now: now, into: &events)
        }
        #expect([1, 2, 3, 4].map { engine.isVenueBeacon(S.identity(7, UInt16($0))) } == [false, true, true, false])
        // A reload that names minor 3 as a venue of its own: it is that venue's, and the bar's two places are minors 2 and 4.
        engine.reconfigure(
            S.configuration {
                $0.venues.append(VenueDefinition(id: "three", name: "Three", constraint: BeaconConstraint(uuid: S.uuid, major: 7, minor: 3)))
                $0.venues.append(Self.bar)
            }, now: S.t0 + .seconds(41), into: &events)
        #expect([2, 3, 4].allSatisfy { engine.isVenueBeacon(S.identity(7, UInt16($0))) })
    }

    @Test func strangersNotRangedAreEvictedBeforeRangedOnes() {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        engine.limits.trackedBeacons = 4
        var events: [EngineEvent] = []
        // Region inside; one stranger ranged (heard twice), then strangers heard once each.
        EngineDriver.play(&engine, [TestBeacon(identity: Self.counter1, interval: .milliseconds(100), rssi: -60)], from: S.t0, until: S.t0 + .seconds(2))
        let kept = Self.stranger(0)
        engine.ingest(S.sighting(kept, rssi: -50, at: S.t0 + .seconds(2)), into: &events)
        engine.ingest(S.sighting(kept, rssi: -50, at: S.t0 + .milliseconds(2_050)), into: &events)
        #expect(engine.rangedBeacon(kept) != nil)
        for n in 1...10 {
            engine.ingest(S.sighting(Self.stranger(n), rssi: -50, at: S.t0 + .milliseconds(2_100 + Int64(n))), into: &events)
        }
        #expect(engine.trackedBeacons == 4)
        #expect(engine.rangedBeacon(kept) != nil)
        #expect(engine.rangedBeacon(Self.counter1) != nil)
        #expect(!events.contains(.beaconDisappeared(kept)))
    }

    @Test func anIdentityHeardOnceIsNotRangedTwiceWithinTheWindowIs() {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        EngineDriver.play(&engine, [TestBeacon(identity: Self.counter1, interval: .milliseconds(100), rssi: -60)], from: S.t0, until: S.t0 + .seconds(2))
        var events: [EngineEvent] = []
        let once = Self.stranger(1)
        let twiceApart = Self.stranger(2)
        let twice = Self.stranger(3)
        engine.ingest(S.sighting(once, rssi: -50, at: S.t0 + .seconds(2)), into: &events)
        engine.ingest(S.sighting(twiceApart, rssi: -50, at: S.t0 + .seconds(2)), into: &events)
        engine.ingest(S.sighting(twiceApart, rssi: -50, at: S.t0 + .milliseconds(4_500)), into: &events)  // 2.5 s later
        engine.ingest(S.sighting(twice, rssi: -50, at: S.t0 + .seconds(2)), into: &events)
        engine.ingest(S.sighting(twice, rssi: -50, at: S.t0 + .milliseconds(3_900)), into: &events)
        #expect(engine.rangedBeacon(once) == nil)
        #expect(engine.rangedBeacon(twiceApart) == nil)
        #expect(engine.rangedBeacon(twice) != nil)
        #expect(events.filter { if case .beaconAppeared = $0 { true } else { false } } == [.beaconAppeared(twice)])
    }
}
