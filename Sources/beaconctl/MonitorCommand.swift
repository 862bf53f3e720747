import ArgumentParser
import BeaconClient
import BeacondAPI
import BeacondBus
import Foundation

/// `beaconctl monitor`: region, nearest-venue and availability events as they happen.
struct MonitorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor", abstract: "Print beacond's events as they happen (Ctrl-C to stop).")

    @OptionGroup var options: BusOptions

    func run() async throws {
        let client = try await options.client()
        // Subscribed, and beacond has answered (failing clearly if it is not
        // there): nothing it signals from the line below on is missed.
        let events = try await client.events()
        FileHandle.standardError.write(Data("watching beacond on the \(client.bus) bus (Ctrl-C to stop)\n".utf8))
        let json = options.json
        for try await event in events {
            switch event {
            // The JSON keys are the signals' argument names, as declared.
            case .region(let event):
                let signal = event.kind == .entered ? Beacond.Manager1.regionEntered : Beacond.Manager1.regionExited
                // A client's region may share an id with one of beacons.yaml's: its path tells them apart.
                let whose = event.region.hasPrefix(Beacond.Region1.clientPath + "/") ? " (a client's: \(event.region))" : ""
                Self.say(
                    json, signal, [signal.arguments[0].name: event.id, signal.arguments[1].name: event.region],
                    "\(event.kind == .entered ? "entered" : "exited") \(event.id)\(whose)")
            case .nearestVenue(let update):
                let signal = Beacond.Manager1.nearestVenueChanged
                Self.say(
                    json, signal, [signal.arguments[1].name: update.venue?.dbusValue.jsonObject ?? [:]],
                    "nearest: " + (update.venue.map(NearestCommand.describe) ?? "none"))
            case .availability(let availability):
                let signal = Beacond.Manager1.availabilityChanged
                Self.say(
                    json, signal, [signal.arguments[0].name: availability.available, signal.arguments[1].name: availability.reason],
                    "\(availability.available ? "available" : "unavailable"): \(availability.reason)")
            }
        }
    }

    /// One line per event, human or JSON (`event` is the signal's name).
    static func say(_ json: Bool, _ signal: APISignal, _ fields: [String: Any], _ text: String) {
        if json {
            print(Output.json(fields.merging(["event": signal.name]) { first, _ in first }))
        } else {
            print("\(ISO8601DateFormatter().string(from: Date())) \(text)")
        }
        fflush(nil)
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

    @Option(help: "How long to sample, 1 to 600 seconds.")
    var seconds = 30

    func validate() throws {
        guard (1...600).contains(seconds) else { throw ValidationError("--seconds takes 1 to 600") }
    }

    func run() async throws {
        let client = try await options.client()
        // Asked first, so a wrong id or an absent beacond is said at once, not after the sampling.
        let venues = try await client.venueIDs()
        guard venues.contains(venue) else {
            throw BeacondError.unknownVenue(
                "no venue '\(venue)' in beacons.yaml; the venues are " + (venues.isEmpty ? "none" : venues.listed(atMost: 10)))
        }
        // Per beacon: a venue that leaves the minor open matches several, and
        // each advertisement once (a new LastSeen), however often it is polled.
        var samples: [String: (lastSeen: UInt64, rssi: [Int])] = [:]
        let end = ContinuousClock.now + .seconds(seconds)
        FileHandle.standardError.write(Data("sampling \(venue) for \(seconds) s; keep the listener 1 m from its beacon …\n".utf8))
        while ContinuousClock.now < end {
            for beacon in try await client.rangedBeacons() where beacon.venue == venue {
                let identity = "\(beacon.identity)"
                guard let rssi = beacon.rssi, samples[identity]?.lastSeen != beacon.lastSeen else { continue }
                samples[identity, default: (0, [])].lastSeen = beacon.lastSeen
                samples[identity, default: (0, [])].rssi.append(Int(rssi))
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        // The listener is 1 m from one of them: the loudest of those heard
        // more than a couple of times (not a passer-by heard once, loud; how
        // often each advertises says nothing of where it is).
        let medians = samples.map { (identity: $0.key, count: $0.value.rssi.count, median: $0.value.rssi.sorted()[$0.value.rssi.count / 2]) }
        let heard = medians.filter { $0.count >= 3 }.isEmpty ? medians : medians.filter { $0.count >= 3 }
        guard let sampled = heard.max(by: { ($0.median, $1.identity) < ($1.median, $0.identity) }) else {
            let message = "no advertisement of \(venue)'s beacon was ranged in \(seconds) s; is it in range, and is its beacon in the venue's region?"
            throw Output.noAnswer("NoSamples", message, text: message, json: options.json)
        }
        let which = heard.count > 1 ? " of \(sampled.identity), the loudest of the venue's \(heard.count) beacons heard" : ""
        options.answer(
            json: ["venue": venue, "beacon": sampled.identity, "samples": sampled.count, "measured_power": sampled.median],
            text: "\(sampled.count) samples\(which); add to venue \(venue) in beacons.yaml:\n    measured_power: \(sampled.median)")
    }
}
