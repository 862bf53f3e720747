import BeaconTestSupport
import Testing

@testable import DBus

/// A reply is decoded up to `MessageCoder.mostValuesInReplies` values (the
/// array counts one, each element one): a peer answering with more fails
/// the call with LimitsExceeded, instead of becoming a heap value per byte.
@Suite(.serialized) struct ReplyBoundTests {
    static let path = "/org/example/big"
    static let interfaceName = "org.example.Big1"

    /// Answers with as many bytes as asked for.
    static let big = DBusInterface(
        name: interfaceName,
        methods: [
            .init("Bytes", inputs: [.init("count", "u")], outputs: [.init("bytes", "ay")]) { call in
                let count = Int(call.arguments[0].integer ?? 0)
                call.reply([.array(elementSignature: "y", Array(repeating: .byte(7), count: count))])
            }
        ])

    @Test func aReplyOverTheBoundFailsAndOneAtItIsRead() async throws {
        let fixture = try await DBusConnectionTests.Fixture()
        fixture.server.export(Self.path, interfaces: [Self.big])
        _ = await fixture.server.objects.isExported(Self.path)
        let client = try await DBusConnection.connect(.address(fixture.bus.address))
        defer { client.close(); fixture.server.close() }
        func bytes(_ count: Int) async throws(DBusError) -> [DBusValue] {
            try await client.call(
                destination: "org.example.Counter", path: Self.path, interface: Self.interfaceName, member: "Bytes",
                arguments: [.uint32(UInt32(count))])
        }
        let limit = MessageCoder.mostValuesInReplies
        let atTheBound = try await bytes(limit - 1)
        guard case .array(_, let elements)? = atTheBound.first else { Issue.record("not an array: \(atTheBound.prefix(1))"); return }
        #expect(elements.count == limit - 1)

        do {
            _ = try await bytes(limit)
            Issue.record("a reply of \(limit + 1) values was read")
        } catch {
            #expect(error.name == "org.freedesktop.DBus.Error.LimitsExceeded")
            #expect(error.message.hasSuffix("answered with more than \(limit) values; none were read"), "\(error)")
        }
        // The connection goes on.
        #expect(try await bytes(3).first == .array(elementSignature: "y", [.byte(7), .byte(7), .byte(7)]))
    }
}
