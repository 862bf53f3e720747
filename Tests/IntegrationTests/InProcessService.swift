import BeaconCore
import BeaconService
import BeaconTestSupport
import Dispatch
import Foundation
import InMemoryLogging
import Logging
import Synchronization

/// beacond's service run in the test's own process, for what only settings
/// a person cannot give make deterministic (no room for advertisements, a
/// silence of one second): its journal is caught in memory, and it stops
/// when `stop()` is called.
///
/// Its tasks run on a thread of their own (`ServiceThread`), as they would in
/// beacond: when the whole suite starts, hundreds of tests share a pool of
/// one thread per core, and a service on that pool was starved for 40 s —
/// its replay's pace and its one second of silence meant nothing then.
final class InProcessService: Sendable {
    let journal = InMemoryLogHandler()
    private let running: Task<Void, any Error>
    private let state: URL

    init(source: SourceSpec, bus: PrivateBus? = nil, _ adjust: (inout BeaconService.Settings) -> Void = { _ in }) throws {
        state = try TestSupport.temporaryDirectory()
        var settings = BeaconService.Settings(
            configurationPath: TestSupport.repository("beacons.yaml"), source: source, stateDirectory: state.path,
            bus: bus.map { .address($0.address) }, version: "test")
        let thread = ServiceThread()
        settings.pacing = thread
        adjust(&settings)
        let service = BeaconService(settings: settings, configuration: Configuration(), logger: Logger(label: "beacond") { [journal] _ in journal })
        running = Task(executorPreference: thread) { try await service.run() }
    }

    /// What the service logged so far, in order.
    var lines: [String] { journal.entries.map(\.message.description) }

    func stop() async {
        running.cancel()
        _ = await running.result
        try? FileManager.default.removeItem(at: state)
    }
}

/// A task executor with a thread of its own (a serial dispatch queue, which
/// libdispatch serves outside Swift's cooperative pool); the service's child
/// tasks (its source, its ticker) inherit it.
///
/// It is also the clock they sleep on: `Task.sleep`'s wake-ups pass through
/// the shared pool, where a starved suite once woke the ticker seconds before
/// a replay due earlier, and the replay's phone was taken for silent. Here
/// every wake-up is a timer on the one queue, in the order it falls due.
final class ServiceThread: TaskExecutor, Clock, @unchecked Sendable {
    private let queue = DispatchQueue(label: "beacond-in-process")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    var now: ContinuousClock.Instant { .now }
    var minimumResolution: Duration { ContinuousClock().minimumResolution }

    func sleep(until deadline: ContinuousClock.Instant, tolerance: Duration?) async throws {
        let waiting = Mutex<CheckedContinuation<Void, any Error>?>(nil)
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                waiting.withLock { $0 = continuation }
                if Task.isCancelled { waiting.withLock { $0.take() }?.resume(throwing: CancellationError()) }
                let delay = ContinuousClock.now.duration(to: deadline)
                let nanoseconds = max(0, delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000)
                queue.asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) {
                    waiting.withLock { $0.take() }?.resume()
                }
            }
        } onCancel: {
            waiting.withLock { $0.take() }?.resume(throwing: CancellationError())
        }
    }
}
