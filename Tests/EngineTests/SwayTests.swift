import BeaconCore
import BeaconEvaluation
import Foundation
import Testing

struct SwayTests {
    private static func trace(_ rows: [(time: Int64, rssi: Int8)]) -> Trace {
        let lines = rows.map { "\($0.time),E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,1,1,\($0.rssi),-59,2" }
        return try! Trace(csv: ([Trace.header] + lines).joined(separator: "\n"))
    }

    @Test func theLevelSwingsByTheAmplitudeOverThePeriodAndTheTruthStays() {
        let sway = Sway(amplitude: 3, period: 8)
        // A quarter period in: +3 dB; three quarters: −3 dB; whole and half periods: unchanged.
        let swayed = sway.applied(to: Self.trace([(0, -60), (2_000, -60), (4_000, -60), (6_000, -60), (8_000, -60)]))
        #expect(swayed.rows.map(\.rssi) == [-60, -57, -60, -63, -60])
        #expect(swayed.rows.allSatisfy { $0.trueDistance == 2 && $0.measuredPower == -59 })
    }

    @Test func aSwayNeverMakesANoReadingValue() {
        // −2 + 5 would be +3 and −125 − 5 would be −130: kept at −1 and −127 (0 and 127 mean "no reading").
        let swayed = Sway(amplitude: 5, period: 4).applied(to: Self.trace([(1_000, -2), (3_000, -125)]))
        #expect(swayed.rows.map(\.rssi) == [-1, -127])
    }

    @Test func aRowWithoutAReadingStaysWithoutOne() {
        // A quarter period in, at the sway's peak: 127 and 0 would both become −1 dBm, a reading of a centimetre.
        let swayed = Sway(amplitude: 3, period: 8).applied(to: Self.trace([(2_000, 127), (2_000, 0), (2_000, -60)]))
        #expect(swayed.rows.map(\.rssi) == [127, 0, -57])
    }

    @Test func theArgumentIsDecibelsColonSeconds() {
        #expect(Sway(argument: "3:8") == Sway(amplitude: 3, period: 8))
        #expect(Sway(argument: "0.5:2.5") == Sway(amplitude: 0.5, period: 2.5))
        for bad in ["3", "3:0", "3:-1", "-1:8", "41:8", "nan:8", "3:inf", "a:b", "3:8:1"] {
            #expect(Sway(argument: bad) == nil, "\(bad)")
        }
    }
}

/// A still listener with a phone in a swaying hand (docs/ranging.md, "A hand
/// that sways"), on the shared Pi recording with a sway added.
struct SwayingListenerTests {
    static func evaluation(_ sway: Sway?) throws -> TraceEvaluation {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("Tests/Data/trace-lcn22-office-pi-to-pi4.csv"), encoding: .utf8)
        let trace = try Trace(csv: text)
        return TraceEvaluation(trace: sway.map { $0.applied(to: trace) } ?? trace)
    }

    /// The Pi recording as made (a device set down): the set-down model all
    /// along (0.0 %); with ±4 dB over 15 s, the hand-held one (96.6 %).
    @Test func theHandHeldModelIsReportedForASwayAndNotForADeviceSetDown() throws {
        #expect(try Self.evaluation(nil).beacond.handHeldShare < 0.05)
        #expect(try Self.evaluation(Sway(amplitude: 4, period: 15)).beacond.handHeldShare > 0.8)
    }

    /// ±4 dB over 15 s: the hand-held model averages through it (0.087 m
    /// against the 20 s average's 0.134 m; the set-down model alone made 0.385 m).
    @Test func aSlowWideSwayIsAveragedBetterThanByATwentySecondAverage() throws {
        let evaluation = try Self.evaluation(Sway(amplitude: 4, period: 15))
        let average = try #require(evaluation.baselines[.runningAverage])
        #expect(evaluation.beacond.medianError < average.medianError)
    }

    /// ±3 dB over 8 s: much better than with one model (0.094 m, was 0.249 m), but
    /// 7 mm behind the 20 s average (0.087 m). Marked as a known
    /// issue, so this test fails the day it is fixed and must become a plain check then.
    @Test func aSwayingStillListenerIsAveragedAtLeastAsWellAsByATwentySecondAverage() throws {
        let evaluation = try Self.evaluation(Sway(amplitude: 3, period: 8))
        let average = try #require(evaluation.baselines[.runningAverage])
        withKnownIssue("7 mm behind the 20 s average (docs/ranging.md, \"What does not work yet\")") {
            #expect(evaluation.beacond.medianError <= average.medianError)
        }
    }
}
