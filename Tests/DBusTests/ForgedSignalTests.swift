import BeaconTestSupport
import DBus
import Foundation
import Synchronization
import Testing

/// Any peer on a bus can send a signal that looks like the bus driver's,
/// broadcast or addressed to one connection. Only the driver's own are
/// believed: a forged NameOwnerChanged must not make a service drop a
/// client's regions or think BlueZ went away.
@Suite struct ForgedSignalTests {
    @Test func onlyTheBusDriverSaysWhoLeft() async throws {
        let bus = try PrivateBus()
        let server = try await DBusConnection.connect(.address(bus.address))
        defer { server.close() }
        let left = Mutex<[String]>([])
        server.subscribe(
            sender: DBusNames.busDriver, path: DBusNames.busDriverPath, interface: DBusNames.busDriver,
            member: "NameOwnerChanged"
        ) { signal in
            if let name = signal.arguments.first?.string, signal.arguments.last?.string == "" {
                left.withLock { $0.append(name) }
            }
        }
        // The subscription's match rule is in place once a call made after it returns.
        _ = try await server.call(
            destination: DBusNames.busDriver, path: DBusNames.busDriverPath, interface: DBusNames.busDriver, member: "GetId")
        // A forger sends NameOwnerChanged(":1.999", ":1.999", "") to the server, then
        // broadcast, then leaves the bus: the driver's real NameOwnerChanged for it follows.
        let forger = try await TestSupport.run(
            "/usr/bin/python3",
            [
                "-c",
                """
                import dbus, dbus.lowlevel, sys
                bus = dbus.bus.BusConnection(sys.argv[1])
                for destination in [sys.argv[2], None]:
                    message = dbus.lowlevel.SignalMessage("/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged")
                    if destination:
                        message.set_destination(destination)
                    message.append(":1.999", ":1.999", "", signature="sss")
                    bus.send_message(message)
                bus.flush()
                print(bus.get_unique_name())
                """,
                bus.address, server.uniqueName,
            ])
        try #require(forger.status == 0, "\(forger.stderr)")
        let forgerName = forger.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline, !left.withLock({ $0.contains(forgerName) }) {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(left.withLock { $0 } == [forgerName])
    }
}
