import BeaconCore
import BeaconSimulation
import Foundation
import Testing

@Suite struct SimulatorTests {
    static func scenario(seed: UInt64, radio: (inout Scenario.Radio) -> Void = { _ in }) -> Scenario {
        var settings = Scenario.Radio()
        radio(&settings)
        return Scenario(
            name: "test", seed: seed,
            beacons: [Scenario.Beacon(identity: EngineTestSupport.identity(), position: Position(x: 0, y: 0))],
            radio: settings, start: Position(x: 2, y: 0), speed: 1,
            stops: [Scenario.Stop(destination: Position(x: 2, y: 0), pause: .seconds(300))])
    }

    static func receptions(_ scenario: Scenario, count: Int) -> [Simulator.Reception] {
        var simulator = Simulator(scenario: scenario, startTime: EngineTestSupport.t0)
        var result: [Simulator.Reception] = []
        while result.count < count, let next = simulator.next() { result.append(next) }
        return result
    }

    @Test func theSameSeedPlaysTheSameAndAnotherDiffers() {
        let a = Self.receptions(Self.scenario(seed: 5), count: 500).map { ($0.advertisement.time, $0.advertisement.report.rssi) }
        let b = Self.receptions(Self.scenario(seed: 5), count: 500).map { ($0.advertisement.time, $0.advertisement.report.rssi) }
        let c = Self.receptions(Self.scenario(seed: 6), count: 500).map { ($0.advertisement.time, $0.advertisement.report.rssi) }
        #expect(a.elementsEqual(b) { $0.0 == $1.0 && $0.1 == $1.1 })
        #expect(!a.elementsEqual(c) { $0.0 == $1.0 && $0.1 == $1.1 })
    }

    @Test func meanRSSIFollowsThePathLossModel() {
        let scenario = Self.scenario(seed: 9) {
            $0.shadowingSigma = 0
            $0.fadingK = 1000
            $0.packetLoss = 0
        }
        let rssi = Self.receptions(scenario, count: 2000).compactMap { $0.advertisement.report.rssi.map(Double.init) }
        let mean = rssi.reduce(0, +) / Double(rssi.count)
        // −59 − 10·2.2·log10(2)
        #expect(abs(mean - (-59 - 22 * log10(2.0))) < 1.5)
    }

    @Test func packetLossIsAsConfigured() {
        let scenario = Self.scenario(seed: 11) { $0.packetLoss = 0.3 }
        let received = Self.receptions(scenario, count: 100_000)
        // 300 s at 100 ms plus up to 10 ms of advertising delay: about 2860 sent.
        let sent = 300.0 / 0.105
        #expect(abs(Double(received.count) / sent - 0.7) < 0.05)
    }

    @Test func trajectoryWalksThenPauses() {
        let trajectory = Trajectory(
            start: Position(x: 0, y: 0), speed: 1,
            stops: [Scenario.Stop(destination: Position(x: 3, y: 4), pause: .seconds(10))])
        #expect(trajectory.duration == .seconds(15))
        #expect(trajectory.position(at: .milliseconds(2500)) == Position(x: 1.5, y: 2))
        #expect(trajectory.segment(at: .seconds(4))?.stop == nil)
        #expect(trajectory.segment(at: .seconds(6))?.stop == 0)
        #expect(trajectory.position(at: .seconds(12)) == Position(x: 3, y: 4))
    }
}
