import BeaconTestSupport
import DBus
import Dispatch
import Testing

/// The progress a watchdog reads off a connection's thread (`WatchdogPacing`):
/// a thread stuck in work shows work waiting and a count that stands still,
/// and one that is free takes the work and counts it. Against a real dbus-daemon.
@Suite struct EventLoopProgressTests {
    /// Runs `work` on the connection's thread and returns once it has begun.
    static func begin(on connection: DBusConnection, _ work: @escaping @Sendable () -> Void) async throws {
        try await within(seconds: 20) {
            await withCheckedContinuation { (begun: CheckedContinuation<Void, Never>) in
                do {
                    try connection.execute {
                        begun.resume()
                        work()
                    }
                } catch {
                    Issue.record("cannot hand work to the connection: \(error)")
                    begun.resume()
                }
            }
        }
    }

    @Test func aStuckThreadLeavesWorkWaitingAndItsCountStill() async throws {
        let bus = try PrivateBus()
        let connection = try await DBusConnection.connect(.address(bus.address))
        let loop = connection.executor
        let release = DispatchSemaphore(value: 0)
        var released = false
        defer { if !released { release.signal() } }  // never leave the thread blocked for the tests after
        // The connection's thread blocks in this work, as in a handler that never returns.
        try await Self.begin(on: connection) { release.wait() }
        let before = loop.progress
        try connection.execute {}
        let stuck = loop.progress
        #expect(stuck.workWaiting)
        #expect(stuck.batchesTaken == before.batchesTaken)

        release.signal()
        released = true
        try await Self.begin(on: connection) {}
        let free = loop.progress
        #expect(free.batchesTaken > stuck.batchesTaken)
        connection.close()
    }
}
