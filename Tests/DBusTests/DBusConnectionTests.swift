import BeaconTestSupport
import DBus
import Foundation
import Synchronization
import Testing

/// The libdbus binding against a real dbus-daemon, real clients (busctl,
/// gdbus) and itself as a client.
@Suite(.serialized) struct DBusConnectionTests {
    static let interfaceName = "org.example.Counter1"

    /// An object with a method, a deferred method, a read-only and a writable property and a signal.
    final class Name: Sendable {
        let value = Mutex("counter")
        /// Calls to `Hold`, answered only when `Release` is called.
        let held = Mutex<[DBusMethodCall]>([])
        func get() -> String { value.withLock { $0 } }
        func set(_ text: String) { value.withLock { $0 = text } }
    }

    static func counterInterface(name: Name) -> DBusInterface {
        DBusInterface(
            name: interfaceName,
            methods: [
                .init("Echo", inputs: [.init("text", "s")], outputs: [.init("text", "s")]) { call in
                    call.reply([.string("echo: " + (call.arguments[0].string ?? ""))])
                },
                .init("Hold", outputs: [.init("done", "b")]) { call in
                    name.held.withLock { $0.append(call) }
                },
                .init("Release") { call in
                    for held in name.held.withLock({ calls in defer { calls.removeAll() }; return calls }) {
                        held.reply([.boolean(true)])
                    }
                    call.reply()
                },
                .init("Options", inputs: [.init("options", "a{sv}")], outputs: [.init("keys", "as")]) { call in
                    let keys = call.arguments[0].stringKeyedEntries?.keys.sorted() ?? []
                    call.reply([.array(elementSignature: "s", keys.map { .string($0) })])
                },
            ],
            properties: [
                .init("Count", "u", get: { .uint32(42) }),
                .init(
                    "Name", "s", get: { .string(name.get()) },
                    set: { value, _ throws(DBusError) in
                        guard let text = value.string, !text.isEmpty else { throw .invalidArgs("Name must not be empty") }
                        name.set(text)
                    }),
            ],
            signals: [.init("Ticked", [.init("count", "u")])])
    }

    struct Fixture {
        let bus: PrivateBus
        let server: DBusConnection
        let name = Name()

        init() async throws {
            bus = try PrivateBus()
            server = try await DBusConnection.connect(.address(bus.address))
            try await server.requestName("org.example.Counter")
            server.objects.setObjectManager(at: "/org/example")
            server.export("/org/example/counter", interfaces: [DBusConnectionTests.counterInterface(name: name)])
            // Exporting is handed to the connection's thread: once this answers, it is done and announced.
            _ = await server.objects.isExported("/org/example/counter")
        }
    }

