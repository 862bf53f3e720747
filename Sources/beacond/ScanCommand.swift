import ArgumentParser
import BeaconConfiguration
import BeaconCore
import BeaconSources
import Foundation

/// `beacond scan`: one line (or JSON object) per decoded iBeacon advertisement.
struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Print every iBeacon advertisement a source delivers.",
        discussion: """
            One line per iBeacon: time, address, UUID, major, minor, measured power, RSSI.
            With --source replay:FILE@max the file is read as fast as possible. A summary \
            (advertisements read, iBeacons decoded, malformed dropped, rate) goes to stderr at the end.
            """
    )

    @Option(help: "auto | hci[:hciN] | bluez[:hciN] | replay:FILE[@SPEED|@max] | simulate[:SCENARIO]", transform: SourceSpec.argument)
    var source: SourceSpec = .auto

    @Option(help: "The configuration file; simulate finds its scenarios beside it.")
    var config = "beacons.yaml"

    @Flag(help: "One JSON object per line.")
    var json = false

    func run() async throws {
        var decoder = AdvertisementDecoder()
        let output = SightingPrinter(json: json)
        let started = ContinuousClock.now
        let outcome: SourceFactory.Outcome
        do {
            let factory = SourceFactory(configurationPath: config, rebaseReplays: false)
            outcome = try await factory.run(source) { event in
                switch event {
                case .hciEvent(let packet, let time):
                    decoder.decode(event: packet, at: time, output.print)
                case .advertisement(let advertisement):
                    if let sighting = decoder.decode(advertisement) { output.print(sighting) }
                case .availability(let available, let reason):
                    FileHandle.standardError.write(Data("scanning \(available ? "resumed" : "stopped"): \(reason)\n".utf8))
                }
            }
        } catch {
            FileHandle.standardError.write(Data("beacond scan: \(error)\n".utf8))
            throw ExitCode(2)
        }
        output.flush()
        let elapsed = ContinuousClock.now - started
        FileHandle.standardError.write(Data(summary(decoder, outcome, elapsed).utf8))
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
            if replay.skippedRecords > 0 { lines.append("skipped \(replay.skippedRecords) unreadable lines of the log") }
            if let stop = replay.stoppedEarly { lines.append("stopped early: \(stop); everything before it was read") }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// Prints sightings, buffered: at @max a replay prints hundreds of thousands.
final class SightingPrinter {
    private let json: Bool
    private var buffer: [UInt8] = []
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    init(json: Bool) {
        self.json = json
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
            buffer.append(contentsOf: "major \(identity.major) minor \(identity.minor) power \(sighting.frame.measuredPower) dBm rssi \(rssi)\n".utf8)
        }
        if buffer.count > 1 << 15 { flush() }
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
        rssi = sighting.rssi
    }
}
