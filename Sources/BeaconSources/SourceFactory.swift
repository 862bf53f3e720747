import BeaconConfiguration
import BeaconCore
import BeaconSimulation

/// Starts the source a `SourceSpec` names.
public struct SourceFactory: Sendable {
    /// What a source run leaves behind for the summary line.
    public enum Outcome: Sendable {
        case replay(ReplaySource.Summary)
        case live
    }

    /// `simulate[:SCENARIO]` finds its scenario in `scenarios/` beside this file.
    public var configurationPath: String
    /// Replays keep recorded times (`scan`) or start at the run's start (the service).
    public var rebaseReplays: Bool
    /// What paced sources (replays, simulations) sleep on.
    public var pacing: any Clock<Duration>

    public init(configurationPath: String, rebaseReplays: Bool, pacing: any Clock<Duration> = ContinuousClock()) {
        self.configurationPath = configurationPath
        self.rebaseReplays = rebaseReplays
        self.pacing = pacing
    }

    private func loadScenario(_ name: String?) throws(SourceError) -> Scenario {
        let path = ConfigurationLoader.scenarioPath(name, besideConfiguration: configurationPath)
        do {
            return try ConfigurationLoader.loadScenario(contentsOf: path)
        } catch {
            throw .invalidScenario(path: path, problems: "\(error)")
        }
    }

    public func run(_ spec: SourceSpec, _ deliver: (SourceEvent) -> Void) async throws(SourceError) -> Outcome {
        switch spec {
        case .replay(let path, let speed):
            let summary = try await ReplaySource(path: path, speed: speed)
                .run(clock: pacing, startTime: ServiceClock.now(), rebased: rebaseReplays, deliver)
            return .replay(summary)
        case .simulate(let name):
            let scenario = try loadScenario(name)
            await SimulatedSource(scenario: scenario).run(clock: pacing, startTime: ServiceClock.now(), deliver)
            return .live
        case .hci(let adapter):
            try await HCISource(adapter: adapter).run(deliver)
            return .live
        case .bluez(let adapter):
            try await BlueZSource(adapter: adapter).run(deliver)
            return .live
        case .auto:
            try await Self.auto(deliver)
            return .live
        }
    }

    /// `auto`: hci, then bluez; neither failing at its start means it runs.
    private static func auto(_ deliver: (SourceEvent) -> Void) async throws(SourceError) {
        let hciProblem: SourceError
        do {
            try await HCISource(adapter: nil).run(deliver)
            return
        } catch {
            hciProblem = error
        }
        do {
            try await BlueZSource(adapter: nil).run(deliver)
        } catch {
            throw .unavailable(
                "no radio to scan with.\n  hci: \(hciProblem)\n  bluez: \(error)\n"
                    + "To run without a radio: --source simulate (a simulated café) or --source replay:FILE "
                    + "(a btsnoop, pcapng or pcap capture, or an hcidump --raw log).")
        }
    }
}
