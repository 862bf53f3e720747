import BeaconTestSupport
import BeacondAPI
import Foundation
import Testing

/// The files in `dist/` as systemd and D-Bus read them.
@Suite struct DeploymentTests {
    /// `Key=value` lines of a unit-style file (later keys win; comments skipped).
    static func keys(_ path: String) throws -> [String: String] {
        var keys: [String: String] = [:]
        for line in try String(contentsOfFile: TestSupport.repository(path), encoding: .utf8).split(separator: "\n") {
            guard !line.hasPrefix("#"), let equals = line.firstIndex(of: "=") else { continue }
            keys[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return keys
    }

    /// The unit with ExecStart and ExecReload pointing at the built programs
    /// (the build machine has no package installed).
    static func withBuiltPrograms(_ unit: String) -> String {
        ["beacond", "beaconctl"].reduce(unit) { $0.replacingOccurrences(of: "/usr/bin/\($1)\n", with: TestSupport.product($1) + "\n")
            .replacingOccurrences(of: "/usr/bin/\($1) ", with: TestSupport.product($1) + " ") }
    }

    /// `systemd-analyze verify` passes with nothing to say, once ExecStart
    /// points at a built beacond (the build machine has no package installed).
    @Test func systemdVerifiesTheUnitWithoutAWord() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let unit = try String(contentsOfFile: TestSupport.repository("dist/systemd/beacond.service"), encoding: .utf8)
        #expect(unit.contains("ExecStart=/usr/bin/beacond "))
        let path = directory.appendingPathComponent("beacond.service").path
        try Data(Self.withBuiltPrograms(unit).utf8).write(to: URL(fileURLWithPath: path))
        let result = try TestSupport.run(TestSupport.tool("systemd-analyze")!, ["verify", path])
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty && result.stderr.isEmpty, "\(result.stdout)\(result.stderr)")
    }

    /// The MQTT drop-in (docs/mqtt.md) is read with the unit and accepted
    /// silently; the same drop-in with a typo is complained about, so it was read.
    @Test func theMqttDropInIsReadAndAccepted() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let unit = try String(contentsOfFile: TestSupport.repository("dist/systemd/beacond.service"), encoding: .utf8)
        try Data(Self.withBuiltPrograms(unit).utf8).write(to: directory.appendingPathComponent("beacond.service"))
        let dropIns = directory.appendingPathComponent("beacond.service.d")
        try FileManager.default.createDirectory(at: dropIns, withIntermediateDirectories: true)
        let dropIn = try String(contentsOfFile: TestSupport.repository("dist/systemd/beacond-mqtt.conf"), encoding: .utf8)
        #expect(try Self.keys("dist/systemd/beacond-mqtt.conf")["RestrictAddressFamilies"] == "AF_UNIX AF_BLUETOOTH AF_INET AF_INET6")
        var environment = ProcessInfo.processInfo.environment
        environment["SYSTEMD_UNIT_PATH"] = directory.path + ":"
        for (text, silent) in [(dropIn, true), (dropIn + "RestrictAddresFamilies=AF_INET\n", false)] {
            try Data(text.utf8).write(to: dropIns.appendingPathComponent("mqtt.conf"))
            let result = try TestSupport.run(TestSupport.tool("systemd-analyze")!, ["verify", "beacond.service"], environment: environment)
            #expect(result.status == 0)
            #expect((result.stdout + result.stderr).isEmpty == silent, "\(result.stdout)\(result.stderr)")
        }
    }

    /// Every key of the unit, as docs/deployment.md lists them: a key added
    /// or changed without the table changing fails here.
    @Test func theUnitGrantsOnlyWhatScanningNeeds() throws {
        let unit = try Self.keys("dist/systemd/beacond.service")
        let expected: [String: String] = [
            "Description": "beacond: iBeacon region monitoring, ranging and nearest venue",
            "After": "dbus.service bluetooth.service", "Wants": "bluetooth.service",
            "Type": "dbus", "BusName": Beacond.busName,
            "ExecStart": "/usr/bin/beacond --config /etc/beacond/beacons.yaml", "ExecReload": "/usr/bin/beaconctl reload",
            "WatchdogSec": "30s", "NotifyAccess": "main",
            "User": "beacond", "Group": "beacond",
            "AmbientCapabilities": "CAP_NET_RAW CAP_NET_ADMIN", "CapabilityBoundingSet": "CAP_NET_RAW CAP_NET_ADMIN",
            "NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
            "PrivateDevices": "no", "ProtectKernelTunables": "yes", "ProtectKernelModules": "yes",
            "ProtectControlGroups": "yes", "RestrictNamespaces": "yes", "LockPersonality": "yes", "RestrictRealtime": "yes",
            "RestrictAddressFamilies": "AF_UNIX AF_BLUETOOTH",
            "StateDirectory": "beacond", "StateDirectoryMode": "0750", "ConfigurationDirectory": "beacond",
            "Restart": "on-failure", "RestartSec": "5s", "RestartPreventExitStatus": "78",
            "WantedBy": "multi-user.target", "Alias": "dbus-org.beacond.service",
        ]
        #expect(unit == expected)
        // A private network namespace has no Bluetooth sockets.
        #expect(unit["PrivateNetwork"] == nil)
    }

    /// Under a unit with WatchdogSec=, beacond's main loop says it is alive
    /// (WATCHDOG=1) at half the interval, and says what it does (STATUS=),
    /// on a real datagram socket where $NOTIFY_SOCKET says, as systemd's is
    /// (here python's). The unit itself is tried under systemd by the package test.
    @Test func beacondTellsSystemdItIsAliveAndWhatItDoes() async throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("notify").path
        let receiver = Process()
        let heard = Pipe()
        receiver.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        receiver.arguments = ["-c", """
            import socket, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            s.bind(sys.argv[1])
            print("ready", flush=True)
            while True:
                print(s.recv(4096).decode().replace("\\n", "|"), flush=True)
            """, socket]
        receiver.standardOutput = heard
        try receiver.run()
        defer { receiver.killAndWait() }
        #expect(await heard.fileHandleForReading.line(deadline: .now() + 10) == "ready")
        let beacond = Process()
        beacond.executableURL = URL(fileURLWithPath: TestSupport.product("beacond"))
        beacond.arguments = ["--config", TestSupport.repository("beacons.yaml"), "--bus", "none", "--source", "simulate", "--state-dir", directory.path]
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = socket
        environment["WATCHDOG_USEC"] = "400000"
        // A runner itself under systemd passes its own; sd_watchdog_enabled would then say "not for you".
        environment["WATCHDOG_PID"] = nil
        beacond.environment = environment
        beacond.standardError = FileHandle.nullDevice
        try beacond.run()
        defer { beacond.killAndWait() }
        var lines: [String] = []
        let deadline = DispatchTime.now() + 20
        while lines.filter({ $0 == "WATCHDOG=1" }).count < 3, let line = await heard.fileHandleForReading.line(deadline: deadline) {
            lines.append(line)
        }
        #expect(lines.filter { $0 == "WATCHDOG=1" }.count >= 3, "\(lines)")
        #expect(lines.first == "STATUS=scanning with simulate", "\(lines)")
    }

    @Test func activationStartsTheUnitAsBeacond() throws {
        let activation = try Self.keys("dist/dbus-1/org.beacond.service")
        #expect(activation["Name"] == Beacond.busName)
        #expect(activation["User"] == "beacond")
        let unit = try Self.keys("dist/systemd/beacond.service")
        #expect(activation["SystemdService"].map { $0 == "beacond.service" || $0 == unit["Alias"] } == true)
    }
}
