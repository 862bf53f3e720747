import ArgumentParser
import Foundation

/// `beaconctl mqtt [--json]`: whether beacond reaches its MQTT broker, and
/// why not. Exits 3 when it is configured but not connected, for scripts.
struct MqttCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mqtt", abstract: "Whether beacond publishes to its MQTT broker, and why not.",
        discussion: "Prints \"off\" without an mqtt: section in beacons.yaml, else connecting, connected or disconnected and why.")

    @OptionGroup var options: BusOptions

    func run() async throws {
        let status = try await options.client().status().mqtt
        let state = status.split(separator: ":").first.map(String.init) ?? status
        options.answer(json: ["state": state, "status": status], text: status)
        if state != "off", state != "connected" { throw ExitCode(3) }
    }
}
