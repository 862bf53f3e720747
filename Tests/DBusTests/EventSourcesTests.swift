@testable import DBus
import Testing

/// The loop's re-check before handling a watch or timeout from its round's
/// snapshot: one libdbus removed meanwhile (and so may have freed) is never
/// touched, even if a new one now sits at the same address. Pointers here
/// are never dereferenced: a removed entry fails the check before libdbus
/// is asked anything, which is the point.
@Suite struct EventSourcesTests {
    let first = OpaquePointer(bitPattern: 0x1000)!
    let second = OpaquePointer(bitPattern: 0x2000)!

    @Test func aWatchRemovedAfterTheSnapshotIsNotCurrent() {
        var sources = EventSources()
        sources.addWatch(first)
        sources.addWatch(second)
        // The round's snapshot, as enabledWatches would give it.
        let snapshot = [EventSources.Entry(handle: Handle(pointer: first), serial: 1), EventSources.Entry(handle: Handle(pointer: second), serial: 2)]
        // Handling the first made libdbus remove the second.
        sources.removeWatch(second)
        #expect(!sources.isCurrent(watch: snapshot[1]))
        // A new watch allocated at the freed one's address is not the snapshot's.
        sources.addWatch(second)
        #expect(!sources.isCurrent(watch: snapshot[1]))
    }

    @Test func aTimeoutRemovedAfterTheSnapshotIsNotHandled() {
        var sources = EventSources()
        let now = ContinuousClock.now
        sources.setTimeout(first, removed: true, now: now)
        let stale = EventSources.Entry(handle: Handle(pointer: first), serial: 1)
        let rearmed = sources.rearm(timeout: stale, now: now)
        #expect(!rearmed)
        #expect(sources.expiredTimeouts(at: now + .seconds(3600)).isEmpty)
        #expect(sources.nextDeadline == nil)
    }
}
