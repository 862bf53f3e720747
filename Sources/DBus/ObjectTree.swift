/// The objects a connection exports and the rules of the standard
/// interfaces libdbus leaves to its users: Introspectable, Properties (Get,
/// GetAll, Set, PropertiesChanged) and ObjectManager (GetManagedObjects,
/// InterfacesAdded, InterfacesRemoved).
///
/// A plain value with no transport: the libdbus connection and the
/// in-memory bus both keep one in their isolation and hand it calls;
/// changes return the signals to emit, which the owner sends.
struct ObjectTree: Sendable {
    private var objects: [String: [DBusInterface]] = [:]
    /// The path that implements ObjectManager for everything below it.
    private var managerPath: String?
    /// Paths below the manager whose nodes its Introspect lists whether or
    /// not anything is exported there now (`setObjectManager`).
    private var alwaysListed: [String] = []

    static let introspectable = "org.freedesktop.DBus.Introspectable"
    static let properties = "org.freedesktop.DBus.Properties"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"
    static let peer = "org.freedesktop.DBus.Peer"

    // MARK: Exporting

    mutating func setObjectManager(at path: String, listingAlways paths: [String]) {
        managerPath = path
        alwaysListed = paths
    }

    /// Exports an object: InterfacesAdded if a manager covers it.
    mutating func export(_ path: String, interfaces: [DBusInterface]) -> DBusSignal? {
        precondition(DBusNames.isValidObjectPath(path), "invalid object path \(path)")
        objects[path] = interfaces
        guard let manager = managerPath, Self.isBelow(path, manager) else { return nil }
        return DBusSignal(
            path: manager, interface: Self.objectManager, member: "InterfacesAdded",
            arguments: [.objectPath(path), Self.interfacesAndProperties(interfaces)])
    }

    /// Removes an object: InterfacesRemoved if it was exported below a manager.
    mutating func unexport(_ path: String) -> DBusSignal? {
        guard let removed = objects.removeValue(forKey: path), let manager = managerPath, Self.isBelow(path, manager) else {
            return nil
        }
        return DBusSignal(
            path: manager, interface: Self.objectManager, member: "InterfacesRemoved",
            arguments: [.objectPath(path), .array(elementSignature: "s", removed.map { .string($0.name) })])
    }

    func isExported(_ path: String) -> Bool {
        objects[path] != nil
    }

    var exportedPaths: [String] {
        Array(objects.keys)
    }

    /// PropertiesChanged with the current values of `names`, if any of them is declared.
    func propertiesChanged(_ path: String, interface: String, names: [String]) -> DBusSignal? {
        guard let declared = objects[path]?.first(where: { $0.name == interface }) else { return nil }
        let changed = declared.properties.filter { names.contains($0.name) }.map { ($0.name, $0.get()) }
        guard !changed.isEmpty else { return nil }
        return DBusSignal(
            path: path, interface: Self.properties, member: "PropertiesChanged",
            arguments: [.string(interface), .vardict(changed), .array(elementSignature: "s", [])])
    }

    // MARK: Dispatch

