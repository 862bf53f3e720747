import BeaconCore
import BeaconEvaluation
import BeaconSimulation
import Testing

/// `beacond evaluate --source simulate`: the stand-average reference is
/// scored on the same standing moments as beacond and starts over at each stop.
@Suite struct SimulationEvaluationTests {
    /// One beacon, a radio with no shadowing and next to no fading, and the
    /// listener standing 30 s at 1 m, then 30 s at 4 m: every stop's packets
    /// say its distance, to the dB.
    static func twoStops() -> Scenario {
        var radio = Scenario.Radio()
        radio.pathLossExponent = 2
        radio.shadowingSigma = 0
        radio.fadingK = 1000
        radio.packetLoss = 0
        return Scenario(
            name: "two-stops", seed: 4,
            beacons: [Scenario.Beacon(identity: EngineTestSupport.identity(), position: Position(x: 0, y: 0))],
            radio: radio, start: Position(x: 1, y: 0), speed: 1,
            stops: [
                Scenario.Stop(destination: Position(x: 1, y: 0), pause: .seconds(30)),
                Scenario.Stop(destination: Position(x: 4, y: 0), pause: .seconds(30)),
            ])
    }

    @Test func theStandAverageIsScoredBesideBeacondAndStartsOverAtEachStop() {
        let evaluation = SimulationEvaluation(scenario: Self.twoStops(), configuration: EngineTestSupport.configuration())
        let reference = evaluation.standAverage
        #expect(reference.samples > 500)
        #expect(reference.samples == evaluation.beacond.bands.samples)
        // Averaged across both stops (1 m and 4 m) it would read about 2 m at the
        // second, "near" for much of its 30 s, and be off by metres.
        #expect(reference.bandAccuracy > 0.98, "bands right on \(reference.bandAccuracy)")
        #expect(reference.medianError < 0.05, "median error \(reference.medianError) m")
        #expect(reference.coverage == nil, "it claims no accuracy")
    }
}
