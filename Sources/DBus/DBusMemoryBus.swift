/// A bus in memory, for fast tests of exported objects (as swift-nio's
/// `EmbeddedChannel`): the same `ObjectTree` a `DBusConnection` keeps —
/// dispatch, signature checks, Properties, Introspectable, ObjectManager —
/// with no libdbus, no daemon and no thread. Calls go straight to the tree;
/// signals are recorded, in order, for the test to take.
///
/// Threading: an actor of its own; handlers, property getters and setters
/// run in its isolation (where a connection would run them on its thread),
/// and may answer later from anywhere.
public actor DBusMemoryBus {
    private var tree = ObjectTree()
    private var emitted: [DBusSignal] = []

    public init() {}

    // MARK: Exporting, as on a connection

    public func setObjectManager(at path: String, listingAlways paths: [String] = []) {
        tree.setObjectManager(at: path, listingAlways: paths)
    }

    public func export(_ path: String, interfaces: [DBusInterface]) {
        record(tree.export(path, interfaces: interfaces))
    }

    public func unexport(_ path: String) {
        record(tree.unexport(path))
    }

    public func emitPropertiesChanged(_ path: String, interface: String, names: [String]) {
        record(tree.propertiesChanged(path, interface: interface, names: names))
    }

    public func emit(path: String, interface: String, member: String, arguments: [DBusValue]) {
        record(DBusSignal(path: path, interface: interface, member: member, arguments: arguments))
    }

    public func isExported(_ path: String) -> Bool {
        tree.isExported(path)
    }

    /// The signals emitted since the last take, oldest first.
    public func takeSignals() -> [DBusSignal] {
        defer { emitted.removeAll() }
        return emitted
    }

    private func record(_ signal: DBusSignal?) {
        if let signal { emitted.append(signal) }
    }

    // MARK: Calling

    /// Calls a method as `sender` and waits for its answer (a handler may
    /// keep the call and answer later). Values D-Bus could not carry fail as
    /// they would on a connection; Peer's Ping is answered as libdbus does.
    public func call(
        path: String, interface: String, member: String, arguments: [DBusValue] = [], sender: String = ":1.1"
    ) async throws(DBusError) -> [DBusValue] {
        guard DBusNames.isValidObjectPath(path) else { throw .invalidArgs("cannot call \(interface).\(member) on '\(path)'") }
        try MessageCoder.validate(arguments)
        if interface == ObjectTree.peer {
            guard member == "Ping" else { throw .unknownMethod("\(interface).\(member) is not offered on the in-memory bus") }
            return []
        }
        let tree = tree
        let signature = arguments.map(\.signature).joined()
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<[DBusValue], DBusError>, Never>) in
            tree.dispatch(
                DBusMethodCall(
                    sender: sender, path: path, interface: interface, member: member, arguments: arguments,
                    answer: { continuation.resume(returning: $0) }),
                signature: signature)
        }
        return try result.get()
    }
}
