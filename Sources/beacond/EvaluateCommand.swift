import ArgumentParser
import BeaconConfiguration
import BeaconCore
import BeaconEvaluation
import BeaconFiles
import BeaconSimulation
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc

/// `beacond evaluate`: beacond against ground truth, beside two naive baselines.
struct EvaluateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evaluate",
        abstract: "Measure ranging and nearest-venue selection against ground truth.",
        discussion: """
            --source simulate[:SCENARIO] runs the whole engine on a simulated walk and reports nearest-venue \
            accuracy, time to the correct venue, spurious switches, band accuracy and region event latency.
            --trace FILE runs the ranger over a recording at known distances (time_ms,uuid,major,minor,rssi,\
            measured_power,true_distance_m) and reports band accuracy, median distance error, band switches, the share \
            of rows whose truth lies within the reported accuracy (coverage; about 68% when honest), the share called \
            stationary, the share ranged by the hand-held listener model, and, with several beacons, how often the \
            nearest venue was the truly nearest one (each beacon is a venue of its own unless --config maps it).
            --sway DB:SECONDS adds a slow sinusoidal sway to the trace's RSSI (a hand-held phone) to show how well a still \
            listener is averaged through it. --per-second turns a recording of packets into what a receiver that reports \
            each beacon once a second with the mean of that second's readings (iOS) would have given.
            Both print beacond beside a raw-RSSI baseline and a 20 s running-average baseline.
            """
    )

    @Option(help: "simulate[:SCENARIO]: a scenario name in scenarios/ beside the configuration, or a path.", transform: SourceSpec.argument)
    var source: SourceSpec?

    @Option(help: "A trace CSV with ground truth.", completion: .file(extensions: ["csv"]))
    var trace: String?

    @Option(help: "With --trace: write beacond's estimate, stationarity and nearest venue after every row to this CSV.", completion: .file(extensions: ["csv"]))
    var estimates: String?

    @Option(
        help: "With --trace: add a sway of ±DB with a period of SECONDS to every row's RSSI (a phone held in a swaying hand; the truth is unchanged), e.g. 3:8.",
        transform: { (argument: String) throws -> Sway in
            guard let sway = Sway(argument: argument) else {
                throw ValidationError("--sway takes DB:SECONDS, an amplitude of 0–40 dB and a period over 0 s, e.g. 3:8")
            }
            return sway
        })
    var sway: Sway?

    @Flag(help: "With --trace: average each beacon's readings of each second into one row first (after --sway), as iOS reports a ranged beacon once a second.")
    var perSecond = false

    @Option(help: "The configuration (venues, regions, ranging figures).", completion: .file(extensions: ["yaml", "yml"]))
    var config = "beacons.yaml"

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    func validate() throws {
        switch (source, trace) {
        case (.simulate?, nil), (nil, _?): break
        case (nil, nil): throw ValidationError("give --source simulate[:SCENARIO] or --trace FILE")
        case (_?, _?): throw ValidationError("give either --source or --trace, not both")
        case (_?, nil): throw ValidationError("evaluate needs ground truth: only --source simulate[:SCENARIO] has it")
        }
        if estimates != nil, trace == nil { throw ValidationError("--estimates goes with --trace") }
        if sway != nil, trace == nil { throw ValidationError("--sway goes with --trace") }
        if perSecond, trace == nil { throw ValidationError("--per-second goes with --trace") }
    }

    func run() throws {
        let configuration: Configuration
        do {
            configuration = try ConfigurationLoader.load(contentsOf: config)
        } catch {
            if trace != nil, !FileManager.default.fileExists(atPath: config) {
                configuration = Configuration()
            } else {
                throw Failure(error.description)
            }
        }
        if let trace {
            try evaluateTrace(trace, configuration: configuration)
        } else if case .simulate(let name)? = source {
            let path = ConfigurationLoader.scenarioPath(name, besideConfiguration: config)
            let scenario: Scenario
            do {
                scenario = try ConfigurationLoader.loadScenario(contentsOf: path)
            } catch {
                throw Failure(error.description)
            }
            let evaluation = SimulationEvaluation(scenario: scenario, configuration: configuration)
            print(json ? EvaluationReport.json(evaluation) : EvaluationReport.table(evaluation))
        }
    }

    /// Some 4 M rows; the largest shared trace is 3 MB.
    static let largestTrace = 256 << 20

    private func evaluateTrace(_ path: String, configuration: Configuration) throws {
        let bytes: [UInt8]
        do {
            bytes = try RegularFile.read(path, limit: Self.largestTrace)
        } catch {
            throw Failure("cannot read \(path): \(error)")
        }
        let parsed: Trace
        do {
            parsed = try Trace(csv: String(decoding: bytes, as: UTF8.self))
        } catch {
            throw Failure("\(path): \(error)")
        }
        // Averaged per second, rows are put in order by the second they fall in.
        for warning in parsed.warnings {
            if perSecond, case .timeGoesBack = warning { continue }
            OutputFile.standardError.write(Array("beacond: warning: \(path): \(warning)\n".utf8))
        }
        let swayed = sway.map { $0.applied(to: parsed) } ?? parsed
        let evaluation = TraceEvaluation(trace: perSecond ? SecondAverage.applied(to: swayed) : swayed, configuration: configuration)
        if let estimates {
            let descriptor = open(estimates, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw Failure("cannot write \(estimates): \(String(cString: strerror(errno)))") }
            defer { close(descriptor) }
            guard OutputFile(descriptor: descriptor).write(Array(EstimatesCSV.render(evaluation.estimates).utf8)) else {
                throw Failure("cannot write \(estimates): \(String(cString: strerror(errno)))")
            }
        }
        print(json ? EvaluationReport.json(evaluation, file: path) : EvaluationReport.table(evaluation, file: path))
    }
}

/// An error that prints its message and exits 1, without a usage dump.
struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ message: String) { description = message }
}
