import BeaconCore
import BeaconSimulation
import Foundation
import Testing

/// SPEC section 2 (`simulate`): a seeded radio, log-distance path loss, packet loss, a walking listener.
@Suite struct SimulatorSpecTests {
    /// One beacon at the origin; the listener stands 3 m away for ten minutes.
    static func standing(seed: UInt64, _ radio: (inout Scenario.Radio) -> Void = { _ in }) -> Scenario {
        var settings = Scenario.Radio()
        radio(&settings)
        return Scenario(
            name: "standing", seed: seed,
            beacons: [Scenario.Beacon(identity: EngineTestSupport.identity(), position: Position(x: 0, y: 0))],
            radio: settings, start: Position(x: 3, y: 0),
            stops: [Scenario.Stop(destination: Position(x: 3, y: 0), pause: .seconds(600))])
    }

    /// A clean channel: no shadowing, (almost) no fading.
    static func clean(_ radio: inout Scenario.Radio) {
        radio.shadowingSigma = 0
        radio.fadingK = 1e6
    }

    static func receptions(_ scenario: Scenario, limit: Int = .max) -> [Simulator.Reception] {
        var simulator = Simulator(scenario: scenario, startTime: EngineTestSupport.t0)
        var result: [Simulator.Reception] = []
        while result.count < limit, let next = simulator.next() { result.append(next) }
        return result
    }

    struct Received: Equatable {
        var time: Timestamp
        var rssi: Int8?
    }

    static func first500(seed: UInt64) -> [Received] {
        receptions(standing(seed: seed), limit: 500).map { Received(time: $0.advertisement.time, rssi: $0.advertisement.report.rssi) }
    }

    @Test func theSameSeedPlaysTheSameReceptions() {
        let a = Self.first500(seed: 42)
        #expect(a.count == 500)
        #expect(a == Self.first500(seed: 42))
    }

    @Test func anotherSeedPlaysOtherReceptions() {
        let a = Self.first500(seed: 42)
        let b = Self.first500(seed: 43)
        #expect(a != b)
        #expect(zip(a, b).filter { $0.rssi != $1.rssi }.count > 100)
    }

    @Test func theMeanRSSIFollowsThePathLossModel() {
        let scenario = Self.standing(seed: 9) {
            Self.clean(&$0)
            $0.packetLoss = 0
        }
        let rssi = Self.receptions(scenario, limit: 2000).compactMap { $0.advertisement.report.rssi.map(Double.init) }
        #expect(rssi.count == 2000)
        let mean = rssi.reduce(0, +) / Double(rssi.count)
        let model = -59 - 10 * scenario.radio.pathLossExponent * log10(3.0)
        #expect(abs(mean - model) < 1.5, "mean \(mean) dBm, model \(model) dBm")
    }

    @Test(arguments: [0.1, 0.3])
    func packetsAreLostAtTheScenariosRate(loss: Double) {
        let scenario = Self.standing(seed: 11) {
            Self.clean(&$0)
            $0.packetLoss = loss
        }
        let times = Self.receptions(scenario).map(\.advertisement.time)
        // Sends are 100–110 ms apart, so a gap of g holds floor(g / 100 ms) sends (for fewer than ten in a row lost).
        let sent = 1 + zip(times, times.dropFirst()).map { Int(($1 - $0).microseconds / 100_000) }.reduce(0, +)
        let rate = 1 - Double(times.count) / Double(sent)
        #expect(sent > 5_000)
        #expect(abs(rate - loss) < 0.02, "lost \(rate) of \(sent)")
    }

    @Test func trajectoryPositionsAtSegmentBoundaries() {
        let trajectory = Trajectory(
            start: Position(x: 0, y: 0), speed: 1,
            stops: [
                Scenario.Stop(destination: Position(x: 3, y: 4), pause: .seconds(10)),
                Scenario.Stop(destination: Position(x: 3, y: 0), pause: .seconds(5)),
            ])
        // Walk 5 s, wait 10 s, walk 4 s, wait 5 s.
        #expect(trajectory.duration == .seconds(24))
        #expect(trajectory.position(at: .zero) == Position(x: 0, y: 0))
        #expect(trajectory.position(at: .milliseconds(2_500)) == Position(x: 1.5, y: 2))
        #expect(trajectory.position(at: .seconds(5)) == Position(x: 3, y: 4))
        #expect(trajectory.position(at: .seconds(15)) == Position(x: 3, y: 4))
        #expect(trajectory.position(at: .seconds(17)) == Position(x: 3, y: 2))
        #expect(trajectory.position(at: .seconds(19)) == Position(x: 3, y: 0))
        #expect(trajectory.position(at: .seconds(24)) == Position(x: 3, y: 0))
        #expect(trajectory.position(at: .seconds(100)) == Position(x: 3, y: 0))
    }

    @Test(arguments: [
        (Duration.zero, Int?.none), (.milliseconds(4_999), nil), (.seconds(5), 0), (.milliseconds(14_999), 0),
        (.seconds(15), nil), (.milliseconds(18_999), nil), (.seconds(19), 1), (.milliseconds(23_999), 1),
    ])
    func pausesBelongToTheirStop(time: Duration, stop: Int?) {
        let trajectory = Trajectory(
            start: Position(x: 0, y: 0), speed: 1,
            stops: [
                Scenario.Stop(destination: Position(x: 3, y: 4), pause: .seconds(10)),
                Scenario.Stop(destination: Position(x: 3, y: 0), pause: .seconds(5)),
            ])
        #expect(trajectory.segment(at: time)?.stop == stop)
    }

    @Test func aStopWhereTheListenerAlreadyStandsIsOnlyAPause() {
        let trajectory = Trajectory(
            start: Position(x: 1, y: 1), speed: 1, stops: [Scenario.Stop(destination: Position(x: 1, y: 1), pause: .seconds(3))])
        #expect(trajectory.segments.count == 1)
        #expect(trajectory.segment(at: .zero)?.stop == 0)
        #expect(trajectory.duration == .seconds(3))
    }
}
