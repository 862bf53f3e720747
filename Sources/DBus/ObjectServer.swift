import CDBus
import Synchronization

/// The objects a connection exports, with the standard interfaces libdbus
/// leaves to its users: Introspectable, Properties (Get, GetAll, Set,
/// PropertiesChanged) and ObjectManager (GetManagedObjects, InterfacesAdded,
/// InterfacesRemoved). libdbus itself answers org.freedesktop.DBus.Peer.
public final class ObjectServer: Sendable {
    private struct Tree {
        var objects: [String: [DBusInterface]] = [:]
        /// The path that implements ObjectManager for everything below it.
        var managerPath: String?
    }

    private let tree = Mutex(Tree())

    static let introspectable = "org.freedesktop.DBus.Introspectable"
    static let properties = "org.freedesktop.DBus.Properties"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"
    static let peer = "org.freedesktop.DBus.Peer"

    init() {}

    // MARK: Exporting

    /// Makes `path` an ObjectManager for the objects below it (as BlueZ does at `/`).
    public func setObjectManager(at path: String) {
        tree.withLock { $0.managerPath = path }
    }

    /// Exports an object; announces it with InterfacesAdded if a manager covers it.
    public func export(_ path: String, interfaces: [DBusInterface], on connection: DBusConnection) {
        precondition(DBusNames.isValidObjectPath(path), "invalid object path \(path)")
        let manager = tree.withLock { tree -> String? in
            tree.objects[path] = interfaces
            return tree.managerPath
        }
        if let manager, Self.isBelow(path, manager) {
            connection.emit(
                path: manager, interface: Self.objectManager, member: "InterfacesAdded",
                arguments: [.objectPath(path), Self.interfacesAndProperties(interfaces)])
        }
    }

    /// Removes an object; announces it with InterfacesRemoved.
    public func unexport(_ path: String, on connection: DBusConnection) {
        let (removed, manager) = tree.withLock { tree in (tree.objects.removeValue(forKey: path), tree.managerPath) }
        if let removed, let manager, Self.isBelow(path, manager) {
            connection.emit(
                path: manager, interface: Self.objectManager, member: "InterfacesRemoved",
                arguments: [.objectPath(path), .array(elementSignature: "s", removed.map { .string($0.name) })])
        }
    }

    public func isExported(_ path: String) -> Bool {
        tree.withLock { $0.objects[path] != nil }
    }

    public var exportedPaths: [String] {
        tree.withLock { Array($0.objects.keys) }
    }

    /// Emits PropertiesChanged with the current values of `names`.
    public func propertiesChanged(_ path: String, interface: String, names: [String], on connection: DBusConnection) {
        guard let declared = tree.withLock({ $0.objects[path]?.first { $0.name == interface } }) else { return }
        let changed = declared.properties.filter { names.contains($0.name) }.map { ($0.name, $0.get()) }
        guard !changed.isEmpty else { return }
        connection.emit(
            path: path, interface: Self.properties, member: "PropertiesChanged",
            arguments: [.string(interface), .vardict(changed), .array(elementSignature: "s", [])])
    }

    // MARK: Dispatch

    /// Handles a method call to any path; false lets libdbus answer (not a method call).
    func handle(_ message: OpaquePointer, on connection: DBusConnection) -> Bool {
        guard dbus_message_get_type(message) == DBUS_MESSAGE_TYPE_METHOD_CALL else { return false }
        let call = DBusMethodCall(message: message, connection: connection)
        let (interfaces, children, manager) = tree.withLock { tree in
            (tree.objects[call.path], Self.children(of: call.path, in: tree.objects.keys), tree.managerPath)
        }
        let isManager = manager == call.path
        let signature = dbus_message_get_signature(message).map { String(cString: $0) } ?? ""
        switch (call.interface, call.member) {
        case (Self.introspectable, "Introspect"), ("", "Introspect"):
            guard interfaces != nil || !children.isEmpty else { return unknownObject(call) }
            call.reply([.string(Self.introspection(interfaces ?? [], children: children, isManager: isManager))])
        case (Self.properties, let member):
            guard let interfaces else { return unknownObject(call) }
            handleProperties(call, member: member, signature: signature, interfaces: interfaces)
        case (Self.objectManager, "GetManagedObjects") where isManager:
            call.reply([managedObjects(below: call.path)])
        case (Self.peer, _):
            return false
        default:
            guard let interfaces else { return unknownObject(call) }
            let candidates = interfaces.filter { call.interface.isEmpty || $0.name == call.interface }
            guard !candidates.isEmpty else {
                call.fail(.unknownInterface("\(call.path) has no interface \(call.interface)"))
                return true
            }
            guard let method = candidates.lazy.compactMap({ $0.methods.first { $0.name == call.member } }).first else {
                call.fail(.unknownMethod("\(call.interface.isEmpty ? "" : call.interface + ".")\(call.member) does not exist on \(call.path)"))
                return true
            }
            guard signature == method.inputSignature else {
                call.fail(
                    .invalidArgs(
                        "\(call.member) takes (\(method.inputSignature)) "
                            + "[\(method.inputs.map(\.name).joined(separator: ", "))], got (\(signature))"))
                return true
            }
            method.handler(call)
        }
        return true
    }

    private func unknownObject(_ call: DBusMethodCall) -> Bool {
        call.fail(.unknownObject("no object at \(call.path)"))
        return true
    }

