import BeaconTestSupport
import DBus
import Testing

/// A reply encoded once and given many times reads, to every client, as the
/// values it was made from; values D-Bus cannot carry fail each call as a
/// plain reply would.
@Suite(.serialized) struct EncodedReplyTests {
    static let interfaceName = "org.example.Encoded1"
    static let path = "/org/example/encoded"
    static let values: [DBusValue] = [
        .vardict([("id", .string("counter-1")), ("name", .string("Caffè 咖啡")), ("distance", .double(1.25)), ("beacon", .objectPath("/org/example/b"))]),
        .array(elementSignature: "u", [.uint32(1), .uint32(2)]),
    ]

    static func interface(_ encoded: DBusEncodedReply, broken: DBusEncodedReply) -> DBusInterface {
        DBusInterface(
            name: interfaceName,
            methods: [
                .init("Get", outputs: [.init("venue", "a{sv}"), .init("numbers", "au")]) { $0.reply(encoded) },
                .init("Broken", outputs: [.init("text", "s")]) { $0.reply(broken) },
            ])
    }

    @Test func everyClientReadsTheValuesAndBrokenOnesFailEachCall() async throws {
        let fixture = try await DBusConnectionTests.Fixture()
        fixture.server.export(Self.path, interfaces: [Self.interface(DBusEncodedReply(Self.values), broken: DBusEncodedReply([.string("nul\u{0}")]))])
        _ = await fixture.server.objects.isExported(Self.path)
        let clients = try await [DBusConnection.connect(.address(fixture.bus.address)), DBusConnection.connect(.address(fixture.bus.address))]
        defer {
            for client in clients { client.close() }
            fixture.server.close()
        }
        for client in clients + clients {
            let reply = try await client.call(destination: "org.example.Counter", path: Self.path, interface: Self.interfaceName, member: "Get")
            #expect(reply == Self.values)
            do {
                _ = try await client.call(destination: "org.example.Counter", path: Self.path, interface: Self.interfaceName, member: "Broken")
                Issue.record("a NUL was carried")
            } catch {
                #expect(error == .failed("reply could not be encoded: a string contains a NUL character"))
            }
        }
        // A client of another library reads the same.
        let gdbus = try await TestSupport.run(
            TestSupport.tool("gdbus")!,
            ["call", "--address", fixture.bus.address, "--dest", "org.example.Counter", "--object-path", Self.path, "--method", "\(Self.interfaceName).Get"])
        #expect(gdbus.stdout.contains("'name': <'Caffè 咖啡'>") && gdbus.stdout.contains("[uint32 1, 2]"), "\(gdbus.stdout) \(gdbus.stderr)")
    }

    @Test func theInMemoryBusAnswersWithTheValues() async throws {
        let bus = DBusMemoryBus()
        await bus.export(Self.path, interfaces: [Self.interface(DBusEncodedReply(Self.values), broken: DBusEncodedReply([]))])
        #expect(try await bus.call(path: Self.path, interface: Self.interfaceName, member: "Get") == Self.values)
    }
}
