import ArgumentParser
import BeaconClient
import BeacondAPI
import BeacondBus
import Foundation

/// `beaconctl nearest [--wait 10s] [--json]`
struct NearestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nearest", abstract: "Which venue is nearest, and how sure that is.")

    @OptionGroup var options: BusOptions

    @Option(help: "Wait up to this long (500ms, 10s, 2m) for a ranged answer; then answer as without it (the preferred venue, or none).")
    var wait: String?

    /// A bad `--wait` is a usage error (64) before the bus is looked for.
    func validate() throws {
        if let wait, Self.milliseconds(wait) == nil { throw ValidationError("--wait takes a duration like 500ms, 10s or 2m, at most 5m") }
    }

    func run() async throws {
        let venue: Beacond.Venue
        do {
            let client = try await options.client()
            if let wait, let milliseconds = Self.milliseconds(wait) {
                do {
                    venue = try await Self.request(client, within: .milliseconds(milliseconds))
                } catch BeacondError.locationUnknown {
                    // RequestNearestVenue waits for ranging only: the preferred venue is what GetNearestVenue adds.
                    venue = try await client.nearestVenue()
                }
            } else {
                venue = try await client.nearestVenue()
            }
        } catch let error as BeacondError {
            switch error {
            case .noVenue, .locationUnknown:
                throw Output.noAnswer(error.code?.name ?? "", error.message, text: "no venue: \(error.message)", json: options.json)
            default:
                throw error
            }
        }
        options.answer(json: venue.dbusValue.jsonObject, text: Self.describe(venue))
    }

    static func describe(_ venue: Beacond.Venue) -> String {
        if venue.source == .preference {
            return "\(venue.id)  \(venue.name)  (your preferred venue: nothing is in range)"
        }
        var text = "\(venue.id)  \(venue.name)  \(venue.proximity.rawValue) \(Output.number(venue.distance)) m"
        text += " ±\(Output.accuracy(venue.accuracy))"
        if let runnerUp = venue.runnerUp {
            text += venue.margin > 0
                ? "  (ahead of \(runnerUp) by \(Output.whole(venue.margin * 100))%)"
                : "  (held against \(runnerUp), as near or nearer)"
        }
        if venue.isStationary { text += "  stationary" }
        return text
    }

    /// RequestNearestVenue; while beacond is not (yet) on the bus, keeps trying until the wait is over.
    static func request(_ client: BeaconClient, within wait: Duration) async throws -> Beacond.Venue {
        let deadline = ContinuousClock.now + wait
        while true {
            let answer = await Self.answer(client, deadline - ContinuousClock.now)
            if case .failure(.serviceNotRunning) = answer, ContinuousClock.now + .milliseconds(200) < deadline {
                try await Task.sleep(for: .milliseconds(200))
                continue
            }
            return try answer.get()
        }
    }

    private static func answer(_ client: BeaconClient, _ timeout: Duration) async -> Result<Beacond.Venue, BeacondError> {
        do {
            return .success(try await client.requestNearestVenue(timeout: max(.zero, timeout)))
        } catch {
            return .failure(error)
        }
    }

    /// `500ms`, `10s`, `2m` in milliseconds.
    static func milliseconds(_ text: String) -> Int64? {
        for (suffix, factor) in [("ms", 1.0), ("s", 1000.0), ("m", 60_000.0)] where text.hasSuffix(suffix) {
            guard let value = Double(text.dropLast(suffix.count)), value >= 0, value * factor <= 300_000 else { return nil }
            return Int64((value * factor).rounded())
        }
        return nil
    }
}

/// `beaconctl prefer VENUE | --nearest`
struct PreferCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prefer", abstract: "Set the venue to answer when nothing is in range, or go back to nearest only.")

    @OptionGroup var options: BusOptions

    @Argument(help: "A venue id from beacons.yaml.")
    var venue: String?

    @Flag(help: "Clear the preference: answer only from ranging.")
    var nearest = false

    func validate() throws {
        guard (venue != nil) != nearest else {
            throw ValidationError(nearest ? "give a venue id or --nearest, not both" : "give a venue id or --nearest")
        }
        // An empty id would clear the preference, as --nearest does, while saying it set one.
        if venue?.isEmpty == true { throw ValidationError("the venue id is empty: give one from beacons.yaml, or --nearest") }
    }

    func run() async throws {
        try await options.client().setPreferredVenue(venue)
        options.answer(
            json: ["preferred_venue": venue ?? ""], text: venue.map { "preferred venue: \($0)" } ?? "no preferred venue: nearest only")
    }
}
