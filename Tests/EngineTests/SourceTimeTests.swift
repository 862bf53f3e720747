@testable import BeaconCore
@testable import BeaconService
import Testing

/// The engine's clock from the source's: it moves with the source, and holds
/// still through the few milliseconds each live advertisement waits to be
/// taken in, so a beacon's `LastSeen` taken back through it holds still too.
@Suite struct SourceTimeTests {
    static let t0 = Timestamp(microsecondsSinceEpoch: 1_000_000_000)

    static func at(_ milliseconds: Int64) -> Timestamp { t0 + .milliseconds(milliseconds) }

    /// A live source: advertisements stamped on the service clock, taken in
    /// 1–4 ms later. The anchor keeps the shortest wait; the engine's now is
    /// never before an advertisement it has taken in. (Until 2026-11-27 each
    /// batch moved it by its own wait: a beacon no longer heard saw its
    /// LastSeen move by milliseconds at anyone's next advertisement.)
    @Test func aLiveSourcesWaitsToBeTakenInDoNotMoveIt() {
        var time = SourceTime()
        var offsets: Set<Int64> = []
        for (index, wait) in [3, 1, 4, 2, 1, 3].enumerated() {
            let heard = Self.at(Int64(index) * 100)
            let service = heard + .milliseconds(Int64(wait))
            time.taken(lastHeard: heard, at: service)
            #expect(time.now(service) >= heard)
            offsets.insert((service - time.now(service)).microseconds)
        }
        // The first wait (3 ms), then the shortest (1 ms) from the second on.
        #expect(offsets == [3_000, 1_000])
        // A stall of 80 ms is a move: taken up, then down again with the next prompt one.
        time.taken(lastHeard: Self.at(700), at: Self.at(780))
        #expect(time.now(Self.at(780)) == Self.at(700))
        time.taken(lastHeard: Self.at(800), at: Self.at(801))
        #expect(time.now(Self.at(801)) == Self.at(800))
    }

    /// A replay at @max: ahead of the service clock it is followed at every
    /// batch; falling behind, it is followed within the tolerance.
    @Test func aReplayIsFollowedAheadAndWithinTheToleranceBehind() {
        var ahead = SourceTime()
        for batch in 1...5 {
            let heard = Self.at(Int64(batch) * 1_000)  // a second of recording per 10 ms of service time
            ahead.taken(lastHeard: heard, at: Self.at(Int64(batch) * 10))
            #expect(ahead.now(Self.at(Int64(batch) * 10)) == heard)
        }
        var behind = SourceTime()
        for batch in 1...20 {
            let heard = Self.at(Int64(batch) * 100)  // falling 10 ms further behind at each batch
            let service = Self.at(Int64(batch) * 110)
            behind.taken(lastHeard: heard, at: service)
            let lead = behind.now(service) - heard
            #expect(lead >= .zero && lead <= SourceTime.tolerance, "batch \(batch): \(lead)")
        }
    }
}
