import ArgumentParser
import DBus
import Foundation

/// `beaconctl monitor`: region, nearest-venue and availability events as they happen.
struct MonitorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor", abstract: "Print beacond's events as they happen (Ctrl-C to stop).")

    @OptionGroup var options: BusOptions

    func run() async throws {
        let connection = try options.connect()
        defer { connection.close() }
        let (events, continuation) = AsyncStream<DBusSignal>.makeStream()
        connection.subscribe(sender: "org.beacond", path: "/org/beacond", interface: "org.beacond.Manager1") {
            continuation.yield($0)
        }
        // Fail now, clearly, if beacond is not there.
        _ = try await connection.call(
            destination: "org.beacond", path: "/org/beacond", interface: "org.freedesktop.DBus.Peer", member: "Ping"
        )
        for await signal in events {
            print(options.json ? Output.json(["event": signal.member, "arguments": signal.arguments.map(\.jsonObject)]) : Self.line(signal))
            fflush(nil)
        }
    }

    static func line(_ signal: DBusSignal) -> String {
        let arguments = signal.arguments
        let time = ISO8601DateFormatter().string(from: Date())
        switch signal.member {
        case "RegionEntered": return "\(time) entered \(arguments.first?.string ?? "")"
        case "RegionExited": return "\(time) exited \(arguments.first?.string ?? "")"
        case "NearestVenueChanged":
            guard let venue = arguments.last?.stringKeyedEntries, !venue.isEmpty else { return "\(time) nearest: none" }
            return "\(time) nearest: " + NearestCommand.describe(venue)
        case "AvailabilityChanged":
            return "\(time) \(arguments.first?.bool == true ? "available" : "unavailable"): \(arguments.last?.string ?? "")"
        default:
            return "\(time) \(signal.member)"
        }
    }
}

/// `beaconctl calibrate VENUE [--seconds N]`: the median RSSI at 1 m, as a `measured_power` line.
struct CalibrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibrate",
        abstract: "Hold the listener 1 m from the venue's beacon; prints the measured_power line for beacons.yaml.")

    @OptionGroup var options: BusOptions

    @Argument(help: "A venue id from beacons.yaml.")
    var venue: String

    @Option(help: "How long to sample.")
    var seconds = 30

    func run() async throws {
        let connection = try options.connect()
        defer { connection.close() }
        var samples: [Int] = []
        var lastSeen: UInt64 = 0
        let end = ContinuousClock.now + .seconds(seconds)
        FileHandle.standardError.write(Data("sampling \(venue) for \(seconds) s; keep the listener 1 m from its beacon …\n".utf8))
        while ContinuousClock.now < end {
            let reply = try await BusOptions.call(connection, "GetRangedBeacons", [.vardict([])])
            for beacon in reply.first?.arrayElements?.compactMap(\.stringKeyedEntries) ?? [] {
                guard beacon["Venue"]?.string?.hasSuffix("/" + DBusNames.escapePathElement(venue)) == true,
                    let seen = beacon["LastSeen"]?.integer.map(UInt64.init), seen != lastSeen,
                    let rssi = beacon["Rssi"]?.integer, rssi != 127
                else { continue }
                lastSeen = seen
                samples.append(Int(rssi))
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        guard !samples.isEmpty else {
            throw Failure(description: "no advertisement of \(venue)'s beacon was ranged in \(seconds) s; is it in range and in a region?")
        }
        let median = samples.sorted()[samples.count / 2]
        if options.json {
            print(Output.json(["venue": venue, "samples": samples.count, "measured_power": median]))
        } else {
            print("\(samples.count) samples; add to venue \(venue) in beacons.yaml:\n    measured_power: \(median)")
        }
    }
}
