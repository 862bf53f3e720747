import ArgumentParser
import BeaconConfiguration
import BeaconCore
import BeaconSources
import Foundation
import UnixSignals

/// `beacond scan`: one line (or JSON object) per decoded iBeacon advertisement.
struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Print every iBeacon advertisement a source delivers.",
        discussion: """
            One line per iBeacon: time, address, UUID, major, minor, measured power, RSSI.
            With --source replay:FILE@max the file is read as fast as possible. A summary \
            (advertisements read, iBeacons decoded, malformed dropped, rate) goes to stderr at the end, \
            also when stopped with SIGINT or SIGTERM. Lines are flushed one by one to a terminal or pipe.
            """
    )

    @Option(help: "auto | hci[:hciN] | bluez[:hciN] | replay:FILE[@SPEED|@max] | simulate[:SCENARIO]", transform: SourceSpec.argument)
    var source: SourceSpec = .auto

    @Option(help: "The configuration file; simulate finds its scenarios beside it.")
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
            let output = SightingPrinter(json: json)
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
            FileHandle.standardError.write(Data(summary(decoder, outcome, ContinuousClock.now - started).utf8))
        case .failure(let error):
            FileHandle.standardError.write(Data("beacond scan: \(error)\n".utf8))
            throw ExitCode(2)
        }
    }

    private func summary(_ counters: AdvertisementDecoder, _ outcome: SourceFactory.Outcome, _ elapsed: Duration) -> String {
        let rate = elapsed.seconds > 0 ? Double(counters.advertisements) / elapsed.seconds : 0
        var lines = [
            "\(counters.advertisements) advertisements read from \(counters.events) HCI events, "
                + "\(counters.iBeacons) iBeacons decoded, \(counters.malformed) malformed dropped, "
                + "\(Int(rate.rounded())) advertisements/s"
        ]
        if let problem = counters.lastProblem { lines.append("last malformed: \(problem)") }
        if case .replay(let replay) = outcome {
            lines.append("recording: \(replay.format)")
            if replay.skippedRecords > 0 {
                lines.append(
                    "skipped \(replay.skippedRecords) unreadable packets or lines"
                        + (replay.lastSkipReason.map { " (last: \($0))" } ?? ""))
            }
            if let stop = replay.stoppedEarly { lines.append("stopped early: \(stop); everything before it was read") }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// Prints sightings. To a file, buffered: at @max a replay prints hundreds of
/// thousands. To a terminal or a pipe, line by line: whoever reads it live
/// (a person, `grep`, a test) sees each sighting as it is heard, and nothing
/// is left in a buffer when the scan is stopped.
final class SightingPrinter {
    private let json: Bool
    private let flushesEachLine: Bool
    private var buffer: [UInt8] = []
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    init(json: Bool) {
        self.json = json
        var status = stat()
        flushesEachLine = isatty(STDOUT_FILENO) == 1 || (fstat(STDOUT_FILENO, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO)
        buffer.reserveCapacity(1 << 16)
    }

    deinit { flush() }

    func print(_ sighting: BeaconSighting) {
        if json {
            buffer.append(contentsOf: (try? encoder.encode(SightingRecord(sighting))) ?? Data())
            buffer.append(UInt8(ascii: "\n"))
        } else {
            let rssi = sighting.rssi.map { "\($0) dBm" } ?? "n/a"
            let identity = sighting.identity
            buffer.append(contentsOf: "\(sighting.time) \(sighting.address) \(identity.uuid.uuidString) "
                .utf8)
            let power = "\(sighting.frame.measuredPower) dBm" + (sighting.frame.hasPlausibleMeasuredPower ? "" : " (not a 1 m calibration)")
            buffer.append(contentsOf: "major \(identity.major) minor \(identity.minor) power \(power) rssi \(rssi)\n".utf8)
        }
        if flushesEachLine || buffer.count > 1 << 15 { flush() }
    }

    /// A line for stderr; the sightings before it are written first, so a file of both reads in order.
    func note(_ line: String) {
        flush()
        FileHandle.standardError.write(Data("\(line)\n".utf8))
    }

    func flush() {
        guard !buffer.isEmpty else { return }
        FileHandle.standardOutput.write(Data(buffer))
        buffer.removeAll(keepingCapacity: true)
    }
}

/// The JSON shape of one sighting, shared by `scan --json` and its tests.
struct SightingRecord: Encodable {
    var time: String
    var time_us: Int64
    var address: String
    var address_type: String
    var uuid: String
    var major: UInt16
    var minor: UInt16
    var measured_power: Int8
    /// False for a measured power outside −100…−20 dBm, which ranging replaces.
    var measured_power_plausible: Bool
    var rssi: Int8?

    init(_ sighting: BeaconSighting) {
        time = sighting.time.description
        time_us = sighting.time.microsecondsSinceEpoch
        address = sighting.address.description
        address_type = AdvertisingReport.addressTypeName(sighting.addressType)
        uuid = sighting.identity.uuid.uuidString
        major = sighting.identity.major
        minor = sighting.identity.minor
        measured_power = sighting.frame.measuredPower
        measured_power_plausible = sighting.frame.hasPlausibleMeasuredPower
        rssi = sighting.rssi
    }
}
