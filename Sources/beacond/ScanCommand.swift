import ArgumentParser
import BeaconConfiguration
import BeaconCore
import BeaconSources
import UnixSignals

/// `beacond scan`: one line (or JSON object) per decoded iBeacon advertisement.
struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Print every iBeacon advertisement a source delivers.",
        discussion: """
            One line per iBeacon: time, address, UUID, major, minor, measured power, RSSI.
            With --source replay:FILE@max the file is read as fast as possible. A summary \
            (advertisements read, iBeacons decoded, malformed dropped, extended advertisements \
            that never came whole if any, rate) goes to stderr at the end, \
            also when stopped with SIGINT or SIGTERM. Lines are flushed one by one to a terminal, and to a pipe \
            unless the source is a replay at @max.
            """
    )

    @Option(help: "auto | hci[:hciN] | bluez[:hciN] | replay:FILE[@SPEED|@max] | simulate[:SCENARIO]", completion: .list(["auto", "hci", "bluez", "replay:", "simulate"]), transform: SourceSpec.argument)
    var source: SourceSpec = .auto

    @Option(help: "The configuration file; simulate finds its scenarios beside it.", completion: .file(extensions: ["yaml", "yml"]))
    var config = "beacons.yaml"

    @Flag(help: "One JSON object per line.")
    var json = false

    func run() async throws {
        let started = ContinuousClock.now
        let (source, config, json) = (source, config, json)
        // The scan runs in a task of its own so that SIGINT/SIGTERM can stop it
        // like the end of a replay: every line printed, then the summary.
        let scanning = Task { () -> (AdvertisementDecoder, Result<SourceFactory.Outcome, SourceError>) in
            var decoder = AdvertisementDecoder()
            let live: Bool = if case .replay(_, .max) = source { false } else { true }
            let output = SightingPrinter(json: json, live: live)
            defer { output.flush() }
            do throws(SourceError) {
                let outcome = try await SourceFactory(configurationPath: config, rebaseReplays: false).run(source) { event in
                    switch event {
                    case .hciEvent(let packet, let time):
                        decoder.decode(event: packet, at: time, output.print)
                    case .advertisement(let advertisement):
                        if let sighting = decoder.decode(advertisement) { output.print(sighting) }
                    case .availability(let available, let reason):
                        output.note("scanning \(available ? "resumed" : "stopped"): \(reason)")
                    case .note(let note):
                        output.note(note)
                    case .opened(let source):
                        output.note("scanning with \(source)")
                    }
                }
                return (decoder, .success(outcome))
            } catch {
                return (decoder, .failure(error))
            }
        }
        let signals = Task {
            for await _ in await UnixSignalsSequence(trapping: .sigint, .sigterm) {
                scanning.cancel()
                return
            }
        }
        let (decoder, result) = await scanning.value
        signals.cancel()
        switch result {
        case .success(let outcome):
            OutputFile.standardError.write(Array(summary(decoder, outcome, ContinuousClock.now - started).utf8))
        case .failure(let error):
            OutputFile.standardError.write(Array("beacond scan: \(error)\n".utf8))
            throw ExitCode(2)
        }
    }

    private func summary(_ counters: AdvertisementDecoder, _ outcome: SourceFactory.Outcome, _ elapsed: Duration) -> String {
        let rate = elapsed.seconds > 0 ? Double(counters.advertisements) / elapsed.seconds : 0
        var lines = [
            "\(counters.advertisements) advertisements read from \(counters.events) HCI events, "
                + "\(counters.iBeacons) iBeacons decoded, \(counters.malformed) malformed dropped, "
                + (counters.incompleteAdvertisements > 0
                    ? "\(counters.incompleteAdvertisements) extended advertisements never whole, " : "")
                + "\(Int(rate.rounded())) advertisements/s"
        ]
        if let problem = counters.lastProblem { lines.append("last dropped: \(problem)") }
        if case .replay(let replay) = outcome {
            lines.append("recording: \(replay.format)")
            if let skipped = replay.skipped { lines.append(skipped) }
            if let times = replay.timeNote { lines.append(times + " in pacing; the times printed are as recorded") }
            if let stop = replay.stoppedEarly { lines.append("stopped early: \(stop); everything before it was read") }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
