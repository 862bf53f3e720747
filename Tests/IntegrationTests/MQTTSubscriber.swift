import BeaconTestSupport
import Foundation
import Testing

/// `mosquitto_sub` on every topic, started and waited for (its SUBACK), so
/// nothing published later is missed. Messages are read as they come.
final class MQTTSubscriber: @unchecked Sendable {
    struct Message: Equatable {
        var retained: Bool
        var topic: String
        var payload: String
    }

    private let process = Process()
    private let output = Pipe()
    private(set) var messages: [Message] = []

    init(port: Int, host: String = "127.0.0.1", options: [String] = []) async throws {
        // Line-buffered, so its debug lines (SUBACK) arrive as they are written.
        process.executableURL = URL(fileURLWithPath: TestSupport.tool("stdbuf") ?? "/usr/bin/stdbuf")
        process.arguments = ["-oL", TestSupport.tool("mosquitto_sub") ?? "/usr/bin/mosquitto_sub", "-h", host, "-p", "\(port)", "-t", "#", "-d", "-F", "%r %t %p"] + options
        process.standardOutput = output
        try process.run()
        var lines: [String] = []
        while let line = await output.fileHandleForReading.line(deadline: .now() + 60) {
            lines.append(line)
            if line.contains("SUBACK") { return }
        }
        throw TestSupport.Failure("mosquitto_sub did not subscribe: \(lines)")
    }

    deinit { process.killAndWait() }

    /// Waits up to `timeout` seconds for a message satisfying `condition`, keeping every message read.
    @discardableResult
    func wait(_ what: String, timeout: Int = 30, _ condition: (Message) -> Bool) async throws -> Message {
        if let message = messages.first(where: condition) { return message }
        let deadline = DispatchTime.now() + .seconds(timeout)
        while let line = await output.fileHandleForReading.line(deadline: deadline) {
            // mosquitto_sub's debug lines ("Client … received PUBLISH") are not messages.
            guard line.hasPrefix("0 ") || line.hasPrefix("1 ") else { continue }
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            let message = Message(retained: parts[0] == "1", topic: String(parts[1]), payload: parts.count > 2 ? String(parts[2]) : "")
            messages.append(message)
            if condition(message) { return message }
        }
        throw TestSupport.Failure("no \(what) within \(timeout) s; got \(messages.map { "\($0.topic) \($0.payload.prefix(80))" })")
    }

    /// The newest payload on `topic` seen so far.
    func latest(_ topic: String) -> String? {
        messages.last { $0.topic == topic }?.payload
    }
}