    private func handleProperties(_ call: DBusMethodCall, member: String, signature: String, interfaces: [DBusInterface]) {
        let expected = ["Get": "ss", "GetAll": "s", "Set": "ssv"]
        guard let wanted = expected[member] else {
            call.fail(.unknownMethod("org.freedesktop.DBus.Properties has no method \(member)"))
            return
        }
        guard signature == wanted else {
            call.fail(.invalidArgs("Properties.\(member) takes (\(wanted)), got (\(signature))"))
            return
        }
        let interfaceName = call.arguments[0].string ?? ""
        guard let interface = interfaces.first(where: { $0.name == interfaceName }) else {
            call.fail(.unknownInterface("\(call.path) has no interface \(interfaceName)"))
            return
        }
        if member == "GetAll" {
            call.reply([.vardict(interface.properties.map { ($0.name, $0.get()) })])
            return
        }
        let name = call.arguments[1].string ?? ""
        guard let property = interface.properties.first(where: { $0.name == name }) else {
            call.fail(.unknownProperty("\(interfaceName) has no property \(name)"))
            return
        }
        if member == "Get" {
            call.reply([.variant(property.get())])
            return
        }
        guard let set = property.set else {
            call.fail(.propertyReadOnly("\(interfaceName).\(name) is read-only"))
            return
        }
        guard case .variant(let value) = call.arguments[2], value.signature == property.signature else {
            call.fail(.invalidArgs("\(interfaceName).\(name) is of type \(property.signature)"))
            return
        }
        do {
            try set(value, call.sender)
            call.reply()
        } catch {
            call.fail(error)
        }
    }

    private func managedObjects(below manager: String) -> DBusValue {
        let objects = tree.withLock { tree in tree.objects.filter { Self.isBelow($0.key, manager) } }
        return .dictionary(
            keySignature: "o", valueSignature: "a{sa{sv}}",
            objects.keys.sorted().map { path in .init(.objectPath(path), Self.interfacesAndProperties(objects[path]!)) })
    }

    // MARK: Helpers

    static func interfacesAndProperties(_ interfaces: [DBusInterface]) -> DBusValue {
        .dictionary(
            keySignature: "s", valueSignature: "a{sv}",
            interfaces.map { interface in
                .init(.string(interface.name), .vardict(interface.properties.map { ($0.name, $0.get()) }))
            })
    }

    static func isBelow(_ path: String, _ ancestor: String) -> Bool {
        path != ancestor && (ancestor == "/" ? path.hasPrefix("/") : path.hasPrefix(ancestor + "/"))
    }

    /// Names of the nodes directly below `path` that lead to exported objects.
    static func children(of path: String, in paths: some Sequence<String>) -> [String] {
        var names = Set<String>()
        for candidate in paths where isBelow(candidate, path) {
            let rest = candidate.dropFirst(path == "/" ? 1 : path.count + 1)
            if let first = rest.split(separator: "/").first { names.insert(String(first)) }
        }
        return names.sorted()
    }

    static func introspection(_ interfaces: [DBusInterface], children: [String], isManager: Bool) -> String {
        var xml = """
            <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
            <node>

            """
        var standard = [introspectableInterface, peerInterface]
        if !interfaces.isEmpty { standard.append(propertiesInterface) }
        if isManager { standard.append(objectManagerInterface) }
        for interface in standard + interfaces { xml += interface.introspectionXML }
        for child in children { xml += "  <node name=\"\(child)\"/>\n" }
        return xml + "</node>\n"
    }

    /// The standard interfaces, declared for introspection (their calls are handled above).
    private static let noHandler: @Sendable (DBusMethodCall) -> Void = { _ in }
    static let introspectableInterface = DBusInterface(
        name: introspectable, methods: [.init("Introspect", outputs: [.init("xml_data", "s")], handler: noHandler)])
    static let peerInterface = DBusInterface(
        name: peer,
        methods: [
            .init("Ping", handler: noHandler),
            .init("GetMachineId", outputs: [.init("machine_uuid", "s")], handler: noHandler),
        ])
    static let propertiesInterface = DBusInterface(
        name: properties,
        methods: [
            .init("Get", inputs: [.init("interface_name", "s"), .init("property_name", "s")], outputs: [.init("value", "v")], handler: noHandler),
            .init("GetAll", inputs: [.init("interface_name", "s")], outputs: [.init("properties", "a{sv}")], handler: noHandler),
            .init("Set", inputs: [.init("interface_name", "s"), .init("property_name", "s"), .init("value", "v")], handler: noHandler),
        ],
        signals: [
            .init("PropertiesChanged", [.init("interface_name", "s"), .init("changed_properties", "a{sv}"), .init("invalidated_properties", "as")])
        ])
    static let objectManagerInterface = DBusInterface(
        name: objectManager,
        methods: [.init("GetManagedObjects", outputs: [.init("objects", "a{oa{sa{sv}}}")], handler: noHandler)],
        signals: [
            .init("InterfacesAdded", [.init("object", "o"), .init("interfaces", "a{sa{sv}}")]),
            .init("InterfacesRemoved", [.init("object", "o"), .init("interfaces", "as")]),
        ])
}

extension DBusConnection {
    /// Exports an object on this connection (see `ObjectServer.export`).
    public func export(_ path: String, interfaces: [DBusInterface]) {
        objects.export(path, interfaces: interfaces, on: self)
    }

    public func unexport(_ path: String) {
        objects.unexport(path, on: self)
    }

    public func emitPropertiesChanged(_ path: String, interface: String, names: [String]) {
        objects.propertiesChanged(path, interface: interface, names: names, on: self)
    }
}
