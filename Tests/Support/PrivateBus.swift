import Foundation

/// A private `dbus-daemon` for one test: its own socket in a temporary
/// directory, an allow-all policy (or a given configuration), stopped when
/// the test ends. Clients reach it through `address`.
public final class PrivateBus: @unchecked Sendable {
    public let address: String
    public let directory: URL
    private let process: Process

    /// A default policy that allows everything, then applies `rules` (later rules win).
    public static func allowEverything(then rules: String = "") -> String {
        """
        <policy context="default">
            <allow user="*"/>
            <allow own="*"/>
            <allow send_type="method_call"/>
            <allow send_type="signal"/>
            <allow send_type="method_return"/>
            <allow send_type="error"/>
            <allow receive_type="method_call"/>
            <allow receive_type="signal"/>
            <allow receive_type="method_return"/>
            <allow receive_type="error"/>
            <allow eavesdrop="true"/>
            \(rules)
          </policy>
        """
    }

    /// - Parameter policy: `<policy>` elements; the default allows everything.
    public init(policy: String? = nil, includes: [String] = []) throws {
        directory = try TestSupport.temporaryDirectory()
        let socket = directory.appendingPathComponent("bus").path
        let configuration = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>system</type>
              <listen>unix:path=\(socket)</listen>
              <auth>EXTERNAL</auth>
              \(policy ?? Self.allowEverything())
              \(includes.map { "<include>\($0)</include>" }.joined(separator: "\n  "))
            </busconfig>
            """
        let configurationPath = directory.appendingPathComponent("bus.conf")
        try Data(configuration.utf8).write(to: configurationPath)
        process = Process()
        // Through env --default-signal: a spawned process inherits the test
        // runner's thread's signal mask, which blocks most signals, and a
        // dbus-daemon that never sees SIGCHLD never notices a service it
        // activated exit (the call waits out its timeout). As under systemd,
        // the daemon starts with no signal blocked or ignored.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "--default-signal", TestSupport.tool("dbus-daemon") ?? "/usr/bin/dbus-daemon",
            "--config-file=\(configurationPath.path)", "--nofork", "--print-address=1", "--nopidfile",
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // The daemon prints its address once it listens: a real event to wait for.
        let line = output.fileHandleForReading.availableLine(deadline: .now() + 60)
        guard let line, !line.isEmpty else {
            process.killAndWait()
            throw TestSupport.Failure("dbus-daemon did not start within 60 s")
        }
        address = line
    }

    /// The daemon's process, for tests that stop it or make it vanish.
    public var processIdentifier: Int32 { process.processIdentifier }

    deinit {
        process.killAndWait()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The environment a client needs to use this bus as its system and session bus.
    public var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = address
        environment["DBUS_SESSION_BUS_ADDRESS"] = address
        return environment
    }
}

extension FileHandle {
    /// Reads up to a newline, giving up at `deadline`, on a thread of its own:
    /// a wait of seconds on the test pool's thread (one per core) would hold
    /// back every other test's deadline.
    public func line(deadline: DispatchTime) async -> String? {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: self.availableLine(deadline: deadline)) }.start()
        }
    }

    /// Reads lines until one satisfies `wanted` or `seconds` pass; the lines
    /// read, the match last.
    public func lines(until wanted: (String) -> Bool, seconds: Int) async -> (found: Bool, lines: [String]) {
        var lines: [String] = []
        let deadline = DispatchTime.now() + .seconds(seconds)
        while let line = await line(deadline: deadline) {
            lines.append(line)
            if wanted(line) { return (true, lines) }
        }
        return (false, lines)
    }

    /// Reads up to a newline, giving up at `deadline`, on the calling thread:
    /// for a wait of milliseconds (dbus-daemon printing its address). What is
    /// in the pipe already is read even once the deadline has passed: a test
    /// the pool got to late must not miss lines that came on time.
    public func availableLine(deadline: DispatchTime) -> String? {
        var bytes: [UInt8] = []
        let descriptor = fileDescriptor
        while true {
            var pollDescriptor = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let remaining = Int32(max(0, (Int64(deadline.uptimeNanoseconds) - Int64(DispatchTime.now().uptimeNanoseconds)) / 1_000_000))
            guard poll(&pollDescriptor, 1, remaining) > 0 else { break }
            var byte: UInt8 = 0
            guard Glibc.read(descriptor, &byte, 1) == 1 else { break }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }
}