    /// Answers a method call (now, or later through the handler that keeps
    /// it), with `signature` the D-Bus signature of its arguments.
    /// org.freedesktop.DBus.Peer is the transport's to answer, not the tree's.
    /// A call whose arguments were too many to read (`DBusMethodCall.oversized`)
    /// is told so once it names a method that exists.
    func dispatch(_ call: DBusMethodCall, signature: String) {
        precondition(call.interface != Self.peer, "Peer is answered by the transport")
        let interfaces = objects[call.path]
        switch (call.interface, call.member) {
        case (Self.introspectable, "Introspect"), ("", "Introspect"):
            let children = call.path == managerPath
                ? Self.children(of: call.path, in: objects.keys + alwaysListed) : Self.children(of: call.path, in: objects.keys)
            // An always-listed node answers even with nothing below it now, so
            // that `busctl tree` and `gdbus introspect --recurse` walk it.
            guard interfaces != nil || !children.isEmpty || alwaysListed.contains(call.path) else { return unknownObject(call) }
            guard !call.oversized else { return oversized(call) }
            guard signature.isEmpty else { return call.fail(.invalidArgs("Introspect takes no arguments, got (\(signature))")) }
            call.reply([.string(Self.introspection(interfaces ?? [], children: children, isManager: managerPath == call.path))])
        case (Self.introspectable, let member):
            call.fail(.unknownMethod("\(Self.introspectable).\(member) does not exist: it has Introspect only"))
        case (Self.properties, let member):
            guard let interfaces else { return unknownObject(call) }
            handleProperties(call, member: member, signature: signature, interfaces: interfaces)
        case (Self.objectManager, "GetManagedObjects") where managerPath == call.path:
            guard !call.oversized else { return oversized(call) }
            guard signature.isEmpty else { return call.fail(.invalidArgs("GetManagedObjects takes no arguments, got (\(signature))")) }
            call.reply([managedObjects(below: call.path)])
        default:
            guard let interfaces else { return unknownObject(call) }
            let candidates = interfaces.filter { call.interface.isEmpty || $0.name == call.interface }
            guard !candidates.isEmpty else {
                return call.fail(.unknownInterface("\(call.path) has no interface \(call.interface)"))
            }
            guard let method = candidates.lazy.compactMap({ $0.methods.first { $0.name == call.member } }).first else {
                return call.fail(.unknownMethod("\(call.interface.isEmpty ? "" : call.interface + ".")\(call.member) does not exist on \(call.path)"))
            }
            guard !call.oversized else { return oversized(call) }
            guard signature == method.inputSignature else {
                return call.fail(
                    .invalidArgs(
                        "\(call.member) takes (\(method.inputSignature)) "
                            + "[\(method.inputs.map(\.name).joined(separator: ", "))], got (\(signature))"))
            }
            method.handler(call)
        }
    }

    private func oversized(_ call: DBusMethodCall) {
        call.fail(.invalidArgs("the arguments hold more than \(MessageCoder.mostValuesFromPeers) values, more than any call here takes"))
    }

    private func unknownObject(_ call: DBusMethodCall) {
        call.fail(.unknownObject("no object at \(call.path)"))
    }

    private func handleProperties(_ call: DBusMethodCall, member: String, signature: String, interfaces: [DBusInterface]) {
        let expected = ["Get": "ss", "GetAll": "s", "Set": "ssv"]
        guard let wanted = expected[member] else {
            return call.fail(.unknownMethod("org.freedesktop.DBus.Properties has no method \(member)"))
        }
        guard !call.oversized else { return oversized(call) }
        guard signature == wanted else {
            return call.fail(.invalidArgs("Properties.\(member) takes (\(wanted)), got (\(signature))"))
        }
        // An empty interface name means any of the object's (the D-Bus
        // specification allows it, as for method calls): the first that has the property.
        let interfaceName = call.arguments[0].string ?? ""
        let candidates = interfaceName.isEmpty ? interfaces : interfaces.filter { $0.name == interfaceName }
        guard !candidates.isEmpty else {
            return call.fail(.unknownInterface("\(call.path) has no interface \(interfaceName)"))
        }
        if member == "GetAll" {
            return call.reply([.vardict(candidates.flatMap { interface in interface.properties.map { ($0.name, $0.get()) } })])
        }
        let name = call.arguments[1].string ?? ""
        guard let (interface, property) = candidates.lazy.compactMap({ interface in
            interface.properties.first { $0.name == name }.map { (interface, $0) }
        }).first else {
            return call.fail(.unknownProperty("\(interfaceName.isEmpty ? call.path : interfaceName) has no property \(name)"))
        }
        if member == "Get" {
            return call.reply([.variant(property.get())])
        }
        guard let set = property.set else {
            return call.fail(.propertyReadOnly("\(interface.name).\(name) is read-only"))
        }
        guard case .variant(let value) = call.arguments[2], value.signature == property.signature else {
            return call.fail(.invalidArgs("\(interface.name).\(name) is of type \(property.signature)"))
        }
        do {
            try set(value, call.sender)
            call.reply()
        } catch {
            call.fail(error)
        }
    }

    private func managedObjects(below manager: String) -> DBusValue {
        .dictionary(
            keySignature: "o", valueSignature: "a{sa{sv}}",
            objects.keys.filter { Self.isBelow($0, manager) }.sorted().map { path in
                .init(.objectPath(path), Self.interfacesAndProperties(objects[path] ?? []))
            })
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
