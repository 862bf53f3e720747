import ArgumentParser
import BeaconClient
import BeaconCore
import BeacondAPI
import DBus
import Foundation

/// `beaconctl`: asks beacond through BeaconClient. Human output by default, `--json` for scripts.
@main
struct Beaconctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beaconctl",
        abstract: "Ask beacond which venue is nearest, which beacons it ranges, which regions it monitors.",
        discussion: """
            Exit status: 0 answered; 1 beacond or the bus could not be reached, or refused (the message says why); \
            2 no venue is known (nearest), or nothing was sampled (calibrate); 3 MQTT is configured but not connected (mqtt); \
            64 a usage error.
            """,
        version: Beacond.version,
        subcommands: [
            NearestCommand.self, BeaconsCommand.self, RegionsCommand.self, MonitorCommand.self, PreferCommand.self,
            CalibrateCommand.self, MqttCommand.self, ReloadCommand.self,
        ]
    )
}

/// Options every subcommand takes.
struct BusOptions: ParsableArguments {
    @Option(help: "system | session | a bus address (unix:path=…), as beacond's --bus.", completion: .list(["system", "session"]))
    var bus = "system"

    @Flag(help: "JSON output, for scripts.")
    var json = false

    func client() async throws(BeacondError) -> BeaconClient {
        try await BeaconClient.connect(bus: BeaconClient.Bus(argument: bus))
    }

    /// Prints a command's answer: the JSON object with `--json`, else the text.
    func answer(json object: @autoclosure () -> Any, text: @autoclosure () -> String) {
        print(json ? Output.json(object()) : text())
    }
}

extension DBusValue {
    /// The value as JSON-ready Foundation objects: `--json` prints what the bus carries, by the API's own key names.
    var jsonObject: Any {
        switch unwrapped {
        case .byte(let v): Int(v)
        case .boolean(let v): v
        case .int16(let v): Int(v)
        case .uint16(let v): Int(v)
        case .int32(let v): Int(v)
        case .uint32(let v): Int(v)
        case .int64(let v): Int(v)
        case .uint64(let v): UInt64(v)
        case .double(let v): v.isFinite ? v : 0
        case .string(let v), .objectPath(let v), .signature(let v): v
        case .array(_, let items): items.map(\.jsonObject)
        case .structure(let fields): fields.map(\.jsonObject)
        case .dictionary(_, _, let entries):
            Dictionary(entries.map { ($0.key.string ?? "\($0.key)", $0.value.jsonObject) }, uniquingKeysWith: { first, _ in first })
        case .variant(let inner): inner.jsonObject
        }
    }
}

enum Output {
    /// There is no answer to give (no venue, nothing sampled): `{"error", "message"}`
    /// on stdout for scripts, else `text` on stderr; the exit status 2 to throw.
    static func noAnswer(_ error: String, _ message: String, text: String, json: Bool) -> ExitCode {
        if json {
            print(Self.json(["error": error, "message": message]))
        } else {
            FileHandle.standardError.write(Data("\(text)\n".utf8))
        }
        return ExitCode(2)
    }

    static func json(_ object: Any) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// Properties as a JSON object.
    static func json(_ properties: [(String, DBusValue)]) -> [String: Any] {
        Dictionary(properties.map { ($0.0, $0.1.jsonObject) }, uniquingKeysWith: { first, _ in first })
    }

    /// A whole number, or "-" for what is not one: a misbehaving service's
    /// NaN, or 1e300, which no `Int` holds, must not trap.
    static func whole(_ value: Double) -> String {
        Int(exactly: value.rounded()).map(String.init) ?? "-"
    }

    static func number(_ value: Double?, _ decimals: Int = 2) -> String {
        guard let value, value >= 0 else { return "-" }
        return String(format: "%.\(decimals)f", value)
    }

    /// An accuracy, to the centimetre above (`roundedUp(toDecimals:)`): never `0.00`.
    static func accuracy(_ value: Double?) -> String {
        number(value.map { $0.roundedUp(toDecimals: 2) })
    }

    /// Left-aligned columns.
    static func table(_ rows: [[String]]) -> String {
        guard let first = rows.first else { return "" }
        let widths = first.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }
                .joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n")
    }
}
