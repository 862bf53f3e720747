import DBus
import Synchronization
import Testing

/// The object tree on the in-memory bus: the rules a connection applies
/// (dispatch, signatures, Properties, Introspectable, ObjectManager and
/// their signals), fast and without a daemon. The same declarations are
/// checked against a real dbus-daemon in DBusConnectionTests.
@Suite struct MemoryBusTests {
    static let interfaceName = DBusConnectionTests.interfaceName
    static let path = "/org/example/counter"

    func bus() async -> (DBusMemoryBus, DBusConnectionTests.Name) {
        let bus = DBusMemoryBus()
        let name = DBusConnectionTests.Name()
        await bus.setObjectManager(at: "/org/example")
        await bus.export(Self.path, interfaces: [DBusConnectionTests.counterInterface(name: name)])
        return (bus, name)
    }

    func failure(_ body: () async throws(DBusError) -> [DBusValue]) async -> DBusError? {
        do throws(DBusError) {
            _ = try await body()
            return nil
        } catch {
            return error
        }
    }

    @Test func methodsAreDispatchedWithTheirSignatureChecked() async throws {
        let (bus, _) = await bus()
        #expect(try await bus.call(path: Self.path, interface: Self.interfaceName, member: "Echo", arguments: [.string("hi")]) == [.string("echo: hi")])
        // No interface named: the object's interfaces are searched.
        #expect(try await bus.call(path: Self.path, interface: "", member: "Echo", arguments: [.string("any")]) == [.string("echo: any")])
        let wrongType = await failure { () throws(DBusError) in
            try await bus.call(path: Self.path, interface: Self.interfaceName, member: "Echo", arguments: [.uint32(1)])
        }
        #expect(wrongType?.name == "org.freedesktop.DBus.Error.InvalidArgs")
        #expect(wrongType?.message == "Echo takes (s) [text], got (u)")
        #expect(await failure { () throws(DBusError) in try await bus.call(path: Self.path, interface: Self.interfaceName, member: "Nope") }?.name
            == "org.freedesktop.DBus.Error.UnknownMethod")
        #expect(await failure { () throws(DBusError) in try await bus.call(path: Self.path, interface: "org.example.Other", member: "Echo") }?.name
            == "org.freedesktop.DBus.Error.UnknownInterface")
        #expect(await failure { () throws(DBusError) in try await bus.call(path: "/org/example/ghost", interface: Self.interfaceName, member: "Echo") }?.name
            == "org.freedesktop.DBus.Error.UnknownObject")
        #expect(await failure { () throws(DBusError) in
            try await bus.call(path: Self.path, interface: Self.interfaceName, member: "Echo", arguments: [.string("nul\u{0}")])
        }?.name == "org.freedesktop.DBus.Error.InvalidArgs")
        #expect(try await bus.call(path: Self.path, interface: "org.freedesktop.DBus.Peer", member: "Ping") == [])
    }

    @Test func deferredRepliesArriveAndDroppedCallsFail() async throws {
        let (bus, name) = await bus()
        async let held = bus.call(path: Self.path, interface: Self.interfaceName, member: "Hold")
        // The held call waits while others are answered.
        while name.held.withLock({ $0.isEmpty }) { await Task.yield() }
        #expect(try await bus.call(path: Self.path, interface: Self.interfaceName, member: "Release") == [])
        #expect(try await held == [.boolean(true)])

        await bus.export(
            "/dropper", interfaces: [DBusInterface(name: "org.example.Dropper", methods: [.init("Drop") { _ in }])])
        let dropped = await failure { () throws(DBusError) in try await bus.call(path: "/dropper", interface: "org.example.Dropper", member: "Drop") }
        #expect(dropped == .failed("Drop was not answered"))
    }

    @Test func propertiesAreReadWrittenAndGuarded() async throws {
        let (bus, name) = await bus()
        let properties = "org.freedesktop.DBus.Properties"
        #expect(try await bus.call(path: Self.path, interface: properties, member: "Get", arguments: [.string(Self.interfaceName), .string("Count")])
            == [.variant(.uint32(42))])
        // No interface named: any of the object's, as the specification allows.
        #expect(try await bus.call(path: Self.path, interface: properties, member: "Get", arguments: [.string(""), .string("Count")])
            == [.variant(.uint32(42))])
        let all = try await bus.call(path: Self.path, interface: properties, member: "GetAll", arguments: [.string("")])
        #expect(all.first?.stringKeyedEntries?["Count"] == .variant(.uint32(42)), "\(all)")
        #expect(try await bus.call(path: Self.path, interface: properties, member: "GetAll", arguments: [.string(Self.interfaceName)])
            == [.vardict([("Count", .uint32(42)), ("Name", .string("counter"))])])
        _ = try await bus.call(
            path: Self.path, interface: properties, member: "Set",
            arguments: [.string(Self.interfaceName), .string("Name"), .variant(.string("renamed"))], sender: ":1.7")
        #expect(name.get() == "renamed")
        func setFailure(_ property: String, _ value: DBusValue) async -> String? {
            await failure { () throws(DBusError) in
                try await bus.call(path: Self.path, interface: properties, member: "Set", arguments: [.string(Self.interfaceName), .string(property), .variant(value)])
            }?.name
        }
        #expect(await setFailure("Count", .uint32(1)) == "org.freedesktop.DBus.Error.PropertyReadOnly")
        #expect(await setFailure("Name", .uint32(1)) == "org.freedesktop.DBus.Error.InvalidArgs")
        #expect(await setFailure("Name", .string("")) == "org.freedesktop.DBus.Error.InvalidArgs")
        #expect(await setFailure("Missing", .string("x")) == "org.freedesktop.DBus.Error.UnknownProperty")
        #expect(name.get() == "renamed")
        #expect(await failure { () throws(DBusError) in
            try await bus.call(path: Self.path, interface: properties, member: "Get", arguments: [.string(Self.interfaceName)])
        }?.message == "Properties.Get takes (ss), got (s)")
    }

    @Test func introspectionListsInterfacesAndChildren() async throws {
        let (bus, _) = await bus()
        let introspectable = "org.freedesktop.DBus.Introspectable"
        let object = try await bus.call(path: Self.path, interface: introspectable, member: "Introspect").first?.string ?? ""
        #expect(object.contains("<interface name=\"\(Self.interfaceName)\">"))
        #expect(object.contains("<property name=\"Name\" type=\"s\" access=\"readwrite\"/>"))
        #expect(object.contains("<interface name=\"org.freedesktop.DBus.Properties\">"))
        #expect(!object.contains("org.freedesktop.DBus.ObjectManager"))
        // A path with no object but objects below: its children, and the manager's interface.
        let manager = try await bus.call(path: "/org/example", interface: introspectable, member: "Introspect").first?.string ?? ""
        #expect(manager.contains("<node name=\"counter\"/>"))
        #expect(manager.contains("org.freedesktop.DBus.ObjectManager"))
        let root = try await bus.call(path: "/", interface: introspectable, member: "Introspect").first?.string ?? ""
        #expect(root.contains("<node name=\"org\"/>"))
    }

    /// A manager's always-listed nodes show whether or not anything is
    /// exported below them, so its introspection says nothing of what is.
    @Test func theManagersIntrospectionListsItsNodesWhateverIsExported() async throws {
        let bus = DBusMemoryBus()
        await bus.setObjectManager(at: "/org/example", listingAlways: ["/org/example/counter", "/org/example/other"])
        let introspect = { try await bus.call(path: "/org/example", interface: "org.freedesktop.DBus.Introspectable", member: "Introspect").first?.string ?? "" }
        let empty = try await introspect()
        #expect(empty.contains("<node name=\"counter\"/>") && empty.contains("<node name=\"other\"/>"))
        await bus.export(Self.path + "/inner", interfaces: [DBusConnectionTests.counterInterface(name: DBusConnectionTests.Name())])
        #expect(try await introspect() == empty)
        // Below the manager, nodes come and go with what is exported there.
        let below = try await bus.call(path: Self.path, interface: "org.freedesktop.DBus.Introspectable", member: "Introspect").first?.string ?? ""
        #expect(below.contains("<node name=\"inner\"/>"))
    }

    @Test func theObjectManagerAnnouncesObjectsAndChanges() async throws {
        let (bus, name) = await bus()
        #expect(await bus.takeSignals().map(\.member) == ["InterfacesAdded"])
        let managed = try await bus.call(path: "/org/example", interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects")
        guard case .dictionary(_, _, let entries) = managed.first else {
            Issue.record("GetManagedObjects returned \(managed)")
            return
        }
        #expect(entries.map(\.key) == [.objectPath(Self.path)])

        name.set("changed")
        await bus.emitPropertiesChanged(Self.path, interface: Self.interfaceName, names: ["Name", "Undeclared"])
        await bus.emitPropertiesChanged(Self.path, interface: Self.interfaceName, names: ["Undeclared"])
        await bus.unexport(Self.path)
        await bus.unexport(Self.path)
        // Outside the manager's subtree: no announcement.
        await bus.export("/elsewhere", interfaces: [DBusConnectionTests.counterInterface(name: name)])
        let signals = await bus.takeSignals()
        #expect(signals.map(\.member) == ["PropertiesChanged", "InterfacesRemoved"])
        #expect(signals.first?.arguments == [.string(Self.interfaceName), .vardict([("Name", .string("changed"))]), .array(elementSignature: "s", [])])
        #expect(signals.last?.arguments == [.objectPath(Self.path), .array(elementSignature: "s", [.string(Self.interfaceName)])])
        #expect(await !bus.isExported(Self.path))
        #expect(await bus.isExported("/elsewhere"))
    }
}
