import BeaconTestSupport
import DBus
import Testing

/// Values D-Bus cannot carry are refused by the binding, with the reason,
/// before libdbus sees them (libdbus aborts the process on most): in a call's
/// arguments, in a handler's reply, and on the in-memory bus alike.
@Suite(.serialized) struct UncarriableValueTests {
    static let uncarriable: [(value: DBusValue, reason: String)] = [
        (.string("nul\u{0}"), "a string contains a NUL character"),
        (.objectPath("/org/example/"), "'/org/example/' is not a valid object path"),
        (.objectPath("org/example"), "'org/example' is not a valid object path"),
        (.array(elementSignature: "s", [.string("a"), .uint32(1)]), "array of s holds a u"),
        (.dictionary(keySignature: "s", valueSignature: "v", [.init(.string("k"), .string("bare"))]), "dictionary a{sv} holds {ss}"),
        // Deep inside: a variant in a dictionary in a structure.
        (.structure([.uint32(1), .vardict([("path", .objectPath("//"))])]), "'//' is not a valid object path"),
        // Types libdbus would abort on: checked before a container is opened.
        (.signature("a{"), "'a{' is not a valid type signature"),
        (.array(elementSignature: "", []), "'a' is not a valid array type"),
        (.array(elementSignature: "ss", []), "'ass' is not a valid array type"),
        (.dictionary(keySignature: "v", valueSignature: "s", []), "'a{vs}' is not a valid dictionary type"),
        (.structure([]), "a structure needs at least one field"),
        (.variant(.structure([.string("x"), .structure([])])), "a structure needs at least one field"),
    ]

    static let interfaceName = "org.example.Refuser1"
    static let path = "/org/example/refuser"

    /// Replies with the uncarriable value its argument picks.
    static let refuser = DBusInterface(
        name: interfaceName,
        methods: [
            .init("Reply", inputs: [.init("index", "u")], outputs: [.init("value", "v")]) { call in
                call.reply([uncarriable[Int(call.arguments[0].integer ?? 0)].value])
            }
        ])

    @Test func callsAndRepliesWithThemFailWithTheReason() async throws {
        let fixture = try await DBusConnectionTests.Fixture()
        fixture.server.export(Self.path, interfaces: [Self.refuser])
        _ = await fixture.server.objects.isExported(Self.path)
        let client = try await DBusConnection.connect(.address(fixture.bus.address))
        defer { client.close(); fixture.server.close() }
        func failure(_ member: String, _ arguments: [DBusValue]) async -> DBusError? {
            do {
                _ = try await client.call(
                    destination: "org.example.Counter", path: Self.path, interface: Self.interfaceName, member: member,
                    arguments: arguments)
                return nil
            } catch {
                return error
            }
        }
        for (index, (value, reason)) in Self.uncarriable.enumerated() {
            #expect(await failure("Reply", [value]) == .invalidArgs(reason), "argument \(value)")
            #expect(await failure("Reply", [.uint32(UInt32(index))]) == .failed("reply could not be encoded: \(reason)"), "reply \(value)")
        }
        // Both ends still answer.
        let echo = try await client.call(
            destination: "org.example.Counter", path: "/org/example/counter", interface: DBusConnectionTests.interfaceName,
            member: "Echo", arguments: [.string("still here")])
        #expect(echo == [.string("echo: still here")])
    }

    @Test func theInMemoryBusRefusesThemAlike() async {
        let bus = DBusMemoryBus()
        await bus.export(Self.path, interfaces: [Self.refuser])
        for (value, reason) in Self.uncarriable {
            do throws(DBusError) {
                _ = try await bus.call(path: Self.path, interface: Self.interfaceName, member: "Reply", arguments: [value])
                Issue.record("\(value) was carried")
            } catch {
                #expect(error == .invalidArgs(reason))
            }
        }
    }
}
