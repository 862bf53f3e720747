import BeaconCore
import BeaconTestSupport
import BeacondAPI
import DBus
import Foundation
import Testing

/// What was seen when beacond was tried as an attacker would (issue 10):
/// reload shapes that crashed it, limits raced past, state that could not be
/// saved, captures with absurd times, and a flood of identities from anyone
/// in radio range. Each test fails on the service as it was.
@Suite(.serialized) struct ServiceTrustTests {
    typealias Service = ServiceBusTests.Service

    /// beacons.yaml and the café scenario in a directory of their own, so a test may rewrite them.
    static func ownConfiguration() throws -> URL {
        let directory = try TestSupport.temporaryDirectory()
        let configuration = directory.appendingPathComponent("beacons.yaml")
        try FileManager.default.copyItem(atPath: TestSupport.repository("beacons.yaml"), toPath: configuration.path)
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("scenarios"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: TestSupport.repository("scenarios/cafe.yaml"), toPath: directory.appendingPathComponent("scenarios/cafe.yaml").path)
        return configuration
    }

    /// A client that sends calls and never reads their replies fills its
    /// queue in dbus-daemon, which then stops reading beacond too (beacond's
    /// replies it holds count against beacond's `max_incoming_bytes`); beacond
    /// took calls on and its unsent replies and signals grew without bound
    /// (an audit of 2026-11-28). Now it stops taking calls past
    /// `DBusConnection.mostUnsent`, says so, and answers again once the
    /// client goes. The bus's limits are 1 MB here (127 MB by default), so
    /// a few thousand Introspect calls do it; the client is a raw socket, as
    /// any library would read the replies for it.
    @Test func aClientThatNeverReadsIsSaidAndOutlastedWithBoundedMemory() async throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let limits = directory.appendingPathComponent("limits.conf")
        try Data(
            """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <limit name="max_incoming_bytes">1000000</limit>
              <limit name="max_outgoing_bytes">1000000</limit>
              <limit name="max_replies_per_connection">100000</limit>
            </busconfig>
            """.utf8
        ).write(to: limits)
        let service = try await Service(bus: try PrivateBus(includes: [limits.path]))
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        reader.arguments = [
            "-c",
            """
            import os, socket, struct, sys, time
            def string(text):
                data = text.encode()
                return struct.pack("<I", len(data)) + data + b"\\0"
            def call(serial, destination, path, interface, member):
                fields = b""
                for code, kind, text in ((1, "o", path), (2, "s", interface), (3, "s", member), (6, "s", destination)):
                    fields += b"\\0" * (-len(fields) % 8)
                    fields += bytes([code, 1]) + kind.encode() + b"\\0" + string(text)
                header = b"l" + bytes([1, 0, 1]) + struct.pack("<III", 0, serial, len(fields)) + fields
                return header + b"\\0" * (-len(header) % 8)
            connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            connection.connect(sys.argv[1].split("=", 1)[1].split(",")[0])
            connection.sendall(b"\\0AUTH EXTERNAL " + str(os.getuid()).encode().hex().encode() + b"\\r\\n")
            answer = b""
            while not answer.endswith(b"\\r\\n"):
                answer += connection.recv(1)
            assert answer.startswith(b"OK"), answer
            connection.sendall(b"BEGIN\\r\\n")
            connection.sendall(call(1, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "Hello"))
            # The bus may stop reading this client too once its calls wait for
            # beacond: then enough is sent.
            connection.settimeout(5)
            try:
                for serial in range(2, 8002):
                    connection.sendall(call(serial, sys.argv[2], sys.argv[3], "org.freedesktop.DBus.Introspectable", "Introspect"))
                    if serial % 100 == 0:
                        time.sleep(0.01)
            except TimeoutError:
                pass
            print("sent", flush=True)
            time.sleep(600)
            """,
            service.bus.address, Beacond.busName, Beacond.root,
        ]
        let output = Pipe()
        reader.standardOutput = output
        try reader.run()
        defer { reader.killAndWait() }
        try #require(await output.fileHandleForReading.line(deadline: .now() + 60) == "sent")
        try #require(
            await eventually(seconds: 30) { service.logText.contains("bus takes none of beacond's messages") }, "\(service.logText)")
        // The client gone, dbus-daemon drops what it held for it and reads beacond again.
        reader.killAndWait()
        #expect(await eventually(seconds: 30) { service.logText.contains("bus takes beacond's messages again") }, "\(service.logText)")
        // Bounded: taking no calls meanwhile, beacond's unsent bytes stayed near the bound
        // (with calls dispatched on, they grew by every reply: over 20 MB here).
        let peak = service.logText.split(separator: "\n").first { $0.contains("bus takes beacond's messages again") }
            .flatMap { $0.split(separator: "at most ").last?.split(separator: " ").first }.flatMap { Int($0) }
        #expect(peak.map { $0 < DBusConnection.mostUnsent + (1 << 20) } == true, "\(service.logText)")
        // The calls the client left in beacond's queue at the bus are worked
        // through first (their replies dropped): until then the bus refuses more.
        var reload = try service.call("Reload")
        _ = await eventually(seconds: 30) {
            reload = (try? service.call("Reload")) ?? reload
            return reload.status == 0
        }
        #expect(reload.status == 0, "\(reload.stderr) \(service.logText)")
    }

    /// Every Region1 object with its properties, as GetManagedObjects gives them: "path key=value ...".
    static let regionObjects = """
        objects = dbus.Interface(bus.get_object("\(Beacond.busName)", "\(Beacond.root)"), "org.freedesktop.DBus.ObjectManager").GetManagedObjects()
        for path in sorted(objects):
            region = objects[path].get("\(Beacond.Region1.name)")
            if region is not None:
                print(path, " ".join("%s=%s" % (key, region[key]) for key in sorted(region)))
        """

    @Test func everyReloadReexportsRegionsWithTheRightProperties() async throws {
        let configuration = try Self.ownConfiguration()
        let service = try await Service(configuration: configuration.path)
        let original = try String(contentsOf: configuration, encoding: .utf8)
        // espresso-bar loses its major; kaffeehaus gains one.
        let reshaped = original
            .replacingOccurrences(of: "    major: 2\n", with: "")
            .replacingOccurrences(of: "    notify_on_exit: false\n", with: "    notify_on_exit: false\n    major: 10\n")
        try #require(reshaped != original)
        try Data(reshaped.utf8).write(to: configuration)
        #expect(try service.call("Reload").status == 0)
        let after = try await service.python(Self.regionObjects)
        #expect(after.status == 0, "\(after.stderr)\n\(service.logText)")
        let lines = after.stdout.split(separator: "\n").map(String.init)
        let espresso = try #require(lines.first { $0.hasPrefix("/org/beacond/region/espresso_2dbar ") })
        #expect(!espresso.contains("Major="), "\(espresso)")
        let kaffeehaus = try #require(lines.first { $0.hasPrefix("/org/beacond/region/kaffeehaus ") })
        #expect(kaffeehaus.contains("Major=10"), "\(kaffeehaus)")
        // And back: the objects follow again, and the service still answers.
        try Data(original.utf8).write(to: configuration)
        #expect(try service.call("Reload").status == 0)
        let back = try await service.python(Self.regionObjects)
        #expect(back.stdout.contains("espresso_2dbar Id=espresso-bar Major=2"), "\(back.stdout)")
        #expect(!back.stdout.split(separator: "\n").contains { $0.hasPrefix("/org/beacond/region/kaffeehaus ") && $0.contains("Major=") })
    }

    /// A Reload or StopMonitoring is answered once what it changed is
    /// published: the caller's next read sees it (they answered before it,
    /// and a read right after Reload saw the old regions 4 times in 14).
    @Test func whatReloadAndStopMonitoringChangedIsReadableWhenTheyAnswer() async throws {
        let configuration = try Self.ownConfiguration()
        let service = try await Service(configuration: configuration.path)
        let original = try String(contentsOf: configuration, encoding: .utf8)
        let extra = original.replacingOccurrences(
            of: "regions:\n", with: "regions:\n  - id: extra-region\n    uuid: 0C9F6B29-1D7E-4D3A-9A5B-2F1E8C7D6B5A\n")
        try #require(extra != original)
        let result = try await service.python(
            """
            def regions():
                objects = dbus.Interface(bus.get_object("\(Beacond.busName)", "\(Beacond.root)"), "org.freedesktop.DBus.ObjectManager").GetManagedObjects()
                return set(str(path) for path, interfaces in objects.items() if "\(Beacond.Region1.name)" in interfaces)
            texts = [\(Self.pythonString(extra)), \(Self.pythonString(original))]
            stale = 0
            for i in range(12):
                with open(\(Self.pythonString(configuration.path)), "w") as file:
                    file.write(texts[i % 2])
                manager.Reload()
                if ("/org/beacond/region/extra_2dregion" in regions()) != (i % 2 == 0):
                    stale += 1
            for i in range(12):
                manager.StartMonitoring("mine-%d" % i, {"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"}, {})
                manager.StopMonitoring("mine-%d" % i)
                if any(path.endswith("/mine_2d%d" % i) for path in regions()):
                    stale += 1
            print(stale)
            """)
        #expect(result.status == 0, "\(result.stderr)\n\(service.logText)")
        #expect(result.stdout == "0\n", "reads that did not see what the call changed: \(result.stdout)")
    }

    /// A Swift string as a Python literal (JSON's escapes are Python's, but for `\/`).
    static func pythonString(_ text: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        return String(decoding: try! encoder.encode(text), as: UTF8.self)
    }

    @Test func pipelinedCallsCannotPassTheRegionBounds() async throws {
        let service = try await Service()
        let result = try await service.python(
            """
            import dbus.lowlevel
            # 100 StartMonitoring calls sent without waiting for any answer.
            for i in range(100):
                call = dbus.lowlevel.MethodCallMessage("\(Beacond.busName)", "\(Beacond.root)", "\(Beacond.Manager1.name)", "StartMonitoring")
                call.append("pipelined-%d" % i, {"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"}, dbus.Dictionary({}, signature="sv"), signature="sa{sv}a{sv}")
                bus.send_message(call)
            try:
                manager.StartMonitoring("last", {"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"}, {})
            except dbus.exceptions.DBusException as error:
                print(error.get_dbus_name())
            import time
            def mine():
                objects = dbus.Interface(bus.get_object("\(Beacond.busName)", "\(Beacond.root)"), "org.freedesktop.DBus.ObjectManager").GetManagedObjects()
                return sum(1 for path, interfaces in objects.items() if interfaces.get("\(Beacond.Region1.name)", {}).get("Owner") == bus.get_unique_name())
            # A call refused past a bound is answered at once, ahead of those still waiting for the client's user.
            # One that is taken (UnknownRegion, not Busy) is taken after every call before it: then all are done.
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                try:
                    manager.StopMonitoring("none")
                except dbus.exceptions.DBusException as error:
                    if error.get_dbus_name() == "\(BeacondError.Code.unknownRegion.name)":
                        break
                time.sleep(0.05)
            print(mine())
            """)
        #expect(result.status == 0, "\(result.stderr)")
        // The last call is refused either by the region bound or, while 16 of
        // the client's calls still wait for the engine, by the queue's (Busy).
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2 && [BeacondError.Code.tooManyRegions.name, BeacondError.Code.busy.name].contains(lines[0]), "\(result.stdout)")
        #expect(lines.last == "16", "\(result.stdout)")
        #expect(try service.call("GetRangedBeacons", ["a{sv}", "0"]).status == 0)
    }

    /// A new client's calls wait together for the bus to say which user it
    /// runs as, and reach the engine in the order they were sent: a stop
    /// pipelined behind a start stops that region (it used to overtake it,
    /// and the region stayed). Nothing is held that could fill beacond's
    /// queue meanwhile: a 30 MB venue id is refused at once, so the bus's
    /// answer about the user is still read (three such ids once held 90 MB
    /// and the answer went unread for libdbus's 25 s).
    @Test func aNewClientsCallsKeepTheirOrderAndHoldNothingLarge() async throws {
        let service = try await Service()
        let result = try await service.python(
            """
            import dbus.lowlevel
            def pipelined(connection, member, *arguments, signature=""):
                call = dbus.lowlevel.MethodCallMessage("\(Beacond.busName)", "\(Beacond.root)", "\(Beacond.Manager1.name)", member)
                if arguments:
                    call.append(*arguments, signature=signature)
                connection.send_message(call)
            fresh = dbus.bus.BusConnection("\(service.bus.address)")
            for n in range(5):
                pipelined(fresh, "StartMonitoring", "door-%d" % n, {"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"}, dbus.Dictionary({}, signature="sv"), signature="sa{sv}a{sv}")
                pipelined(fresh, "StopMonitoring", "door-%d" % n, signature="s")
            for _ in range(3):
                pipelined(fresh, "SetPreferredVenue", "x" * 30000000, signature="s")
            other = dbus.Interface(fresh.get_object("\(Beacond.busName)", "\(Beacond.root)"), "\(Beacond.Manager1.name)")
            path = other.StartMonitoring("last", {"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"}, {}, timeout=15)
            objects = dbus.Interface(bus.get_object("\(Beacond.busName)", "\(Beacond.root)"), "org.freedesktop.DBus.ObjectManager").GetManagedObjects()
            print(sorted(str(p).rsplit("/", 1)[-1] for p, interfaces in objects.items()
                         if interfaces.get("\(Beacond.Region1.name)", {}).get("Owner") == fresh.get_unique_name()))
            """)
        #expect(result.status == 0, "\(result.stderr)\n\(service.logText.suffix(2_000))")
        #expect(result.stdout == "['last']\n", "\(result.stdout)")
    }

    /// One member may open many connections: the bound on regions holds for
    /// all clients of one Unix user together (64), then for all (256), a
    /// user's places come back when its clients leave, and its starts are
    /// paced (64 in a row, then one a second). The python client
    /// connects as other users by taking their uid as its effective uid while
    /// it connects, which is what the bus authenticates.
    @Test func regionBoundsHoldPerUserAndInAll() async throws {
        let limits = ServiceLimits()
        let service = try await Service()
        // Other users must reach the bus's socket.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: service.bus.directory.path)
        let result = try await service.python(
            """
            import os, time
            def connect(uid):
                os.seteuid(uid)
                try:
                    return dbus.bus.BusConnection("\(service.bus.address)")
                finally:
                    os.seteuid(0)
            def fill(uid, clients, counts):
                connections = [connect(uid) for _ in range(clients)]
                for n, connection in enumerate(connections):
                    other = dbus.Interface(connection.get_object("\(Beacond.busName)", "\(Beacond.root)"), "\(Beacond.Manager1.name)")
                    for i in range(\(limits.regionsPerClient)):
                        try:
                            other.StartMonitoring("r%d" % i, {"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": dbus.UInt16(n)}, {})
                            outcome = "added"
                        except dbus.exceptions.DBusException as error:
                            outcome = error.get_dbus_name() + ": " + error.get_dbus_message()
                        counts[outcome] = counts.get(outcome, 0) + 1
                return connections
            def regions():
                objects = dbus.Interface(bus.get_object("\(Beacond.busName)", "\(Beacond.root)"), "org.freedesktop.DBus.ObjectManager").GetManagedObjects()
                return sum(1 for path, interfaces in objects.items() if path.startswith("\(Beacond.Region1.clientPath)/") and "\(Beacond.Region1.name)" in interfaces)
            report, held = {}, {}
            began = time.monotonic()
            # root, daemon and bin open five clients of sixteen each; sys four.
            for uid, clients in ((0, 5), (1, 5), (2, 5), (3, 4)):
                held[uid] = fill(uid, clients, report.setdefault(str(uid), {}))
            # All 256 are taken: nobody's first client is refused.
            fill(65534, 1, report.setdefault("nobody, all taken", {}))
            report["client regions"] = {"count": regions()}
            # root's clients leave; their regions go, and nobody gets places.
            for connection in held.pop(0):
                connection.close()
            deadline = time.monotonic() + 20
            while regions() > 192 and time.monotonic() < deadline:
                time.sleep(0.05)
            fill(65534, 1, report.setdefault("nobody, after root left", {}))
            # root started 64 in a row a moment ago: its new client may start about one a second.
            fill(0, 1, report.setdefault("root again", {}))
            report["elapsed"] = {"seconds": int(time.monotonic() - began) + 1}
            print(json.dumps(report))
            """)
        #expect(result.status == 0, "\(result.stderr)\n\(service.logText)")
        let report = try JSONDecoder().decode([String: [String: Int]].self, from: Data(result.stdout.utf8))
        let name = BeacondError.Code.tooManyRegions.name
        let perUser = "\(name): the clients of user %@ monitor \(limits.regionsPerUser) regions already, the most one user may; stop one first"
        for user in ["0", "1", "2"] {
            #expect(report[user] == ["added": 64, String(format: perUser, user): 16], "\(report)")
        }
        #expect(report["3"] == ["added": 64], "\(report)")
        #expect(report["client regions"] == ["count": limits.clientRegions], "\(report)")
        let all = "\(name): clients monitor \(limits.clientRegions) regions already, the most beacond takes; try again later"
        #expect(report["nobody, all taken"] == [all: 16], "\(report)")
        #expect(report["nobody, after root left"] == ["added": 16], "\(report)")
        // Starts are paced per user: since root's burst, one a second has come back, however long this took.
        let paced = "\(BeacondError.Code.busy.name): the clients of user 0 started \(limits.regionsPerUser) regions in a row; the next may start in "
        let again = report["root again"] ?? [:]
        let elapsed = report["elapsed"]?["seconds"] ?? .max
        #expect(again.keys.allSatisfy { $0 == "added" || $0.hasPrefix(paced) } && again["added", default: 0] <= elapsed, "\(report)")
        #expect(again.values.reduce(0, +) == 16, "\(report)")
    }

    /// A member alternating the preferred venue as fast as the answers come
    /// made one fsync of state.json per answer (an SD card's wear): changes
    /// are paced per user, sixteen in a row, then one a second, and setting
    /// the venue it already is writes nothing and is never refused.
    @Test func alternatingThePreferredVenueIsPaced() async throws {
        let limits = ServiceLimits()
        let service = try await Service()
        let result = try await service.python(
            """
            import time
            outcomes, preferred, began = [], None, time.monotonic()
            for n in range(40):
                venue = ("counter-1", "counter-2")[n % 2]
                try:
                    manager.SetPreferredVenue(venue)
                    outcomes.append("ok" if venue != preferred else "same")
                    preferred = venue
                except dbus.exceptions.DBusException as error:
                    outcomes.append(error.get_dbus_name() + ": " + error.get_dbus_message())
            elapsed = int(time.monotonic() - began) + 1
            again = [manager.SetPreferredVenue(preferred) for _ in range(20)]
            print(json.dumps({"outcomes": outcomes, "again": len(again), "elapsed": elapsed}))
            """)
        #expect(result.status == 0, "\(result.stderr)\n\(service.logText)")
        struct Report: Decodable { var outcomes: [String]; var again: Int; var elapsed: Int }
        let report = try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
        let paced = "\(BeacondError.Code.busy.name): the clients of user 0 made \(limits.changesPerUser) changes (SetPreferredVenue, Reload) in a row"
        #expect(report.outcomes.prefix(limits.changesPerUser).allSatisfy { $0 == "ok" }, "\(report.outcomes)")
        // After the sixteen, one a second has come back, however long the forty took (about a second unloaded).
        // (A refused call leaves the venue as it was, so the next one, for that venue, is no change, and never refused.)
        let refused = report.outcomes.filter { $0.hasPrefix(paced) }
        let changed = report.outcomes.filter { $0 == "ok" }.count
        let same = report.outcomes.filter { $0 == "same" }.count
        #expect(changed <= limits.changesPerUser + report.elapsed, "\(report)")
        #expect(refused.count + changed + same == 40, "\(report)")
        #expect(report.again == 20)
    }

    /// A SetPreferredVenue refused for a venue that does not exist changes
    /// nothing, so it takes nothing of its user's pace: twenty of them, then
    /// sixteen real changes in a row are all taken, however fast they come.
    @Test func refusedChangesDoNotSpendThePace() async throws {
        let limits = ServiceLimits()
        let service = try await Service()
        let result = try await service.python(
            """
            def outcome(venue):
                try:
                    manager.SetPreferredVenue(venue)
                    return "ok"
                except dbus.exceptions.DBusException as error:
                    return error.get_dbus_name()
            unknown = [outcome("nowhere") for _ in range(20)]
            changes = [outcome(("counter-1", "counter-2")[n % 2]) for n in range(\(limits.changesPerUser))]
            print(json.dumps({"unknown": sorted(set(unknown)), "changes": sorted(set(changes))}))
            """)
        #expect(result.status == 0, "\(result.stderr)\n\(service.logText)")
        #expect(result.stdout == "{\"unknown\": [\"\(BeacondError.Code.unknownVenue.name)\"], \"changes\": [\"ok\"]}\n", "\(result.stdout)")
    }

    /// A capture whose times are the extremes of Int64 (btsnoop's field) replays without a crash.
    @Test func extremeTimesInAReplayDoNotCrashTheService() async throws {
        let directory = try TestSupport.temporaryDirectory()
        let capture = directory.appendingPathComponent("extreme.btsnoop")
        var writer = BtsnoopWriter(datalink: .monitor)
        let report = Self.report(Self.counter1, rssi: -60)
        // Stored as the extremes of the file's signed 64-bit field.
        for stored in [Int64.min, Int64.min + 1, 0, Int64.max, Int64.max - 1, Int64.min] {
            writer.append(
                event: HCIEvent.advertisingReportEvent([report]),
                at: Timestamp(microsecondsSinceEpoch: stored &- BtsnoopFormat.epochOffset))
        }
        try Data(writer.bytes).write(to: capture)
        let service = try await Service(source: "replay:\(capture.path)@max")
        _ = await eventually(seconds: 20) { service.logText.contains(" ended: ") }
        #expect(service.logText.contains("ended: replayed 6 HCI events"), "\(service.logText)")
        let answer = try service.call("GetRangedBeacons", ["a{sv}", "0"])
        #expect(answer.status == 0, "\(answer.stderr)\n\(service.logText)")
        // And a speed too small to mean anything is refused with the range.
        let refused = try await TestSupport.run(TestSupport.product("beacond"), ["scan", "--source", "replay:\(capture.path)@1e-300"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("replay speed must be a number from 0.001 to 100000"), "\(refused.stderr)")
    }

    /// A btsnoop capture of `events` (time, beacons heard then), each a report event.
    static func capture(_ name: String, _ events: [(Timestamp, [BeaconIdentity])]) throws -> URL {
        var writer = BtsnoopWriter(datalink: .monitor)
        for (time, identities) in events {
            for identity in identities { writer.append(event: HCIEvent.advertisingReportEvent([report(identity, rssi: -60)]), at: time) }
        }
        let capture = try TestSupport.temporaryDirectory().appendingPathComponent(name)
        try Data(writer.bytes).write(to: capture)
        return capture
    }

    /// One damaged time stamp (2^63 µs after the epoch, a flipped top bit) in
    /// the middle of a capture is placed after the event before it: the engine's clock does not stop
    /// at its end, so the region exits once the replay has ended and counter
    /// 1 is no longer heard (it stayed inside for good), and the log says so.
    @Test func aDamagedTimeStampInAReplayIsPlacedAfterTheEventBefore() async throws {
        let start = Timestamp.milliseconds(1_700_000_000_000)
        let damaged = Timestamp(microsecondsSinceEpoch: .max)
        let times = (0..<30).map { start + .milliseconds($0 * 100) } + [damaged] + (30..<50).map { start + .milliseconds($0 * 100) }
        let capture = try Self.capture("damaged.btsnoop", times.map { ($0, [Self.counter1]) })
        let service = try await Service(source: "replay:\(capture.path)@max")
        #expect(await eventually(seconds: 40) { service.logText.contains("region caffe-macs exited") }, "\(service.logText)")
        #expect(service.logText.contains("ended: replayed 51 HCI events (btsnoop"), "\(service.logText)")
        #expect(service.logText.contains("placed 1 event(s) whose time stamp was damaged"), "\(service.logText)")
    }

    /// At @max a gap in the recording is over before the first beacon heard
    /// after it counts: both regions exit in a 60 s gap and enter again,
    /// whichever beacon is heard first (that one's region stayed inside).
    @Test func aGapInAReplayAtMaxExitsEveryRegion() async throws {
        let start = Timestamp.milliseconds(1_700_000_000_000)
        let theke = BeaconIdentity(uuid: UUID(uuidString: "F7826DA6-4FA2-4E98-8024-BC5B71E0893E")!, major: 10, minor: 1)
        let before = (0..<30).map { (start + .milliseconds($0 * 100), [Self.counter1, theke]) }
        let after = (630..<660).map { (start + .milliseconds($0 * 100), [Self.counter1, theke]) }
        let capture = try Self.capture("gap.btsnoop", before + after)
        let service = try await Service(source: "replay:\(capture.path)@max")
        _ = await eventually(seconds: 60) { service.logText.contains(" ended: ") }
        _ = await eventually(seconds: 30) { service.logText.components(separatedBy: "region kaffeehaus entered").count == 3 }
        for region in ["caffe-macs", "kaffeehaus"] {
            let transitions = service.logText.split(separator: "\n").filter { $0.contains("region \(region) ") }
                .map { $0.contains(" entered ") ? "entered" : $0.contains(" exited ") ? "exited" : "other" }
            #expect(transitions.prefix(3) == ["entered", "exited", "entered"], "\(region): \(service.logText)")
        }
    }

    // MARK: A flood from anyone in radio range

    static let counter1 = BeaconIdentity(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 1)

    static func report(_ identity: BeaconIdentity, rssi: Int8, address: UInt8 = 1) -> AdvertisingReport {
        AdvertisingReport(
            kind: .legacy(.advNonconnInd), addressType: 1, address: BluetoothAddress(0xC0, 0, 0, 0, 0, address), rssi: rssi,
            data: IBeaconFrame(identity: identity, measuredPower: -59).advertisingData[...])
    }

    /// Counter 1 at −60 dBm every 100 ms beside `rate` advertisements a second
    /// of the café's UUID with random majors and minors (none a venue's), each
    /// identity twice and louder, for `seconds`: a btsnoop capture to replay at
    /// its own pace.
    static func floodCapture(rate: Int, seconds: Int) throws -> URL {
        var writer = BtsnoopWriter(datalink: .monitor)
        var generator = SystemRandomNumberGenerator()
        let start = Timestamp.milliseconds(1_700_000_000_000)
        var events: [(Timestamp, [UInt8])] = []
        for tenth in 0..<(seconds * 10) {
            events.append((start + .milliseconds(Int64(tenth) * 100), HCIEvent.advertisingReportEvent([report(counter1, rssi: -60)])))
        }
        for n in 0..<(rate * seconds / 2) {
            let stranger = BeaconIdentity(
                uuid: counter1.uuid, major: UInt16.random(in: 1_000...UInt16.max, using: &generator),
                minor: UInt16.random(in: 0...UInt16.max, using: &generator))
            let time = start + .microseconds(Int64(n) * 2_000_000 / Int64(rate))
            events.append((time, HCIEvent.advertisingReportEvent([report(stranger, rssi: -40, address: 2)])))
            events.append((time + .microseconds(500_000 / Int64(rate)), HCIEvent.advertisingReportEvent([report(stranger, rssi: -40, address: 2)])))
        }
        for (time, event) in events.sorted(by: { $0.0 < $1.0 }) { writer.append(event: event, at: time) }
        let capture = try TestSupport.temporaryDirectory().appendingPathComponent("flood-\(rate).btsnoop")
        try Data(writer.bytes).write(to: capture)
        return capture
    }

    /// At real time, as someone nearby would: counter 1 stays the nearest
    /// venue and caffe-macs inside, objects and signals stay bounded, and a
    /// D-Bus write is answered while it goes on.
    @Test(arguments: [50, 1_000])
    func aFloodAtRealTimeLeavesTheVenueTheRegionAndTheBusAlone(rate: Int) async throws {
        let seconds = 25
        let capture = try Self.floodCapture(rate: rate, seconds: seconds)
        let bus = try PrivateBus()
        let monitor = try await ServiceBusTests.BusMonitor(bus, rules: ["type='signal',sender='\(Beacond.busName)'"])
        let service = try await Service(bus: bus, source: "replay:\(capture.path)")
        let watched = try await service.python(
            """
            import time
            venue = manager.RequestNearestVenue(dbus.UInt32(15000), timeout=30)
            answers = [str(venue["id"])]
            written = 0
            manager_props = dbus.Interface(bus.get_object("\(Beacond.busName)", "\(Beacond.root)"), "org.freedesktop.DBus.Properties")
            while str(manager_props.Get("\(Beacond.Manager1.name)", "Available")) == "1":
                try:
                    answers.append(str(manager.GetNearestVenue(timeout=5)["id"]))
                except dbus.exceptions.DBusException as error:
                    answers.append(error.get_dbus_name())
                for preferred in ("counter-2", ""):
                    try:
                        manager.SetPreferredVenue(preferred, timeout=5)
                        written += 1
                    except dbus.exceptions.DBusException as error:
                        if error.get_dbus_name() != "\(BeacondError.Code.busy.name)":  # paced past sixteen in a row
                            raise
                objects = dbus.Interface(bus.get_object("\(Beacond.busName)", "\(Beacond.root)"), "org.freedesktop.DBus.ObjectManager").GetManagedObjects(timeout=5)
                beacons = sum(1 for interfaces in objects.values() if "\(Beacond.Beacon1.name)" in interfaces)
                print("beacons", beacons, "state", manager.RequestState("caffe-macs"))
                time.sleep(0.5)
            print("answers", " ".join(sorted(set(answers))), len(answers), "written", written)
            """)
        #expect(watched.status == 0, "\(watched.stderr)\n\(service.logText.suffix(2_000))")
        let lines = watched.stdout.split(separator: "\n").map(String.init)
        let summary = try #require(lines.last { $0.hasPrefix("answers ") }, "\(watched.stdout)")
        // Every answer was counter 1: the set of answers is that one id, then the count.
        let parts = summary.split(separator: " ")
        #expect(parts.count > 2 && parts[1] == "counter-1" && Int(parts[2]) != nil, "\(summary)")
        // Preferences were written meanwhile (paced past sixteen in a row, not refused).
        #expect(parts.count == 5 && (Int(parts[4]) ?? 0) >= 1, "\(summary)")
        let polls = lines.filter { $0.hasPrefix("beacons ") }
        // Enough looks to have watched the flood (how many fit in depends on the machine's load).
        #expect(polls.count >= 3, "\(polls.count) polls")
        #expect(polls.allSatisfy { $0.hasSuffix("state inside") }, "\(polls)")
        let largest = polls.compactMap { Int($0.split(separator: " ")[1]) }.max() ?? 0
        // Counter 1, 100 ranged strangers, and those whose removal waits for its second of coalescing.
        #expect(largest <= 1 + 100 + 20, "\(largest) beacon objects")
        #expect(!service.logText.contains("region caffe-macs exited"))
        // Signals: a few generations of ranged strangers, not one per advertisement.
        let added = monitor.captured.components(separatedBy: "member=InterfacesAdded").count - 1
        #expect(added <= 400, "\(added) InterfacesAdded in \(seconds) s")
        // Memory stays bounded by the caps (a debug build holds ~30 MB before any beacon).
        let resident = Self.residentMegabytes(of: service)
        #expect(resident < 120)
        print("flood of \(rate)/s for \(seconds) s: \(summary); at most \(largest) beacon objects, \(added) InterfacesAdded, \(resident) MB resident")
    }

    static func residentMegabytes(of service: Service) -> Int {
        guard let pid = service.processIdentifier,
            let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return .max }
        return kilobytes / 1024
    }
}
