import BeaconCore
import BeaconEvaluation
import BeaconSimulation
import Testing

/// `beacond evaluate --source simulate`, which makes the cafés' figures:
/// the nearest venue, its delay and switches, the regions and stillness are
/// scored against the walk's truth, and the stand-average reference is scored
/// on the same standing moments as beacond and starts over at each stop.
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

    /// Two counters 4 m apart and a clean radio: the listener waits 30 s at
    /// each, half a metre in front.
    static func twoCounters() -> Scenario {
        var scenario = twoStops()
        scenario.name = "two-counters"
        scenario.beacons.append(Scenario.Beacon(identity: EngineTestSupport.identity(1, 2), position: Position(x: 4, y: 0)))
        scenario.start = Position(x: 0, y: -0.5)
        scenario.stops = [
            Scenario.Stop(destination: Position(x: 0, y: -0.5), pause: .seconds(30)),
            Scenario.Stop(destination: Position(x: 4, y: -0.5), pause: .seconds(30)),
        ]
        return scenario
    }

    @Test func theNearestVenueItsDelayAndTheRegionAreScoredAgainstTheWalk() throws {
        let evaluation = SimulationEvaluation(scenario: Self.twoCounters(), configuration: EngineTestSupport.configuration())
        #expect(evaluation.scenarioName == "two-counters")
        #expect(evaluation.duration == .seconds(64))  // 30 s, a 4 m walk at 1 m/s, 30 s
        #expect(evaluation.baselines.map(\.name) == BaselineRanger.Kind.allCases.map(\.rawValue))
        let beacond = evaluation.beacond.venues
        #expect(try #require(beacond.accuracy) > 0.9)
        #expect(beacond.spuriousSwitches == 0)
        #expect(beacond.timesToCorrect.count == 2)
        let worst = try #require(beacond.worstTimeToCorrect)
        #expect(worst < .seconds(5), "the second counter took \(worst)")
        // The 20 s average still leans on the first counter when the second is reached.
        let averaged = try #require(evaluation.baselines.first { $0.name == BaselineRanger.Kind.runningAverage.rawValue })
        #expect(try #require(averaged.venues.timesToCorrect.last ?? nil) > worst)
        #expect(evaluation.beacond.bands.bandAccuracy > 0.9)
        #expect(evaluation.beacond.bands.coverage != nil)
        // Both beacons are heard from the first tick: the region is entered at once and never left.
        #expect(evaluation.regions.enterLatencies.count == 1)
        #expect(try #require(evaluation.regions.enterLatencies.first) < .seconds(1))
        #expect(evaluation.regions.exitLatencies.isEmpty && evaluation.regions.spuriousEvents == 0)
        #expect(evaluation.stationaryStanding > 0.3)
        #expect(evaluation.stationaryWalking < evaluation.stationaryStanding)
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
