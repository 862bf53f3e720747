import BeaconTestSupport
import BeacondAPI
import Foundation
import Testing

/// The shipped D-Bus policy (`dist/dbus-1/org.beacond.conf`) on a bus that
/// denies by default as the system bus does: beacond runs as user beacond,
/// a member of group beacond gets answers, anyone else may only introspect,
/// and nobody can take the name from it.
@Suite(
    .serialized,
    .enabled(
        if: getuid() == 0 && getpwnam("beacond") != nil && getpwnam("beacond-tester") != nil,
        "needs root and the accounts beacond and beacond-tester: run scripts/test.sh as root, or sudo dist/accounts.sh beacond-tester"))
struct PolicyTests {
    /// The default policy of Debian's /usr/share/dbus-1/system.conf: method
    /// calls and name ownership need a hole punched by a service's policy file.
    static let systemBusDefaults = """
        <policy context="default">
            <allow user="*"/>
            <deny own="*"/>
            <deny send_type="method_call"/>
            <allow send_type="signal"/>
            <allow send_requested_reply="true" send_type="method_return"/>
            <allow send_requested_reply="true" send_type="error"/>
            <allow receive_type="method_call"/>
            <allow receive_type="method_return"/>
            <allow receive_type="error"/>
            <allow receive_type="signal"/>
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
          </policy>
        """

    static func service(on bus: PrivateBus? = nil) async throws -> ServiceBusTests.Service {
        try await ServiceBusTests.Service(bus: bus ?? Self.bus(), user: "beacond")
    }

    static func bus() throws -> PrivateBus {
        let bus = try PrivateBus(policy: systemBusDefaults, includes: [TestSupport.repository("dist/dbus-1/org.beacond.conf")])
        // Other accounts must reach the socket and the repository's files.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: bus.directory.path)
        return bus
    }

    /// busctl against the service's bus as `user` (nil: root, as the test runs).
    static func busctl(_ service: ServiceBusTests.Service, as user: String?, _ arguments: [String]) throws -> TestSupport.Output {
        let busctl = [TestSupport.tool("busctl")!, "--address=\(service.bus.address)"] + arguments
        return try run(busctl, as: user)
    }

    /// Runs a command (its path first) as `user`, or as root, as the test runs, for nil.
    static func run(_ command: [String], as user: String?) throws -> TestSupport.Output {
        let line = try (user.map(TestSupport.asUser) ?? []) + command
        return try TestSupport.run(line[0], Array(line.dropFirst()))
    }

    static let getVersion = ["get-property", Beacond.busName, Beacond.root, Beacond.Manager1.name, "Version"]
    static let rangedBeacons = ["call", Beacond.busName, Beacond.root, Beacond.Manager1.name, "GetRangedBeacons", "a{sv}", "0"]

    @Test func membersOfGroupBeacondAndRootGetAnswersOthersAreDenied() async throws {
        let service = try await Self.service()
        // The bus says who owns the name: user beacond.
        let owner = try service.busctl(
            ["call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixUser", "s", Beacond.busName])
        #expect(owner.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "u \(getpwnam("beacond")!.pointee.pw_uid)")
        for user in ["beacond-tester", nil] {
            let version = try Self.busctl(service, as: user, Self.getVersion)
            #expect(version.status == 0, "\(user ?? "root"): \(version.stderr)")
            #expect(version.stdout.hasPrefix("s \""))
            let beacons = try Self.busctl(service, as: user, Self.rangedBeacons)
            #expect(beacons.status == 0, "\(user ?? "root"): \(beacons.stderr)")
            #expect(beacons.stdout.hasPrefix("aa{sv}"))
        }
        for arguments in [Self.getVersion, Self.rangedBeacons] {
            let denied = try Self.busctl(service, as: "nobody", arguments)
            #expect(denied.status != 0)
            #expect(denied.stderr.contains("Access denied"), "\(denied.stderr)")
        }
        // Introspection stays open to everyone, so tools can discover the API.
        let introspection = try Self.busctl(
            service, as: "nobody", ["call", Beacond.busName, Beacond.root, "org.freedesktop.DBus.Introspectable", "Introspect"])
        #expect(introspection.status == 0, "\(introspection.stderr)")
        #expect(introspection.stdout.contains("\(Beacond.Manager1.name)"))
        // Its child nodes are the same four whatever is exported now: no client monitors a
        // region here, yet "client" is listed, as "beacon" is before any beacon is ranged.
        let xml = introspection.stdout.replacingOccurrences(of: "\\\"", with: "\"")
        for path in Beacond.objectPaths {
            #expect(xml.contains("<node name=\"\(path.split(separator: "/").last!)\"/>"), "\(path): \(xml)")
        }
        // But not the trees below it, whose object names say which beacons and venues are near.
        for path in ["/org/beacond/beacon", "/org/beacond/venue", "/org/beacond/region/caffe_2dmacs"] {
            let below = try Self.busctl(service, as: "nobody", ["call", Beacond.busName, path, "org.freedesktop.DBus.Introspectable", "Introspect"])
            #expect(below.status != 0 && below.stderr.contains("Access denied"), "\(path): \(below.stdout)")
            let member = try Self.busctl(service, as: "beacond-tester", ["call", Beacond.busName, path, "org.freedesktop.DBus.Introspectable", "Introspect"])
            #expect(member.status == 0, "\(path): \(member.stderr)")
        }
    }

