import ArgumentParser
import DBus
import Foundation

/// `beaconctl`: asks beacond over D-Bus. Human output by default, `--json` for scripts.
@main
struct Beaconctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beaconctl",
        abstract: "Ask beacond which venue is nearest, which beacons it ranges, which regions it monitors.",
        subcommands: [
            NearestCommand.self, BeaconsCommand.self, RegionsCommand.self, MonitorCommand.self, PreferCommand.self,
            CalibrateCommand.self, MqttCommand.self,
        ]
    )
}

/// Options every subcommand takes.
struct BusOptions: ParsableArguments {
    @Option(help: "system | session | a bus address (unix:path=…), as beacond's --bus.")
    var bus = "system"

    @Flag(help: "JSON output, for scripts.")
    var json = false

    /// Connects and calls `org.beacond.Manager1.member`, turning bus errors into advice.
    func manager(_ member: String, _ arguments: [DBusValue] = [], timeout: Duration = .seconds(25)) async throws -> [DBusValue] {
        let connection = try connect()
        defer { connection.close() }
        return try await Self.call(connection, member, arguments, timeout: timeout)
    }

    func connect() throws -> DBusConnection {
        do {
            return try DBusConnection.connect(DBusConnection.Bus(argument: bus))
        } catch {
            throw CleanExit.message("beaconctl: cannot connect to the \(bus) bus: \(error.message)")
        }
    }

    static func call(_ connection: DBusConnection, _ member: String, _ arguments: [DBusValue], timeout: Duration = .seconds(25)) async throws -> [DBusValue] {
        do {
            return try await connection.call(
                destination: "org.beacond", path: "/org/beacond", interface: "org.beacond.Manager1", member: member,
                arguments: arguments, timeout: timeout)
        } catch {
            throw Advice(error, bus: connection.bus.description)
        }
    }
}

/// A bus error, said as what to do about it.
struct Advice: Error, CustomStringConvertible {
    let error: DBusError
    let bus: String

    init(_ error: DBusError, bus: String) {
        self.error = error
        self.bus = bus
    }

    var description: String {
        switch error.name {
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
            "beacond is not running on the \(bus) bus. Start it (sudo systemctl start beacond), or pass --bus to reach another bus."
        case "org.freedesktop.DBus.Error.AccessDenied":
            "not allowed to ask beacond: location is private to root and group beacond. "
                + "Add yourself with `sudo usermod -aG beacond $USER` and log in again."
        default:
            error.message
        }
    }
}

struct Failure: Error, CustomStringConvertible {
    var description: String
}

extension DBusValue {
    /// The value as JSON-ready Foundation objects.
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
    static func json(_ object: Any) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    static func number(_ value: Double?, _ decimals: Int = 2) -> String {
        guard let value, value >= 0 else { return "-" }
        return String(format: "%.\(decimals)f", value)
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
