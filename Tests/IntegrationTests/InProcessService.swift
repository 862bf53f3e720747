import BeaconCore
import BeaconService
import BeaconTestSupport
import Foundation
import InMemoryLogging
import Logging

/// beacond's service run in the test's own process, for what only settings
/// a person cannot give make deterministic (no room for advertisements, a
/// silence of one second): its journal is caught in memory, and it stops
/// when `stop()` is called.
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
        running = Task { try await service.run() }
    }

    /// What the service logged so far, in order.
    var lines: [String] { journal.entries.map(\.message.description) }

    func stop() async {
        running.cancel()
        _ = await running.result
        try? FileManager.default.removeItem(at: state)
    }
}
