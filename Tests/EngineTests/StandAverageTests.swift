import BeaconCore
import BeaconEvaluation
import Foundation
import Testing

/// `StandAverage`, the hindsight reference of `beacond evaluate`: the mean
/// of a stand's readings through the path-loss model.
@Suite struct StandAverageTests {
    @Test func itIsTheMeanOfTheStandsReadingsAndStartsOverAtANewDistance() throws {
        var reference = StandAverage(settings: RangingSettings())
        let beacon = EngineTestSupport.identity()
        let now = EngineTestSupport.t0
        #expect(reference.distance(beacon, now: now) == nil, "nothing read yet")
        // −59 dBm on average at 1 m: 1 m exactly; a row with no reading changes nothing.
        for rssi: Int8 in [-52, -66] { reference.observe(beacon, rssi: rssi, measuredPower: -59, trueDistance: 1, at: now) }
        reference.observe(beacon, rssi: nil, measuredPower: -59, trueDistance: 1, at: now)
        #expect(abs(try #require(reference.distance(beacon, now: now)) - 1) < 1e-9)
        var score = BandScore()
        score.record(beacon, plainDistance: reference.distance(beacon, now: now), trueDistance: 1, bands: ProximityBands(immediate: 0.5, near: 3))
        #expect(score.correctBands == 1, "1 m is near")
        // A new true distance: only its own reading counts (−71 dBm: 10^(12/20) m).
        reference.observe(beacon, rssi: -71, measuredPower: -59, trueDistance: 4, at: now)
        #expect(abs(try #require(reference.distance(beacon, now: now)) - pow(10, 12.0 / 20)) < 1e-9)
        // Unheard for longer than the baselines wait, it answers nothing, as they do.
        #expect(reference.distance(beacon, now: now + BaselineRanger.staleAfter) != nil)
        #expect(reference.distance(beacon, now: now + BaselineRanger.staleAfter + .milliseconds(1)) == nil)
    }
}
