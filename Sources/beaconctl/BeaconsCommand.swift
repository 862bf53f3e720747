import ArgumentParser
import BeaconClient
import BeacondAPI
import BeacondBus
import Foundation

/// `beaconctl beacons [--watch]`: the ranged beacons, nearest first.
struct BeaconsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacons", abstract: "The beacons beacond ranges, nearest first.")

    @OptionGroup var options: BusOptions

    @Flag(help: "Keep watching: redraw the table in place every second (plain lines when not a terminal).")
    var watch = false

    func run() async throws {
        let client = try await options.client()
        let terminal = isatty(STDOUT_FILENO) != 0
        repeat {
            let beacons = try await client.rangedBeacons()
            if options.json {
                print(Output.json(beacons.map { Output.json($0.properties) }))
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

    static func table(_ beacons: [Beacond.Beacon]) -> String {
        if beacons.isEmpty { return "no beacons in range" }
        var rows = [["UUID", "MAJOR", "MINOR", "PROXIMITY", "DISTANCE", "±", "RSSI", "AT 1 M", "VENUE"]]
        for beacon in beacons {
            // FilteredRssi 0 is "no reading yet": 0 and 127 never enter the filter.
            // The power ranging uses, and what the beacon sent when that can be no calibration.
            let power = String(beacon.measuredPower) + (beacon.isAdvertisedPowerPlausible ? "" : " (sent \(beacon.advertisedPower))")
            rows.append([
                beacon.identity.uuid.uuidString, String(beacon.identity.major), String(beacon.identity.minor), beacon.proximity.rawValue,
                Output.number(beacon.distance) + " m", Output.accuracy(beacon.accuracy), beacon.filteredRSSI == 0 ? "-" : Output.whole(beacon.filteredRSSI),
                power, beacon.venue ?? "",
            ])
        }
        return Output.table(rows)
    }
}

/// `beaconctl regions`: monitored regions and their states.
struct RegionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "regions", abstract: "The regions beacond monitors.")

    @OptionGroup var options: BusOptions

    func run() async throws {
        let regions = try await options.client().regions()
        options.answer(json: regions.map { Output.json($0.properties) }, text: Self.table(regions))
    }

    static func table(_ regions: [Beacond.Region]) -> String {
        var rows = [["ID", "STATE", "UUID", "MAJOR", "MINOR", "OWNER"]]
        for region in regions {
            rows.append([
                region.id, region.state.rawValue, region.constraint.uuid.uuidString, region.constraint.major.map(String.init) ?? "any",
                region.constraint.minor.map(String.init) ?? "any", region.owner ?? Beacond.Region1.configurationOwner,
            ])
        }
        return Output.table(rows)
    }
}
