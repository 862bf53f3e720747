import BeaconCore
import Testing

@testable import BeaconSources

/// Where a replay puts events whose recorded times cannot be right, on plain
/// sequences of times (milliseconds; `nil`: an event without a time).
@Suite struct ReplayTimelineTests {
    static let base = Timestamp.milliseconds(1_700_000_000_000)
    static let start = Timestamp.milliseconds(1_800_000_000_000)

    /// Each event placed, as milliseconds after the first as the replay
    /// counts it then (untimed events first count from the start, the times
    /// after them from where they left off); and the timeline's counts.
    static func placed(_ times: [Timestamp?]) -> (placed: [Int64], asRecorded: [Int64], timeline: ReplayTimeline) {
        var timeline = ReplayTimeline()
        var placed: [Int64] = []
        var asRecorded: [Int64] = []
        for (index, time) in times.enumerated() {
            let next = index + 1 < times.count ? times[index + 1] : nil
            let (at, recorded) = timeline.place(time, next: next, start: start)
            placed.append((at - timeline.origin!).microseconds / 1_000)
            asRecorded.append((recorded - base).microseconds / 1_000)
        }
        return (placed, asRecorded, timeline)
    }

    static func times(_ milliseconds: [Int64]) -> [Timestamp?] { milliseconds.map { base + .milliseconds($0) } }

    @Test func timesAsRecordedStayAsRecorded() {
        // Two interfaces whose clocks disagree by 10 s, interleaved: as recorded (a minute's tolerance back).
        let recorded: [Int64] = [0, 10_100, 200, 10_300, 400, 10_500]
        let result = Self.placed(Self.times(recorded))
        #expect(result.placed == recorded)
        #expect(result.timeline.damaged == 0 && result.timeline.steps == 0 && result.timeline.note == nil)
        // An overnight gap is a gap.
        #expect(Self.placed(Self.times([0, 100, 43_200_000, 43_200_100])).placed == [0, 100, 43_200_000, 43_200_100])
    }

    /// One time 3 hours ahead (a flipped bit) between events in line: that
    /// event alone goes after the one before; nothing after it moves.
    @Test func aLoneBadTimeIsPlacedAndMovesNothingElse() {
        let result = Self.placed(Self.times([0, 100, 200, 10_800_300, 400, 500]) + [Self.base + .milliseconds(600)])
        #expect(result.placed == [0, 100, 200, 300, 400, 500, 600])
        #expect(result.timeline.damaged == 1 && result.timeline.steps == 0)
    }

    /// A time outside 1970–2200 is damaged wherever it is, the first event included:
    /// placed as an untimed event, the others as recorded.
    @Test func anImpossibleTimeIsPlacedAsUntimedEvenFirst() {
        let damaged = Timestamp(microsecondsSinceEpoch: .max)
        let first = Self.placed([damaged] + Self.times([100, 200, 300]))
        #expect(first.placed == [0, 100, 200, 300])
        #expect(first.timeline.damaged == 1)
        let middle = Self.placed(Self.times([0, 100]) + [damaged, Timestamp(microsecondsSinceEpoch: .min)] + Self.times([400, 500]))
        #expect(middle.placed == [0, 100, 200, 300, 400, 500])
        #expect(middle.timeline.damaged == 2 && middle.timeline.steps == 0)
    }

    /// The clock set: two days forward (NTP after a downtime) or an hour back
    /// (a daylight-saving change), and the events after it agree: closed up,
    /// every later time moved with it, said once with the largest.
    @Test func aClockSetIsClosedUp() {
        let forward = Self.placed(Self.times([0, 100, 172_800_200, 172_800_300, 172_800_400]))
        #expect(forward.placed == [0, 100, 200, 300, 400])
        #expect(forward.timeline.steps == 1 && forward.timeline.damaged == 0)
        #expect(forward.timeline.note?.contains("closed up 1 step(s) of the capture's clock (the largest 2.0 days)") == true, "\(forward.timeline.note ?? "")")
        // As recorded for scan: the step stays.
        #expect(forward.asRecorded == [0, 100, 172_800_200, 172_800_300, 172_800_400])
        let back = Self.placed(Self.times([3_600_000, 3_600_100, 200, 300]))
        #expect(back.placed == [0, 100, 200, 300])
        #expect(back.timeline.steps == 1)
    }

    /// Untimed events between timed ones: steps are measured between timed
    /// events, so twenty untimed events in 0.1 s are no step back; scan prints
    /// an untimed event on the recording's clock after the one before.
    @Test func untimedEventsBetweenTimedOnesAreNoStep() {
        let result = Self.placed(Self.times([0]) + Array(repeating: nil, count: 20) + Self.times([100]))
        #expect(result.timeline.steps == 0 && result.timeline.damaged == 0)
        #expect(result.asRecorded[1] == 100 && result.asRecorded[20] == 2_000)
        // Untimed first, then timed: the recording's times go on from where the untimed left off.
        #expect(Self.placed([nil, nil] + Self.times([5_000, 5_100])).placed == [0, 100, 200, 300])
    }
}
