import BeaconCore
import BeaconSimulation
import Foundation

/// A beacon the tests play into an engine: who, how often, how loud.
struct TestBeacon {
    var identity: BeaconIdentity
    var interval: Duration
    var rssi: Int8
    /// Each sighting's RSSI is `rssi` plus a whole number of dB drawn uniformly
    /// from −`noise`…`noise` by a generator seeded with `seed`.
    var noise: Int8 = 0
    var seed: UInt64 = 1
    /// The frame's measured power at 1 m.
    var power: Int8 = -59
}

/// Plays beacons into an engine on a hand-driven clock: no sleeping, no wall clock.
enum EngineDriver {
    static let tickInterval = BeaconEngine.tickInterval

    /// From `start` until just before `end`: each beacon sends at `start`,
    /// `start + interval`, …; the clock ticks at `start`, `start + 200 ms`, …;
    /// a sighting due at a tick's time is ingested before that tick. Returns every event, in order.
    ///
    /// Consecutive calls chain: play(…, from: a, until: b) then play(…, from: b, until: c).
    @discardableResult
    static func play(
        _ engine: inout BeaconEngine, _ beacons: [TestBeacon], from start: Timestamp, until end: Timestamp
    ) -> [EngineEvent] {
        var events: [EngineEvent] = []
        var due = beacons.map { _ in start }
        var random = beacons.map { SeededRandom(seed: $0.seed) }
        var tick = start
        while true {
            while let index = beacons.indices.filter({ due[$0] <= tick && due[$0] < end }).min(by: { due[$0] < due[$1] }) {
                let beacon = beacons[index]
                let noise = Int(beacon.noise)
                let offset = noise == 0 ? 0 : Int((random[index].uniform() * Double(2 * noise + 1)).rounded(.down)) - noise
                let rssi = Int8(clamping: Int(beacon.rssi) + offset)
                engine.ingest(
                    EngineTestSupport.sighting(beacon.identity, rssi: rssi, at: due[index], power: beacon.power),
                    into: &events)
                due[index] = due[index] + beacon.interval
            }
            guard tick < end else { return events }
            engine.tick(now: tick, into: &events)
            tick = tick + tickInterval
        }
    }

    /// The nearest-venue answers announced, in order (`nil`: lost).
    static func venueAnswers(_ events: [EngineEvent]) -> [NearestVenue?] {
        events.compactMap { if case .nearestVenueChanged(let venue) = $0 { .some(venue) } else { nil } }
    }
}
