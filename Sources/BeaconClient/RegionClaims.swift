import Synchronization

/// Which of one client's `monitor` sequences holds each region id.
///
/// beacond knows a client's regions by the client's bus name alone, so it
/// cannot tell two sequences of one client apart: without this, a sequence
/// cancelled while its StartMonitoring was unanswered stopped the id another
/// sequence monitored, and a sequence begun as soon as another ended (a
/// SwiftUI `.task(id:)` re-run) raced the old one's StopMonitoring and failed
/// with RegionExists about half the time. A sequence claims each id before
/// starting it: refused while a live sequence holds it, made to wait while an
/// ended one is still stopping it. A sequence's end is its cancellation seen
/// by the stream, at once while it waits for an element; one cancelled in the
/// instant between `monitor` and its first `next` is seen at that `next`, and
/// a sequence begun in that instant is refused the id (RegionExists).
final class RegionClaims: Sendable {
    private struct State {
        var holders: [String: (holder: UInt64, stopping: Bool)] = [:]
        /// Sequences waiting for an id to be released, resumed to try again.
        var waiting: [String: [CheckedContinuation<Void, Never>]] = [:]
        /// Sequences that have ended: a claim they still try (their start was
        /// under way) is refused, so it cannot outlive them.
        var ended: Set<UInt64> = []
        var nextHolder: UInt64 = 0
    }

    private let state = Mutex(State())

    /// A new holder, one per sequence.
    func newHolder() -> UInt64 {
        state.withLock {
            $0.nextHolder += 1
            return $0.nextHolder
        }
    }

    /// Claims `id` for `holder`, first waiting for an ended sequence that is
    /// still stopping it; false when a live sequence holds it, or when
    /// `holder` has ended or the caller was cancelled meanwhile.
    func claim(_ id: String, for holder: UInt64) async -> Bool {
        while !Task.isCancelled {
            var claimed: Bool?
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                claimed = state.withLock { state -> Bool? in
                    guard !state.ended.contains(holder) else { return false }
                    guard let current = state.holders[id] else {
                        state.holders[id] = (holder, false)
                        return true
                    }
                    guard current.stopping else { return false }
                    state.waiting[id, default: []].append(continuation)
                    return nil
                }
                if claimed != nil { continuation.resume() }
            }
            if let claimed { return claimed }
        }
        return false
    }

    /// The sequence has ended: its ids stay held, as stopping, until released.
    func stopping(_ holder: UInt64) {
        state.withLock { state in
            state.ended.insert(holder)
            for (id, current) in state.holders where current.holder == holder { state.holders[id]?.stopping = true }
        }
    }

    /// Gives up `holder`'s claim on `id`, once its StopMonitoring is answered,
    /// and wakes whoever waits for it.
    func release(_ id: String, of holder: UInt64) {
        release(of: holder) { $0 == id }
    }

    /// Gives up the rest of `holder`'s claims (those it never started), and forgets it.
    func releaseAll(of holder: UInt64) {
        release(of: holder) { _ in true }
        state.withLock { _ = $0.ended.remove(holder) }
    }

    private func release(of holder: UInt64, where chosen: (String) -> Bool) {
        let woken = state.withLock { state in
            let released = state.holders.filter { $0.value.holder == holder && chosen($0.key) }.keys
            return released.flatMap { id in
                state.holders[id] = nil
                return state.waiting.removeValue(forKey: id) ?? []
            }
        }
        for continuation in woken { continuation.resume() }
    }
}