    /// What a non-member may send cannot make beacond hold more: an
    /// Introspect call (the policy lets anyone introspect /org/beacond) and a
    /// signal sent to beacond's own name, each carrying an 8 MB byte array.
    /// Decoded whole, each byte was a value of its own: 30 MB took beacond
    /// to 1 GB and 17 s of silence (the audit of 2026-11-26). Now a call's
    /// arguments are decoded only up to 16,384 values, and a signal's only
    /// if it is one beacond listens for.
    @Test func aNonMembersHugeMessagesCostBeacondNothing() async throws {
        let service = try await Self.service()
        let script = """
            import dbus, dbus.lowlevel, sys
            bus = dbus.bus.BusConnection("\(service.bus.address)")
            huge = dbus.ByteArray(b"x" * 8000000)
            call = dbus.lowlevel.MethodCallMessage("\(Beacond.busName)", "\(Beacond.root)", "org.freedesktop.DBus.Introspectable", "Introspect")
            call.append(huge, signature="ay")
            try:
                bus.send_message_with_reply_and_block(call, 60)
                print("answered")
            except dbus.exceptions.DBusException as error:
                print(error.get_dbus_name(), error.get_dbus_message())
            for _ in range(3):
                signal = dbus.lowlevel.SignalMessage("/", "org.freedesktop.DBus", "NameOwnerChanged")
                signal.set_destination(bus.get_name_owner("\(Beacond.busName)"))
                signal.append(huge, signature="ay")
                bus.send_message(signal)
            bus.flush()
            """
        let result = try await TestSupport.run("/usr/bin/env", try TestSupport.asUser("nobody") + ["/usr/bin/python3", "-c", script])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("org.freedesktop.DBus.Error.InvalidArgs the arguments hold more than 16384 values"), "\(result.stdout)")
        // beacond still answers a member at once, and holds what it held (a debug build ~30 MB; the arrays decoded would be 1 GB).
        let version = try Self.busctl(service, as: "beacond-tester", Self.getVersion)
        #expect(version.status == 0, "\(version.stderr)")
        let resident = ServiceTrustTests.residentMegabytes(of: service)
        #expect(resident < 120, "\(resident) MB resident")
    }

    /// A match rule on beacond's signals (as `gdbus monitor --dest` adds)
    /// brings a member every signal and a non-member none.
    @Test func onlyMembersReceiveTheSignals() async throws {
        let bus = try Self.bus()
        let directory = try TestSupport.temporaryDirectory()
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.path)
        var monitors: [(user: String, log: URL, process: Process)] = []
        defer { for monitor in monitors { monitor.process.killAndWait() } }
        for user in ["beacond-tester", "nobody"] {
            let log = directory.appendingPathComponent("\(user).txt")
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            let command = try TestSupport.asUser(user) + [
                TestSupport.tool("stdbuf")!, "-oL", TestSupport.tool("gdbus")!, "monitor", "--address", bus.address, "--dest", Beacond.busName,
            ]
            let process = Process()
            process.executableURL = URL(fileURLWithPath: command[0])
            process.arguments = Array(command.dropFirst())
            process.standardOutput = try FileHandle(forWritingTo: log)
            try process.run()
            monitors.append((user, log, process))
        }
        func text(_ log: URL) -> String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
        // Both are watching before the service exists (gdbus says so once it has its match rule).
        _ = await eventually(seconds: 60) { monitors.allSatisfy { text($0.log).contains("does not have an owner") } }
        let service = try await Self.service(on: bus)
        let member = monitors[0].log
        // Every kind the outsider must not receive was sent: the member saw each.
        let kinds = ["RegionEntered", "NearestVenueChanged", "InterfacesAdded", "PropertiesChanged"]
        _ = await eventually(seconds: 60) { kinds.allSatisfy { text(member).contains($0) } }
        for kind in kinds { #expect(text(member).contains(kind), "the member did not receive \(kind):\n\(service.logText)") }
        #expect(text(member).contains("\(Beacond.Manager1.name).\(Beacond.Manager1.nearestVenueChanged.name)"))
        #expect(text(member).contains("org.freedesktop.DBus.ObjectManager.InterfacesAdded"))
        let outsider = text(monitors[1].log)
        for kind in kinds {
            #expect(!outsider.contains(kind), "nobody received \(kind):\n\(outsider)")
        }
    }

    /// A non-member listening to every signal on the bus (a match rule
    /// without a sender, which the policy's `receive_sender` cannot keep from
    /// anyone while nobody owns `org.beacond`) hears nothing of beacond's
    /// while it starts: its objects are exported before it takes the name, and
    /// their InterfacesAdded carried each region's saved state to anyone (the
    /// audit of 2026-11-28). The bus routes beacond's messages in order, so
    /// whatever it broadcast before the name is heard before the
    /// NameOwnerChanged that ends the listener.
    @Test func aNonMemberHearsNothingWhileBeacondStarts() async throws {
        let bus = try Self.bus()
        let state = try TestSupport.temporaryDirectory()
        try Data(#"{"regions":{"caffe-macs":"inside"}}"#.utf8).write(to: state.appendingPathComponent("state.json"))
        let directory = try TestSupport.temporaryDirectory()
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.path)
        let log = directory.appendingPathComponent("heard.txt")
        let script = """
            import dbus, dbus.lowlevel, sys
            from gi.repository import GLib
            from dbus.mainloop.glib import DBusGMainLoop
            DBusGMainLoop(set_as_default=True)
            bus = dbus.bus.BusConnection(sys.argv[1])
            out = open(sys.argv[2], "w", buffering=1)
            bus.add_match_string("type='signal'")
            loop = GLib.MainLoop()
            def heard(connection, message):
                if isinstance(message, dbus.lowlevel.SignalMessage):
                    arguments = message.get_args_list()
                    if message.get_member() == "NameOwnerChanged" and arguments[:1] == ["\(Beacond.busName)"] and arguments[2]:
                        out.write("named\\n")
                        loop.quit()
                    else:
                        out.write(f"{message.get_sender()} {message.get_interface()}.{message.get_member()} {message.get_path()}\\n")
            bus.add_message_filter(heard)
            out.write("listening\\n")
            loop.run()
            """
        let listener = Process()
        let command = try TestSupport.asUser("nobody") + ["/usr/bin/python3", "-c", script, bus.address, log.path]
        listener.executableURL = URL(fileURLWithPath: command[0])
        listener.arguments = Array(command.dropFirst())
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: log.path)
        try listener.run()
        defer { listener.killAndWait() }
        func heard() -> String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
        try #require(await eventually(seconds: 30) { heard().contains("listening") }, "\(heard())")
        let service = try await ServiceBusTests.Service(bus: bus, state: state, user: "beacond")
        #expect(await eventually(seconds: 30) { heard().contains("named") }, "\(heard())\n\(service.logText)")
        #expect(service.logText.contains("restored state"), "\(service.logText)")
        let beacondsSignals = heard().split(separator: "\n").filter { $0.contains("org.freedesktop.DBus.ObjectManager") || $0.contains("org.beacond") }
        #expect(beacondsSignals.isEmpty, "nobody heard beacond's signals before it owned its name: \(beacondsSignals)")
    }

    @Test func nobodyCanTakeTheNameFromBeacond() async throws {
        let service = try await Self.service()
        // Another account, even root, may not own org.beacond.
        let script = """
            import dbus, sys
            bus = dbus.bus.BusConnection(sys.argv[1])
            try:
                bus.request_name("\(Beacond.busName)", dbus.bus.NAME_FLAG_REPLACE_EXISTING | dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
                print("owned")
            except dbus.exceptions.DBusException as error:
                print(error.get_dbus_name())
            """
        for user in ["nobody", "beacond-tester", "root"] {
            let result = try Self.run(["/usr/bin/python3", "-c", script, service.bus.address], as: user)
            #expect(result.stdout == "org.freedesktop.DBus.Error.AccessDenied\n", "\(user): \(result.stdout) \(result.stderr)")
        }
        // A second beacond, as beacond, is told the name is taken and leaves the first alone.
        let second = try Self.run(
            [TestSupport.product("beacond"), "--bus", service.bus.address, "--source", "simulate",
             "--state-dir", service.state.path, "--config", service.configuration],
            as: "beacond")
        #expect(second.status != 0)
        #expect(second.stderr.contains(Beacond.busName), "\(second.stderr)")
        let stillAnswering = try Self.busctl(service, as: "beacond-tester", Self.getVersion)
        #expect(stillAnswering.status == 0)
    }
}
