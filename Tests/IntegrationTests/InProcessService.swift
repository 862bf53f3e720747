import BeaconCore
import BeaconService
import BeaconTestSupport
import Dispatch
import Foundation
import InMemoryLogging
import Logging

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
        adjust(&settings)
        let service = BeaconService(settings: settings, configuration: Configuration(), logger: Logger(label: "beacond") { [journal] _ in journal })
        running = Task(executorPreference: ServiceThread()) { try await service.run() }
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
final class ServiceThread: TaskExecutor, @unchecked Sendable {
    private let queue = DispatchQueue(label: "beacond-in-process")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