    @Test func ownClientCallsMethodsAndProperties() async throws {
        let fixture = try await Fixture()
        let client = try await DBusConnection.connect(.address(fixture.bus.address))
        defer { client.close(); fixture.server.close() }
        let echo = try await client.call(
            destination: "org.example.Counter", path: "/org/example/counter", interface: Self.interfaceName,
            member: "Echo", arguments: [.string("héllo 咖啡")])
        #expect(echo == [.string("echo: héllo 咖啡")])

        let options = try await client.call(
            destination: "org.example.Counter", path: "/org/example/counter", interface: Self.interfaceName,
            member: "Options", arguments: [.vardict([("b", .int32(1)), ("a", .string("x"))])])
        #expect(options == [.array(elementSignature: "s", [.string("a"), .string("b")])])

        let count = try await client.call(
            destination: "org.example.Counter", path: "/org/example/counter", interface: "org.freedesktop.DBus.Properties",
            member: "Get", arguments: [.string(Self.interfaceName), .string("Count")])
        #expect(count == [.variant(.uint32(42))])

        _ = try await client.call(
            destination: "org.example.Counter", path: "/org/example/counter", interface: "org.freedesktop.DBus.Properties",
            member: "Set", arguments: [.string(Self.interfaceName), .string("Name"), .variant(.string("renamed"))])
        #expect(fixture.name.get() == "renamed")

        await #expect(throws: DBusError.self) {
            try await client.call(
                destination: "org.example.Counter", path: "/org/example/counter", interface: "org.freedesktop.DBus.Properties",
                member: "Set", arguments: [.string(Self.interfaceName), .string("Count"), .variant(.uint32(1))])
        }
    }

    @Test func badCallsGetErrorsAPersonCanActOn() async throws {
        let fixture = try await Fixture()
        let client = try await DBusConnection.connect(.address(fixture.bus.address))
        defer { client.close(); fixture.server.close() }
        func failure(_ member: String, _ arguments: [DBusValue], path: String = "/org/example/counter") async -> DBusError? {
            do {
                _ = try await client.call(
                    destination: "org.example.Counter", path: path, interface: Self.interfaceName, member: member,
                    arguments: arguments)
                return nil
            } catch {
                return error
            }
        }
        let wrongType = await failure("Echo", [.uint32(7)])
        #expect(wrongType?.name == "org.freedesktop.DBus.Error.InvalidArgs")
        #expect(wrongType?.message.contains("Echo takes (s)") == true)
        #expect(await failure("Nope", [])?.name == "org.freedesktop.DBus.Error.UnknownMethod")
        #expect(await failure("Echo", [.string("x")], path: "/org/example/ghost")?.name == "org.freedesktop.DBus.Error.UnknownObject")
        // The standard interfaces check their arguments as the declared ones do.
        func standard(_ interface: String, _ member: String, _ arguments: [DBusValue], path: String = "/org/example/counter") async -> DBusError? {
            do {
                _ = try await client.call(
                    destination: "org.example.Counter", path: path, interface: interface, member: member,
                    arguments: arguments)
                return nil
            } catch {
                return error
            }
        }
        #expect(await standard("org.freedesktop.DBus.Introspectable", "Introspect", [.uint32(7)])?.name == "org.freedesktop.DBus.Error.InvalidArgs")
        #expect(await standard("org.freedesktop.DBus.Introspectable", "Introspect", []) == nil)
        #expect(await standard("org.freedesktop.DBus.Introspectable", "Nope", [])?.name == "org.freedesktop.DBus.Error.UnknownMethod")
        let manager = "org.freedesktop.DBus.ObjectManager"
        #expect(await standard(manager, "GetManagedObjects", [.string("x")], path: "/org/example")?.name == "org.freedesktop.DBus.Error.InvalidArgs")
        #expect(await standard(manager, "GetManagedObjects", [], path: "/org/example") == nil)
        // Arguments too many to read: a method that does not exist is named as
        // such, one that does hears why its arguments were not read, and a Set
        // of the right signature is refused before its arguments are looked at.
        let tooMany: [DBusValue] = [.array(elementSignature: "y", Array(repeating: .byte(0), count: 20_000))]
        #expect(await failure("Nope", tooMany)?.name == "org.freedesktop.DBus.Error.UnknownMethod")
        #expect(await failure("Echo", tooMany)?.message.contains("more than 16384 values") == true)
        let hugeSet = await standard(
            "org.freedesktop.DBus.Properties", "Set", [.string(Self.interfaceName), .string("Count"), .variant(tooMany[0])])
        #expect(hugeSet?.name == "org.freedesktop.DBus.Error.InvalidArgs")
        #expect(hugeSet?.message.contains("more than 16384 values") == true)
        // The server still answers after all that.
        #expect(try await client.call(
            destination: "org.example.Counter", path: "/org/example/counter", interface: Self.interfaceName,
            member: "Echo", arguments: [.string("still here")]) == [.string("echo: still here")])
    }

    @Test func deferredRepliesDoNotBlockOtherCalls() async throws {
        let fixture = try await Fixture()
        let client = try await DBusConnection.connect(.address(fixture.bus.address))
        defer { client.close(); fixture.server.close() }
        func call(_ member: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
            try await client.call(
                destination: "org.example.Counter", path: "/org/example/counter", interface: Self.interfaceName,
                member: member, arguments: arguments, timeout: .seconds(20))
        }
        // A call the server holds unanswered...
        async let held = call("Hold")
        let deadline = ContinuousClock.now + .seconds(20)
        while fixture.name.held.withLock({ $0.isEmpty }), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        // ...does not stop it answering others, which would otherwise time out.
        #expect(try await call("Echo", [.string("quick")]) == [.string("echo: quick")])
        #expect(fixture.name.held.withLock { $0.count } == 1)
        _ = try await call("Release")
        #expect(try await held == [.boolean(true)])
    }

    /// A timeout that has already run out (zero or negative) is a call that
    /// gets no reply in time: NoReply, not "the connection is closed", which
    /// libdbus's refusal of a negative timeout read as until 2026-11-27.
    @Test func aTimeoutAlreadyRunOutIsNoReply() async throws {
        let fixture = try await Fixture()
        let client = try await DBusConnection.connect(.address(fixture.bus.address))
        defer { client.close(); fixture.server.close() }
        for timeout in [Duration.zero, .seconds(-10)] {
            do {
                _ = try await client.call(
                    destination: "org.example.Counter", path: "/org/example/counter", interface: Self.interfaceName,
                    member: "Hold", timeout: timeout)
                Issue.record("a held call with a timeout of \(timeout) was answered")
            } catch {
                #expect(error.name == "org.freedesktop.DBus.Error.NoReply", "\(timeout): \(error)")
            }
        }
        #expect(client.isConnected)
    }

    @Test func secondOwnerOfTheNameIsRefused() async throws {
        let fixture = try await Fixture()
        let intruder = try await DBusConnection.connect(.address(fixture.bus.address))
        defer { intruder.close(); fixture.server.close() }
        do {
            try await intruder.requestName("org.example.Counter")
            Issue.record("a second process owned the name")
        } catch {
            #expect(error.name == "org.freedesktop.DBus.Error.AddressInUse")
            #expect(error.message.contains("already owned"))
        }
    }

    @Test func busctlAndGdbusSeeTheObjects() async throws {
        let fixture = try await Fixture()
        defer { fixture.server.close() }
        let busctl = try #require(TestSupport.tool("busctl"), "busctl (package systemd) is needed")
        let call = try await TestSupport.run(
            busctl, ["--address=\(fixture.bus.address)", "call", "org.example.Counter", "/org/example/counter",
                     Self.interfaceName, "Echo", "s", "from busctl"])
        #expect(call.status == 0, "\(call.stderr)")
        #expect(call.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "s \"echo: from busctl\"")

        let gdbus = try #require(TestSupport.tool("gdbus"), "gdbus (package libglib2.0-bin) is needed")
        let introspect = try await TestSupport.run(
            gdbus, ["introspect", "--address", fixture.bus.address, "--dest", "org.example.Counter", "--object-path", "/org/example/counter"])
        #expect(introspect.status == 0, "\(introspect.stderr)")
        #expect(introspect.stdout.contains("Echo(in  s text,"))
        #expect(introspect.stdout.contains("readwrite s Name"))
        #expect(introspect.stdout.contains("Ticked(u count)"))

        let managed = try await TestSupport.run(
            gdbus, ["call", "--address", fixture.bus.address, "--dest", "org.example.Counter", "--object-path", "/org/example",
                    "--method", "org.freedesktop.DBus.ObjectManager.GetManagedObjects"])
        #expect(managed.status == 0, "\(managed.stderr)")
        #expect(managed.stdout.contains("'/org/example/counter'"))
        #expect(managed.stdout.contains("'Count': <uint32 42>"))

        let ping = try await TestSupport.run(
            busctl, ["--address=\(fixture.bus.address)", "call", "org.example.Counter", "/org/example/counter",
                     "org.freedesktop.DBus.Peer", "Ping"])
        #expect(ping.status == 0, "\(ping.stderr)")
    }

    @Test func signalsReachSubscribers() async throws {
        let fixture = try await Fixture()
        let client = try await DBusConnection.connect(.address(fixture.bus.address))
        defer { client.close(); fixture.server.close() }
        let received = AsyncStream<DBusSignal>.makeStream()
        client.subscribe(interface: "org.freedesktop.DBus.ObjectManager") { received.continuation.yield($0) }
        client.subscribe(interface: Self.interfaceName, member: "Ticked") { received.continuation.yield($0) }
        // Our own call makes sure the match rules are in place before anything is emitted.
        _ = try await client.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus.Peer", member: "Ping")
        fixture.server.export("/org/example/second", interfaces: [Self.counterInterface(name: fixture.name)])
        fixture.server.emit(path: "/org/example/counter", interface: Self.interfaceName, member: "Ticked", arguments: [.uint32(3)])
        fixture.server.unexport("/org/example/second")
        var members: [String] = []
        let deadline = ContinuousClock.now + .seconds(10)
        for await signal in received.stream {
            members.append(signal.member)
            if signal.member == "InterfacesAdded" { #expect(signal.arguments.first == .objectPath("/org/example/second")) }
            if signal.member == "Ticked" { #expect(signal.arguments == [.uint32(3)]) }
            if members.count == 3 || ContinuousClock.now > deadline { break }
        }
        #expect(members == ["InterfacesAdded", "Ticked", "InterfacesRemoved"])
    }

    /// A subscription with `arg0` hears the bus driver's NameOwnerChanged for
    /// that name only: the bus no longer wakes it for every other client's
    /// coming and going (BeaconClient's sequences and the bluez source follow one name).
    @Test func aSubscriptionForOneNameHearsThatNameOnly() async throws {
        let fixture = try await Fixture()
        let client = try await DBusConnection.connect(.address(fixture.bus.address))
        defer { client.close(); fixture.server.close() }
        let received = AsyncStream<DBusSignal>.makeStream()
        client.subscribe(
            sender: DBusNames.busDriver, interface: DBusNames.busDriver, member: "NameOwnerChanged", arg0: "org.example.Followed"
        ) { received.continuation.yield($0) }
        _ = try await client.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus.Peer", member: "Ping")
        // A new connection (its unique name), another name, then the one followed.
        let other = try await DBusConnection.connect(.address(fixture.bus.address))
        defer { other.close() }
        try await other.requestName("org.example.Other")
        try await other.requestName("org.example.Followed")
        // Nothing heard within 10 s ends the wait: the stream is finished then.
        let deadline = Task {
            try? await Task.sleep(for: .seconds(10))
            received.continuation.finish()
        }
        defer { deadline.cancel() }
        var heard: [String] = []
        for await signal in received.stream {
            heard.append(signal.arguments.first?.string ?? "?")
            break
        }
        #expect(heard == ["org.example.Followed"])
    }
}
