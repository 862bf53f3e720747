import ArgumentParser
import DBus
import Foundation

/// `beaconctl nearest [--wait 10s] [--json]`
struct NearestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nearest", abstract: "Which venue is nearest, and how sure that is.")

    @OptionGroup var options: BusOptions

    @Option(help: "Wait up to this long for an answer (500ms, 10s, 2m) instead of failing at once.")
    var wait: String?

    func run() async throws {
        var reply: [DBusValue]
        do {
            if let wait {
                guard let milliseconds = Self.milliseconds(wait) else {
                    throw ValidationError("--wait takes a duration like 500ms, 10s or 2m")
                }
                reply = try await Self.request(options, within: milliseconds)
            } else {
                reply = try await options.manager("GetNearestVenue")
            }
        } catch let advice as Advice where ["org.beacond.Error.NoVenue", "org.beacond.Error.LocationUnknown"].contains(advice.error.name) {
            if options.json {
                print(Output.json(["error": advice.error.name, "message": advice.error.message]))
            } else {
                FileHandle.standardError.write(Data("no venue: \(advice.error.message)\n".utf8))
            }
            throw ExitCode(2)
        }
        guard let venue = reply.first?.stringKeyedEntries else { throw Failure(description: "unexpected reply \(reply)") }
        if options.json {
            print(Output.json(reply[0].jsonObject))
            return
        }
        print(Self.describe(venue))
    }

    static func describe(_ venue: [String: DBusValue]) -> String {
        let id = venue["id"]?.string ?? "?"
        let name = venue["name"]?.string ?? ""
        if venue["source"]?.string == "preference" {
            return "\(id)  \(name)  (your preferred venue: nothing is in range)"
        }
        var text = "\(id)  \(name)  \(venue["proximity"]?.string ?? "?") \(Output.number(venue["distance"]?.double)) m"
        text += " ±\(Output.number(venue["accuracy"]?.double))"
        if let runnerUp = venue["runner_up"]?.string, !runnerUp.isEmpty {
            text += "  (ahead of \(runnerUp) by \(Int(((venue["margin"]?.double ?? 0) * 100).rounded()))%)"
        }
        if venue["stationary"]?.bool == true { text += "  stationary" }
        return text
    }

    /// RequestNearestVenue; while beacond is not (yet) on the bus, keeps trying until the wait is over.
    static func request(_ options: BusOptions, within milliseconds: UInt32) async throws -> [DBusValue] {
        let deadline = ContinuousClock.now + .milliseconds(Int64(milliseconds))
        while true {
            let remaining = max(0, (deadline - ContinuousClock.now).components.seconds * 1000)
            do {
                return try await options.manager(
                    "RequestNearestVenue", [.uint32(UInt32(min(Int64(milliseconds), remaining)))],
                    timeout: .milliseconds(Int64(milliseconds) + 5000))
            } catch let advice as Advice where advice.error.name == "org.freedesktop.DBus.Error.ServiceUnknown" {
                guard ContinuousClock.now + .milliseconds(200) < deadline else { throw advice }
                try await Task.sleep(for: .milliseconds(200))
            }
        }
    }

    /// `500ms`, `10s`, `2m` in milliseconds.
    static func milliseconds(_ text: String) -> UInt32? {
        for (suffix, factor) in [("ms", 1.0), ("s", 1000.0), ("m", 60_000.0)] where text.hasSuffix(suffix) {
            guard let value = Double(text.dropLast(suffix.count)), value >= 0, value * factor <= 300_000 else { return nil }
            return UInt32((value * factor).rounded())
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
        guard (venue != nil) != nearest else { throw ValidationError("give a venue id or --nearest") }
    }

    func run() async throws {
        _ = try await options.manager("SetPreferredVenue", [.string(venue ?? "")])
        if options.json {
            print(Output.json(["preferred_venue": venue ?? ""]))
        } else {
            print(venue.map { "preferred venue: \($0)" } ?? "no preferred venue: nearest only")
        }
    }
}
