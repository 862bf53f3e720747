import BeaconCore
import CBluetooth

/// Starts the source a `SourceSpec` names.
public enum SourceFactory {
    /// What a source run leaves behind for the summary line.
    public enum Outcome: Sendable {
        case replay(ReplaySource.Summary)
        case live
    }

    public static func run(
        _ spec: SourceSpec, _ deliver: (SourceEvent) async -> Void
    ) async throws(SourceError) -> Outcome {
        switch spec {
        case .replay(let path, let speed):
            let summary = try await ReplaySource(path: path, speed: speed)
                .run(clock: ContinuousClock(), startTime: WallClock.now(), deliver)
            return .replay(summary)
        case .hci(let adapter):
            try HCIScanner.run(adapter: adapter)
            return .live
        case .auto:
            do {
                try HCIScanner.run(adapter: nil)
                return .live
            } catch {
                throw .unavailable(
                    "no radio to scan with: \(error)\n"
                        + "To run without a radio: --source simulate (a simulated café) or --source replay:FILE "
                        + "(a btsnoop capture or hcidump --raw log).")
            }
        case .bluez, .simulate:
            throw .unavailable("the \(spec) source is not available in this build yet")
        }
    }
}

/// The `hci` source: opens the adapter; scanning through it follows.
enum HCIScanner {
    static func run(adapter: String?) throws(SourceError) {
        let descriptor = try HCISocket.open(adapter: adapter)
        hci_close_dev(descriptor)
        throw .unavailable("the hci source can open \(adapter ?? "the adapter") but cannot scan yet in this build")
    }
}
