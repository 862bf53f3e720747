import BeaconTestSupport
import Foundation
import Testing

/// A real `mosquitto` for one test, on loopback, with its own configuration
/// file and a free port; `restart` keeps the port, `kill` is SIGKILL.
final class MosquittoBroker: @unchecked Sendable {
    let directory: URL
    let port: Int
    let log: URL
    private let configuration: URL
    private var process: Process?

    /// - Parameter listener: lines after `listener PORT 127.0.0.1` (TLS files, auth).
    init(listener: String = "allow_anonymous true") async throws {
        directory = try TestSupport.temporaryDirectory()
        port = try Self.freePort()
        log = directory.appendingPathComponent("mosquitto.log")
        configuration = directory.appendingPathComponent("mosquitto.conf")
        try Data("listener \(port) 127.0.0.1\n\(listener)\n".utf8).write(to: configuration)
        try await start()
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(at: directory)
    }

    func start() async throws {
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestSupport.tool("mosquitto") ?? "/usr/sbin/mosquitto")
        process.arguments = ["-c", configuration.path]
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        self.process = process
        // It says so once it listens.
        let running = await Self.waitFor(log, timeout: 60) { $0.contains(" running") }
        try #require(running, "mosquitto did not start: \(logText)")
    }

    func kill() {
        process?.killAndWait()  // SIGKILL: a paused broker too, without a moment to answer what waits
        process = nil
    }

    /// SIGSTOP: the broker keeps its connections and reads nothing; what
    /// clients send waits in the kernel. `resume` (SIGCONT) goes on.
    func pause() {
        if let process { Glibc.kill(process.processIdentifier, SIGSTOP) }
    }

    func resume() {
        if let process { Glibc.kill(process.processIdentifier, SIGCONT) }
    }

    /// Bytes sent to the broker that it has not read (the receive queues of
    /// its established loopback connections, from /proc/net/tcp): while it is
    /// paused, what its clients sent since.
    var unreadBytes: Int {
        let table = (try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)) ?? ""
        let port = String(format: "%04X", self.port)
        return table.split(separator: "\n").dropFirst().reduce(0) { total, line in
            let fields = line.split(separator: " ")
            // local_address 0100007F:PORT, st 01 (established), tx_queue:rx_queue.
            guard fields.count > 4, fields[1].hasSuffix(":\(port)"), fields[3] == "01",
                let unread = fields[4].split(separator: ":").last.flatMap({ Int($0, radix: 16) })
            else { return total }
            return total + unread
        }
    }

    var logText: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// Waits for a file's text to satisfy `condition`; the file is written by another process.
    static func waitFor(_ file: URL, timeout: Int, _ condition: (String) -> Bool) async -> Bool {
        await eventually(seconds: timeout) { condition((try? String(contentsOf: file, encoding: .utf8)) ?? "") }
    }

    /// A port nothing listens on right now, from the kernel.
    static func freePort() throws -> Int {
        let (descriptor, port) = try boundSocket()
        close(descriptor)
        return port
    }

    /// A loopback socket that listens and never accepts: the kernel completes
    /// the TCP handshake, and nothing ever answers what is sent. Close it when done.
    static func silentListener() throws -> (descriptor: Int32, port: Int) {
        let (descriptor, port) = try boundSocket()
        guard listen(descriptor, 4) == 0 else {
            close(descriptor)
            throw TestSupport.Failure("cannot listen: \(String(cString: strerror(errno)))")
        }
        return (descriptor, port)
    }

    private static func boundSocket() throws -> (descriptor: Int32, port: Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw TestSupport.Failure("no free port: \(String(cString: strerror(errno)))")
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }
}
