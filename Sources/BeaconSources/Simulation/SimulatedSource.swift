import BeaconCore
import BeaconSimulation

/// `simulate[:SCENARIO]`: a scenario's walk played at the pace of real time,
/// over and over (each round with the next seed), as if a radio heard it.
public struct SimulatedSource: Sendable {
    public let scenario: Scenario

    public init(scenario: Scenario) {
        self.scenario = scenario
    }

    /// Delivers receptions until cancelled. Times are wall-clock times.
    public func run<C: Clock<Duration>>(
        clock: C, startTime: Timestamp, _ deliver: (SourceEvent) -> Void
    ) async {
        var round = scenario
        var roundStart = startTime
        let startInstant = clock.now
        while !Task.isCancelled {
            var simulator = Simulator(scenario: round, startTime: roundStart)
            while let reception = simulator.next() {
                let due = startInstant.advanced(by: reception.advertisement.time - startTime)
                if due > clock.now {
                    do { try await clock.sleep(until: due, tolerance: .milliseconds(5)) } catch { return }
                }
                deliver(.advertisement(reception.advertisement))
            }
            roundStart = roundStart + simulator.trajectory.duration
            round.seed &+= 1
        }
    }
}
