@testable import BeaconCore
@testable import BeaconService
import Testing

/// The engine's clock follows the source's exactly; the offset the API's
/// wall times are shown through holds still through the few milliseconds
/// each live advertisement waits to be taken in.
@Suite struct SourceTimeTests {
    static let t0 = Timestamp(microsecondsSinceEpoch: 1_000_000_000)

    static func at(_ milliseconds: Int64) -> Timestamp { t0 + .milliseconds(milliseconds) }

    /// A live source: advertisements stamped on the service clock, taken in
    /// 1–4 ms later. The shown offset keeps the shortest wait (until
    /// 2026-11-27 each batch moved it by its own wait: a beacon no longer
    /// heard saw its LastSeen move at anyone's next advertisement); the
    /// engine's now is each batch's last advertisement.
    @Test func aLiveSourcesWaitsToBeTakenInDoNotMoveTheShownOffset() {
        var time = SourceTime()
        var shown: [Int64] = []
        for (index, wait) in [3, 1, 4, 2, 1, 3].enumerated() {
            let heard = Self.at(Int64(index) * 100)
            let service = heard + .milliseconds(Int64(wait))
            time.taken(lastHeard: heard, at: service)
            #expect(time.now(service) == heard)
            shown.append(time.shown.microseconds)
        }
        #expect(shown == [3_000, 1_000, 1_000, 1_000, 1_000, 1_000])
        // A stall of 80 ms is a move: shown up, and down again with the next prompt one.
        time.taken(lastHeard: Self.at(700), at: Self.at(780))
        #expect(time.shown == .milliseconds(80))
        time.taken(lastHeard: Self.at(800), at: Self.at(801))
        #expect(time.shown == .milliseconds(1))
    }

    /// A replay at @max: its clock followed exactly, ahead or falling behind
    /// (its timeouts never run ahead of the recording); the shown offset
    /// follows ahead at once and behind within the tolerance.
    @Test func aReplayIsFollowedExactlyAndShownWithinTheTolerance() {
        var ahead = SourceTime()
        for batch in 1...5 {
            let heard = Self.at(Int64(batch) * 1_000)  // a second of recording per 10 ms of service time
            ahead.taken(lastHeard: heard, at: Self.at(Int64(batch) * 10))
            #expect(ahead.now(Self.at(Int64(batch) * 10)) == heard)
            #expect(ahead.shown == Self.at(Int64(batch) * 10) - heard)
        }
        var behind = SourceTime()
        for batch in 1...20 {
            let heard = Self.at(Int64(batch) * 100)  // falling 10 ms further behind at each batch
            let service = Self.at(Int64(batch) * 110)
            behind.taken(lastHeard: heard, at: service)
            #expect(behind.now(service) == heard)
            let error = (service - heard) - behind.shown
            #expect(error >= .zero && error <= SourceTime.tolerance, "batch \(batch): \(error)")
        }
    }
}
