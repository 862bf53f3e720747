import ArgumentParser
import DBus
import Foundation

/// `beaconctl beacons [--watch]`: the ranged beacons, nearest first.
struct BeaconsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacons", abstract: "The beacons beacond ranges, nearest first.")

    @OptionGroup var options: BusOptions

    @Flag(help: "Keep watching: redraw the table in place every second (plain lines when not a terminal).")
    var watch = false

    func run() async throws {
        let connection = try options.connect()
        defer { connection.close() }
        let terminal = isatty(STDOUT_FILENO) != 0
        repeat {
            let reply = try await BusOptions.call(connection, "GetRangedBeacons", [.vardict([])])
            let beacons = reply.first?.arrayElements?.compactMap(\.stringKeyedEntries) ?? []
            if options.json {
                print(Output.json(reply.first?.jsonObject ?? []))
            } else {
                let table = Self.table(beacons)
                if watch, terminal {
                    print("\u{1B}[H\u{1B}[2J" + table, terminator: "\n")
                } else {
                    print(table)
                }
            }
            fflush(nil)
            if watch { try await Task.sleep(for: .seconds(1)) }
        } while watch
    }

    static func table(_ beacons: [[String: DBusValue]]) -> String {
        var rows = [["UUID", "MAJOR", "MINOR", "PROXIMITY", "DISTANCE", "±", "RSSI", "VENUE"]]
        for beacon in beacons {
            rows.append([
                beacon["Uuid"]?.string ?? "", String(beacon["Major"]?.integer ?? 0), String(beacon["Minor"]?.integer ?? 0),
                beacon["Proximity"]?.string ?? "", Output.number(beacon["Distance"]?.double) + " m",
                Output.number(beacon["Accuracy"]?.double), String(Int((beacon["FilteredRssi"]?.double ?? 0).rounded())),
                (beacon["Venue"]?.string ?? "/").split(separator: "/").last.map(DBusNames.unescapePathElement) ?? "",
            ])
        }
        if beacons.isEmpty { return "no beacons in range" }
        return Output.table(rows)
    }
}

/// `beaconctl regions`: monitored regions and their states.
struct RegionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "regions", abstract: "The regions beacond monitors.")

    @OptionGroup var options: BusOptions

    func run() async throws {
        let connection = try options.connect()
        defer { connection.close() }
        let reply: [DBusValue]
        do {
            reply = try await connection.call(
                destination: "org.beacond", path: "/org/beacond", interface: "org.freedesktop.DBus.ObjectManager",
                member: "GetManagedObjects")
        } catch {
            throw Advice(error, bus: options.bus)
        }
        guard case .dictionary(_, _, let objects)? = reply.first else { throw Failure(description: "unexpected reply") }
        let regions = objects.compactMap { $0.value.stringKeyedEntries?["org.beacond.Region1"]?.stringKeyedEntries }
            .sorted { ($0["Id"]?.string ?? "") < ($1["Id"]?.string ?? "") }
        if options.json {
            print(Output.json(regions.map { Dictionary(uniqueKeysWithValues: $0.map { ($0.key, $0.value.jsonObject) }) }))
            return
        }
        var rows = [["ID", "STATE", "UUID", "MAJOR", "MINOR", "OWNER"]]
        for region in regions {
            rows.append([
                region["Id"]?.string ?? "", region["State"]?.string ?? "", region["Uuid"]?.string ?? "",
                region["Major"]?.integer.map(String.init) ?? "any", region["Minor"]?.integer.map(String.init) ?? "any",
                region["Owner"]?.string ?? "",
            ])
        }
        print(Output.table(rows))
    }
}
