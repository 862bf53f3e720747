import ArgumentParser
import BeaconConfiguration
import BeaconCore
import BeaconMQTT

/// `beacond check-config FILE`: validate `beacons.yaml` and say what it means.
struct CheckConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate a beacons.yaml and print what beacond understood from it.",
        discussion: "Exits 1 and prints one line per problem (file:line: field: what was expected) when it is invalid."
    )

    @Argument(help: "The configuration file.", completion: .file(extensions: ["yaml", "yml"]))
    var file: String = "beacons.yaml"

    func run() throws {
        do {
            let configuration = try ConfigurationLoader.load(contentsOf: file)
            print(ConfigurationSummary(configuration, file: file).text)
        } catch {
            OutputFile.standardError.write(Array("\(error)\n\(file): invalid, \(error.problems.count + error.unlisted) problem(s)\n".utf8))
            throw ExitCode.failure
        }
    }
}

/// A person's reading of a configuration: what will be monitored and named.
struct ConfigurationSummary {
    let text: String

    init(_ configuration: Configuration, file: String) {
        let r = configuration.ranging
        var lines = ["\(file): valid"]
        lines.append("source: \(configuration.source?.description ?? "auto (not set)")")
        lines.append(
            "ranging: path loss exponent \(r.pathLossExponent); immediate < \(r.immediateDistance) m, "
                + "near < \(r.nearDistance) m (a band changes when another is \(r.proximityHysteresis) more probable); "
                + "enter on 2 sightings within \(r.enterWindow.configurationText); unknown after \(r.staleAfter.configurationText) unheard; "
                + "exit after \(r.exitAfter.configurationText); "
                + "switch when \(Int((r.switchMargin * 100).rounded()))% closer for \(r.switchDwell.configurationText)"
                + (r.maxDistance.map { "; max distance \($0) m" } ?? "")
                + Self.rssiGate(enter: r.enterRSSI, exit: r.exitRSSI)
                + "; \(r.defaultMeasuredPower) dBm at 1 m for beacons that advertise no real calibration")
        lines.append("regions (\(configuration.regions.count)):")
        for region in configuration.regions {
            let notify = [region.notifyOnEntry ? "entry" : nil, region.notifyOnExit ? "exit" : nil].compactMap { $0 }
            lines.append(
                "  \(region.id): \(Self.describe(region.constraint)); notify on "
                    + (notify.isEmpty ? "nothing" : notify.joined(separator: " and "))
                    + (region.exitAfter.map { "; exit after \($0.configurationText)" } ?? "")
                    + Self.rssiGate(enter: region.enterRSSI, exit: region.exitRSSI))
        }
        lines.append("venues (\(configuration.venues.count)):")
        for venue in configuration.venues {
            let regions = configuration.regions.filter { $0.constraint.overlaps(venue.constraint) }.map(\.id)
            var line = "  \(venue.id): \"\(venue.name)\" = \(Self.describe(venue.constraint)), in \(regions.joined(separator: ", "))"
            if let power = venue.measuredPower { line += "; measured power \(power) dBm" }
            if let distance = venue.maxDistance { line += "; within \(distance) m" }
            lines.append(line)
        }
        if let mqtt = configuration.mqtt {
            var line = "mqtt: \(mqtt.broker) as node \(MQTTPublisher.nodeID(mqtt))\(mqtt.nodeID == nil ? " (from the host name)" : ""), "
                + "topics \(mqtt.baseTopic)/…"
            line += mqtt.discoveryPrefix.isEmpty
                ? "; no Home Assistant discovery"
                : "; discovery under \(mqtt.discoveryPrefix)/, Home Assistant's birth message on \(mqtt.statusTopic)"
            if let user = mqtt.username { line += "; user \(user)" }
            if mqtt.publishBeacons { line += "; per-beacon distances published" }
            lines.append(line)
        } else {
            lines.append("mqtt: off")
        }
        text = lines.joined(separator: "\n")
    }

    /// "; enter at -85.0 dBm or stronger, exit when filtered below -92.0 dBm", or nothing when neither is set.
    private static func rssiGate(enter: Double?, exit: Double?) -> String {
        let parts = [enter.map { "enter at \($0) dBm or stronger" }, exit.map { "exit when filtered below \($0) dBm" }].compactMap { $0 }
        return parts.isEmpty ? "" : "; " + parts.joined(separator: ", ")
    }

    private static func describe(_ constraint: BeaconConstraint) -> String {
        "\(constraint.uuid.uuidString) major \(constraint.major.map(String.init) ?? "any") "
            + "minor \(constraint.minor.map(String.init) ?? "any")"
    }
}
