import BeaconCore
import BeaconEvaluation
import BeaconSimulation
import Foundation
import Testing

/// The 20 s baseline is the 10 %-trimmed mean of the last 20 s, however its
/// window is kept: the same distance as sorting the window, on random rows
/// at random rates, with samples leaving the window as time goes on.
struct BaselineRangerTests {
    @Test func theRunningAverageIsTheTrimmedMeanOfTheLastTwentySeconds() {
        var random = SeededRandom(seed: 5)
        let beacon = BeaconIdentity(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 1)
        let model = PathLossModel(exponent: RangingSettings().pathLossExponent)
        var ranger = BaselineRanger(kind: .runningAverage, settings: RangingSettings())
        var raw = BaselineRanger(kind: .raw, settings: RangingSettings())
        var history: [(time: Timestamp, rssi: Int8)] = []
        var time = Timestamp.milliseconds(0)
        for _ in 0..<3_000 {
            time = time + .milliseconds(Int64(random.next() % 120))  // bursts (0 ms apart) and gaps
            let rssi = Int8(-100 + Int(random.next() % 60))
            ranger.observe(beacon, rssi: rssi, measuredPower: -59, at: time)
            raw.observe(beacon, rssi: rssi, measuredPower: -59, at: time)
            history.append((time, rssi))
            history.removeAll { time - $0.time >= BaselineRanger.window }
            let sorted = history.map { Double($0.rssi) }.sorted()
            let trim = sorted.count / 10
            let kept = sorted[trim..<(sorted.count - trim)]
            let expected = model.distance(rssi: kept.reduce(0, +) / Double(kept.count), measuredPower: -59)
            #expect(ranger.distance(beacon, now: time) == expected)
            #expect(raw.distance(beacon, now: time) == model.distance(rssi: Double(rssi), measuredPower: -59))
        }
    }
}
