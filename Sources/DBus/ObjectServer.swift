/// The objects a connection exports (see `ObjectTree` for the standard
/// interfaces it answers; libdbus itself answers org.freedesktop.DBus.Peer).
///
/// Threading: callable from any thread. The tree lives in the connection's
/// isolation (its thread): on that thread a change applies at once, from
/// another it is handed over and applies in order with everything else
/// sent from there, before any later call or signal. Once the connection
/// is closing, changes are dropped. Method handlers and property getters
/// and setters run on the connection's thread.
public final class ObjectServer: Sendable {
    let core: BusState

    init(core: BusState) {
        self.core = core
    }

    // MARK: Exporting

    /// Makes `path` an ObjectManager for the objects below it (as BlueZ does at `/`).
    ///
    /// Its Introspect lists the nodes of `paths` always, and other nodes
    /// only while something is exported below them: a policy may let anyone
    /// introspect the manager but not read its objects, and then which of
    /// those nodes exist now must not show (a ranged beacon, a client's region).
    public func setObjectManager(at path: String, listingAlways paths: [String] = []) {
        core.run { $0.setObjectManager(at: path, listingAlways: paths) }
    }

    /// Exports an object; announces it with InterfacesAdded if a manager covers it.
    /// `connection` is the one these objects belong to (kept for callers written before they were one).
    public func export(_ path: String, interfaces: [DBusInterface], on connection: DBusConnection) {
        precondition(connection.objects === self, "an ObjectServer exports only on its own connection")
        precondition(DBusNames.isValidObjectPath(path), "invalid object path \(path)")
        core.run { $0.export(path, interfaces: interfaces) }
    }

    /// Removes an object; announces it with InterfacesRemoved.
    public func unexport(_ path: String, on connection: DBusConnection) {
        precondition(connection.objects === self, "an ObjectServer unexports only on its own connection")
        core.run { $0.unexport(path) }
    }

    /// Whether `path` is exported, once the changes handed over before are applied.
    public func isExported(_ path: String) async -> Bool {
        await core.tree.isExported(path)
    }

    /// The exported paths, once the changes handed over before are applied.
    public var exportedPaths: [String] {
        get async { await core.tree.exportedPaths }
    }

    /// Emits PropertiesChanged with the current values of `names`.
    public func propertiesChanged(_ path: String, interface: String, names: [String], on connection: DBusConnection) {
        precondition(connection.objects === self, "an ObjectServer emits only on its own connection")
        core.run { $0.propertiesChanged(path, interface: interface, names: names) }
    }
}

extension DBusConnection {
    /// Exports an object on this connection (see `ObjectServer.export`); any thread.
    public func export(_ path: String, interfaces: [DBusInterface]) {
        objects.export(path, interfaces: interfaces, on: self)
    }

    /// Removes an object (see `ObjectServer.unexport`); any thread.
    public func unexport(_ path: String) {
        objects.unexport(path, on: self)
    }

    /// Emits PropertiesChanged (see `ObjectServer.propertiesChanged`); any thread.
    public func emitPropertiesChanged(_ path: String, interface: String, names: [String]) {
        objects.propertiesChanged(path, interface: interface, names: names, on: self)
    }
}
