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
        #expect(try Self.keys("dist/systemd/beacond-mqtt.conf")["RestrictAddressFamilies"] == "AF_INET AF_INET6")
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
            "Restart": "on-failure", "RestartSec": "5s", "RestartPreventExitStatus": "64 78",
            "WantedBy": "multi-user.target", "Alias": "dbus-org.beacond.service",
        ]
        #expect(unit == expected)
        // A private network namespace has no Bluetooth sockets.
        #expect(unit["PrivateNetwork"] == nil)
    }

    /// A datagram socket where `$NOTIFY_SOCKET` says, as systemd's is (here
    /// python's): one line per message; with `silence`, also `silent` once
    /// no WATCHDOG=1 has come for that many seconds (systemd's timeout).
    static func notifyListener(at socket: String, silence: Double? = nil) async throws -> (Process, FileHandle) {
        let receiver = Process()
        let heard = Pipe()
        receiver.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        receiver.arguments = ["-c", """
            import socket, sys, time
            s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            s.bind(sys.argv[1])
            s.settimeout(0.05)
            silence = float(sys.argv[2]) if len(sys.argv) > 2 else None
            print("ready", flush=True)
            last, said = time.monotonic(), False
            while True:
                try:
                    text = s.recv(4096).decode()
                except socket.timeout:
                    if silence is not None and not said and time.monotonic() - last > silence:
                        print("silent", flush=True)
                        said = True
                    continue
                if "WATCHDOG=1" in text.split("\\n"):
                    last, said = time.monotonic(), False
                print(text.replace("\\n", "|"), flush=True)
            """, socket] + (silence.map { [String($0)] } ?? [])
        receiver.standardOutput = heard
        try receiver.run()
        #expect(await heard.fileHandleForReading.line(deadline: .now() + 60) == "ready")
        return (receiver, heard.fileHandleForReading)
    }

    /// beacond on the simulated café, told it runs under a unit with
    /// WatchdogSec= of `watchdog` seconds and a notify socket.
    static func beacond(bus: String, notify socket: String, watchdog: Double, stateDirectory: URL, stderr: Any) throws -> Process {
        let beacond = Process()
        beacond.executableURL = URL(fileURLWithPath: TestSupport.product("beacond"))
        beacond.arguments = [
            "--config", TestSupport.repository("beacons.yaml"), "--bus", bus, "--source", "simulate", "--state-dir", stateDirectory.path,
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = socket
        environment["WATCHDOG_USEC"] = String(Int(watchdog * 1_000_000))
        // A runner itself under systemd passes its own; sd_watchdog_enabled would then say "not for you".
        environment["WATCHDOG_PID"] = nil
        beacond.environment = environment
        beacond.standardError = stderr
        try beacond.run()
        return beacond
    }

    /// Under a unit with WatchdogSec=, beacond's main loop says it is alive
    /// (WATCHDOG=1) at half the interval, and says what it does (STATUS=).
    /// The unit itself is tried under systemd by the package test.
    @Test func beacondTellsSystemdItIsAliveAndWhatItDoes() async throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("notify").path
        let (receiver, heard) = try await Self.notifyListener(at: socket)
        defer { receiver.killAndWait() }
        let beacond = try Self.beacond(bus: "none", notify: socket, watchdog: 0.4, stateDirectory: directory, stderr: FileHandle.nullDevice)
        defer { beacond.killAndWait() }
        var pings = 0
        let (_, lines) = await heard.lines(until: { line in
            if line == "WATCHDOG=1" { pings += 1 }
            return pings == 3
        }, seconds: 20)
        #expect(pings == 3, "\(lines)")
        #expect(lines.first == "STATUS=scanning with simulate", "\(lines)")
    }

    /// Whether the freezer below may ptrace beacond, its sibling: Yama's
    /// ptrace_scope 0 (or no Yama), or 1–2 with CAP_SYS_PTRACE (root, but not
    /// in a default container); 3 forbids it to all.
    static var mayTraceBeacond: Bool {
        guard let text = try? String(contentsOfFile: "/proc/sys/kernel/yama/ptrace_scope", encoding: .utf8),
            let scope = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
        else { return true }
        guard scope != 0 else { return true }
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let effective = status.split(separator: "\n").first { $0.hasPrefix("CapEff:") }.flatMap { UInt64($0.dropFirst(7).trimmingCharacters(in: .whitespaces), radix: 16) }
        return scope < 3 && (effective ?? 0) & (1 << 19) != 0  // CAP_SYS_PTRACE
    }

    /// A D-Bus thread that stops taking work (here frozen alone by ptrace, as
    /// a handler that never returns would leave it) holds back the watchdog's
    /// "alive" until systemd's timeout has passed, and beacond says why; once
    /// it takes work again, the pings resume.
    @Test(.enabled(if: DeploymentTests.mayTraceBeacond, "Yama's ptrace_scope forbids tracing beacond, a sibling, here (no CAP_SYS_PTRACE)"))
    func aWedgedBusThreadStopsTheWatchdogUntilItTakesWorkAgain() async throws {
        let bus = try PrivateBus()
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("notify").path
        let watchdog = 4.0  // WatchdogSec=: pings every 2 s
        let (receiver, heard) = try await Self.notifyListener(at: socket, silence: watchdog)
        defer { receiver.killAndWait() }
        let log = Pipe()
        let beacond = try Self.beacond(bus: bus.address, notify: socket, watchdog: watchdog, stateDirectory: directory, stderr: log)
        defer { beacond.killAndWait() }
        let logged = log.fileHandleForReading
        var pings = 0
        let healthy = await heard.lines(until: { line in
            if line == "WATCHDOG=1" { pings += 1 }
            return pings == 2
        }, seconds: 30)
        try #require(healthy.found, "\(healthy.lines)")

        let freezer = Process()
        let frozen = Pipe(), thaw = Pipe()
        freezer.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        freezer.arguments = ["-c", """
            import ctypes, os, sys
            libc = ctypes.CDLL(None, use_errno=True)
            libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
            libc.ptrace.restype = ctypes.c_long
            pid, name = sys.argv[1], sys.argv[2]
            tids = [t for t in os.listdir(f"/proc/{pid}/task") if open(f"/proc/{pid}/task/{t}/comm").read().strip() == name]
            if len(tids) != 1:
                sys.exit(f"threads named {name}: {tids}")
            tid = int(tids[0])
            for request in (0x4206, 0x4207):  # PTRACE_SEIZE, then PTRACE_INTERRUPT: this thread alone stops
                if libc.ptrace(request, tid, None, None) != 0:
                    sys.exit(f"ptrace {request:#x}: {os.strerror(ctypes.get_errno())}")
            os.waitpid(tid, 0x40000000)  # __WALL
            print("frozen", flush=True)
            sys.stdin.readline()
            libc.ptrace(17, tid, None, None)  # PTRACE_DETACH: it runs on
            print("thawed", flush=True)
            """, String(beacond.processIdentifier), "dbus-private"]
        freezer.standardOutput = frozen
        freezer.standardInput = thaw
        try freezer.run()
        defer { freezer.killAndWait() }
        try #require(await frozen.fileHandleForReading.line(deadline: .now() + 60) == "frozen")

        let stuck = await logged.lines(until: { $0.contains("the D-Bus thread has left its work waiting for") }, seconds: 30)
        #expect(stuck.found, "\(stuck.lines.suffix(5))")
        // systemd would have stopped it: no ping for longer than WatchdogSec
        // (the pings of the first interval of the wedge come before).
        let silent = await heard.lines(until: { $0 == "silent" }, seconds: 30)
        #expect(silent.found, "\(silent.lines)")

        thaw.fileHandleForWriting.write(Data("\n".utf8))
        #expect(await frozen.fileHandleForReading.line(deadline: .now() + 60) == "thawed")
        let unstuck = await logged.lines(until: { $0.contains("the D-Bus thread takes its work again") }, seconds: 30)
        #expect(unstuck.found, "\(unstuck.lines.suffix(5))")
        let resumed = await heard.lines(until: { $0 == "WATCHDOG=1" }, seconds: 30)
        #expect(resumed.found, "\(resumed.lines)")
    }

    @Test func activationStartsTheUnitAsBeacond() throws {
        let activation = try Self.keys("dist/dbus-1/org.beacond.service")
        #expect(activation["Name"] == Beacond.busName)
        #expect(activation["User"] == "beacond")
        let unit = try Self.keys("dist/systemd/beacond.service")
        #expect(activation["SystemdService"].map { $0 == "beacond.service" || $0 == unit["Alias"] } == true)
    }
}
