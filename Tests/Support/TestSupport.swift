import Foundation

/// Runs the project's executables and system tools from integration tests.
public enum TestSupport {
    /// The folder holding the test bundle, where SwiftPM also puts `beacond` and `beaconctl`.
    public static var productsDirectory: URL {
        URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
            .deletingLastPathComponent()
    }

    public static func product(_ name: String) -> String {
        productsDirectory.appendingPathComponent(name).path
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    /// A file of the repository.
    public static func repository(_ path: String) -> String {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(path).path
    }

    /// A real recording in `Tests/Data/` (sources and licences in its README),
    /// inside the repository so a clone on its own runs every test.
    public static func recording(_ name: String) -> String {
        repository("Tests/Data/\(name)")
    }

    public static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("beacond-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    public struct Output {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// Runs a program to completion, collecting both streams (read concurrently
    /// so a chatty program cannot fill a pipe and stall). Blocks its thread:
    /// for tools that answer in moments.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> Output {
        try start(executable, arguments, environment: environment)()
    }

    /// The same for programs that run for seconds: the wait happens on a
    /// thread of its own, so the test runner's pool (a thread per core) keeps
    /// serving the other tests' deadlines meanwhile.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) async throws -> Output {
        let finish = try start(executable, arguments, environment: environment)
        return await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: finish()) }.start()
        }
    }

    /// Starts a program and returns what waits for its end and collects its output.
    private static func start(
        _ executable: String, _ arguments: [String], environment: [String: String]?
    ) throws -> @Sendable () -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        nonisolated(unsafe) let running = process
        return {
            let group = DispatchGroup()
            nonisolated(unsafe) var stdout = Data()
            nonisolated(unsafe) var stderr = Data()
            DispatchQueue.global().async(group: group) { stdout = out.fileHandleForReading.readDataToEndOfFile() }
            DispatchQueue.global().async(group: group) { stderr = err.fileHandleForReading.readDataToEndOfFile() }
            group.wait()
            running.waitUntilExit()
            return Output(
                status: running.terminationStatus,
                stdout: String(decoding: stdout, as: UTF8.self),
                stderr: String(decoding: stderr, as: UTF8.self))
        }
    }

    /// The first of `candidates` that exists, for tools Debian keeps in /usr/bin or /usr/sbin.
    /// `setpriv` arguments that run what follows as `user`, with that
    /// account's own group and supplementary groups (as systemd's `User=` does).
    public static func asUser(_ user: String) throws -> [String] {
        guard let account = getpwnam(user) else { throw Failure("no account \(user); sudo dist/accounts.sh beacond-tester") }
        return [tool("setpriv") ?? "/usr/bin/setpriv", "--reuid=\(account.pointee.pw_uid)", "--regid=\(account.pointee.pw_gid)", "--init-groups", "--"]
    }

    public static func tool(_ name: String) -> String? {
        ["/usr/bin/\(name)", "/usr/sbin/\(name)", "/bin/\(name)"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

extension Process {
    /// Stops a child of the test runner for good. Its children do not always
    /// act on SIGTERM (dbus-daemon, python), and a test's helper has nothing to save.
    public func killAndWait() {
        kill(processIdentifier, SIGKILL)
        waitUntilExit()
    }
}
