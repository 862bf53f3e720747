import BeaconThreads
import CDBus
import Synchronization

/// A connection to a message bus, driven by its own thread.
///
/// The thread (a `DBusEventLoop`) runs a poll loop over libdbus's watches
/// and timeouts and a wake-up pipe, rather than blocking inside
/// `dbus_connection_read_write_dispatch`, which holds back messages queued
/// from other threads until something arrives (PLATFORM-NOTES). Every
/// libdbus call happens on that thread, in the isolation of the actor that
/// keeps the connection's state (`BusState`): other threads hand it work,
/// which never blocks them on the bus. An actor of the caller's may run on
/// the same thread by taking `executor` as its `unownedExecutor`.
///
/// Lifecycle: `open` → `closing` → `closed` (`state`). After `close()`,
/// calls and `execute` fail at once with `DBusError.disconnected`, and calls
/// still waiting for a reply fail with it too.
public final class DBusConnection: Sendable {
    public enum Bus: Sendable, Equatable, CustomStringConvertible {
        case system, session
        /// A bus address such as `unix:path=/run/test/bus`.
        case address(String)

        /// What to check when the bus cannot be reached, for a person reading the error.
        public var whatToCheck: String {
            switch self {
            case .system: "is D-Bus running? (sudo systemctl start dbus)"
            case .session: "is there a session bus? (outside a desktop session DBUS_SESSION_BUS_ADDRESS is unset: run under dbus-run-session, or give --bus unix:path=…)"
            case .address: "is a bus listening there? (--bus takes system, session or an address like unix:path=/run/dbus/system_bus_socket)"
            }
        }

        /// `system`, `session`, or an address, as `--bus` takes it.
        public init(argument: String) {
            switch argument {
            case "system": self = .system
            case "session": self = .session
            default: self = .address(argument)
            }
        }

        public var description: String {
            switch self {
            case .system: "system"
            case .session: "session"
            case .address(let address): address
            }
        }

        /// How a message names it: "the system bus", "the bus at unix:path=…".
        public var phrase: String {
            switch self {
            case .system, .session: "the \(self) bus"
            case .address(let address): "the bus at \(address)"
            }
        }
    }

    public let uniqueName: String
    public let bus: Bus
    /// Objects exported on this connection.
    public let objects: ObjectServer
    let core: BusState
    private let lastSubscription = Atomic<UInt64>(0)

    /// Connects, registers with the bus, and starts the connection's thread.
    ///
    /// libdbus blocks while it connects, authenticates and waits for the
    /// bus's answer to Hello — for good on a socket that accepts and never
    /// answers (its handshake has no timeout; seen 2026-11-28) — so that
    /// happens on a thread of its own, not on one of Swift concurrency's few.
    ///
    /// Cancelling the calling task ends the wait at once (a SIGTERM must not
    /// wait for a bus that may never answer); a connection the thread makes
    /// after that is closed. The thread itself stays in libdbus until the
    /// bus answers or closes the socket (one thread and descriptor each, left
    /// to a process that is stopping).
    public static func connect(_ bus: Bus) async throws(DBusError) -> DBusConnection {
        let handoff = ConnectHandoff()
        let connected = await withTaskCancellationHandler {
            await withCheckedContinuation { (done: ConnectHandoff.Continuation) in
                guard handoff.wait(done) else { return }
                DetachedThread.start(name: "dbus-connect") {
                    handoff.deliver(Result { () throws(DBusError) in try connectBlocking(bus) })
                }
            }
        } onCancel: {
            handoff.deliver(.failure(.cancelled("stopped while connecting to \(bus.phrase)")))
        }
        return try connected.get()
    }

    /// The one answer to a `connect`: the thread's, or the cancellation's, whichever comes first.
    private final class ConnectHandoff: Sendable {
        typealias Continuation = CheckedContinuation<Result<DBusConnection, DBusError>, Never>
        private enum State {
            case idle
            case waiting(Continuation)
            case answered
        }
        private let state = Mutex(State.idle)

        /// False when the answer came first (cancelled before the wait began): it has resumed `done`.
        func wait(_ done: Continuation) -> Bool {
            let early = state.withLock { state -> Bool in
                guard case .answered = state else {
                    state = .waiting(done)
                    return false
                }
                return true
            }
            if early { done.resume(returning: .failure(.cancelled("stopped before connecting"))) }
            return !early
        }

        func deliver(_ result: Result<DBusConnection, DBusError>) {
            let waiting = state.withLock { state -> Continuation? in
                defer { state = .answered }
                guard case .waiting(let done) = state else { return nil }
                return done
            }
            guard let done = waiting else {
                // Too late: the caller has gone on without this connection.
                if case .success(let connection) = result { connection.close() }
                return
            }
            done.resume(returning: result)
        }
    }

    private static func connectBlocking(_ bus: Bus) throws(DBusError) -> DBusConnection {
        dbus_threads_init_default()
        var error = DBusErrorStorage()
        let raw: OpaquePointer?
        switch bus {
        case .system: raw = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error.raw)
        case .session: raw = dbus_bus_get_private(DBUS_BUS_SESSION, &error.raw)
        case .address(let address):
            let opened = dbus_connection_open_private(address, &error.raw)
            if let opened, dbus_bus_register(opened, &error.raw) == 0 {
                dbus_connection_close(opened)
                dbus_connection_unref(opened)
                throw error.take(or: "cannot register with the bus at \(address)")
            }
            raw = opened
        }
        guard let raw else { throw error.take(or: "cannot connect to \(bus.phrase)") }
        dbus_connection_set_exit_on_disconnect(raw, 0)
        // Read before the thread starts: from then on only the thread touches libdbus.
        let uniqueName = dbus_bus_get_unique_name(raw).map { String(cString: $0) } ?? ""
        let connection = DBusConnection(core: BusState(raw: raw, bus: bus), uniqueName: uniqueName)
        connection.core.start()
        return connection
    }

    private init(core: BusState, uniqueName: String) {
        self.core = core
        self.uniqueName = uniqueName
        bus = core.bus
        objects = ObjectServer(core: core)
    }

    /// A connection nobody holds any more closes (its thread and socket would
    /// otherwise live on). Its handlers must not hold it for this to happen.
    deinit {
        core.loop.close()
    }

    /// The serial executor of the connection's thread; any thread.
    public var executor: DBusEventLoop { core.loop }

    /// `open`, `closing` or `closed`; any thread.
    public var state: DBusEventLoop.State { core.loop.state }

    /// Open, and libdbus still linked to the bus (false once the bus went away); any thread.
    public var isConnected: Bool { state == .open && core.linked.load(ordering: .acquiring) }

    /// The most bytes let wait to be sent before the connection stops taking
    /// calls and drops signals: a publication is kilobytes, so only a bus
    /// that has stopped reading (a client that never reads its replies, on
    /// dbus-daemon) gets there, and beacond's memory stays bounded meanwhile.
    public static let mostUnsent = 4 << 20

    /// Bytes waiting to be sent while the bus does not take them (over
    /// `mostUnsent`, until half of it is left); 0 otherwise. Any thread.
    public var unsentBacklog: Int { core.backlog.load(ordering: .acquiring) }

    /// The most bytes that waited to be sent since the connection last backed up. Any thread.
    public var unsentBacklogPeak: Int { core.backlogPeak.load(ordering: .relaxed) }

    /// Signals dropped while backed up, since the connection opened. Any thread.
    public var signalsDropped: Int { core.signalsDropped.load(ordering: .relaxed) }

    // MARK: Owning a name

    /// Sends no signal until `requestName` has made this connection a name's
    /// owner, so that a service can export its objects first: its broadcasts
    /// before then are not its name's, and a bus policy's rules for that name
    /// (`deny receive_sender`) keep them from no one.
    public func withholdSignalsUntilNamed() {
        core.run { $0.withholdsSignals = true }
    }

    /// Becomes the primary owner of `name`, or fails saying who has it.
    public func requestName(_ name: String) async throws(DBusError) {
        let reply = try await call(
            destination: DBusNames.busDriver, path: DBusNames.busDriverPath, interface: DBusNames.busDriver,
            member: "RequestName", arguments: [.string(name), .uint32(4 /* DBUS_NAME_FLAG_DO_NOT_QUEUE */)])
        switch reply.first?.integer {
        case 1, 4:
            core.run { $0.withholdsSignals = false }
            return
        case 3:
            throw DBusError("org.freedesktop.DBus.Error.AddressInUse", "the name \(name) is already owned by another process on the \(bus) bus")
        default:
            throw DBusError.failed("could not own \(name) on the \(bus) bus")
        }
    }

    /// The Unix user the connection named `name` runs as, as the bus says
    /// (GetConnectionUnixUser): what a bound per user counts by, since one
    /// user may open many connections.
    public func unixUser(of name: String) async throws(DBusError) -> UInt32 {
        let reply = try await call(
            destination: DBusNames.busDriver, path: DBusNames.busDriverPath, interface: DBusNames.busDriver,
            member: "GetConnectionUnixUser", arguments: [.string(name)])
        guard let user = reply.first?.integer.flatMap(UInt32.init(exactly:)) else {
            throw DBusError.failed("the \(bus) bus did not say which user \(name) runs as")
        }
        return user
    }

    // MARK: Work on the connection's thread

    /// Runs `work` on the connection's thread, after what was handed to it
    /// before; throws `disconnected` at once, without running it, once closing.
    public func execute(_ work: @escaping @Sendable () -> Void) throws(DBusError) {
        try core.loop.execute(work)
    }

    /// Runs `work` on the connection's thread as exports and signals run:
    /// at once when called there, else handed over in order with them, so
    /// state it sets is in place before the signals sent after it. Dropped
    /// once closing (for callers that have nothing to do then).
    public func perform(_ work: @escaping @Sendable () -> Void) {
        core.loop.run(work)
    }

    // MARK: Sending

    /// Emits a signal from `path`; any thread (sent at once from the connection's
    /// own, else in order with other work). Dropped once closing, or if a value
    /// cannot be carried.
    public func emit(path: String, interface: String, member: String, arguments: [DBusValue]) {
        let signal = DBusSignal(path: path, interface: interface, member: member, arguments: arguments)
        core.run { $0.emit(signal) }
    }

    /// Calls a method and waits for its reply, without blocking any thread.
    ///
    /// Fails at once with `DBusError.disconnected` once the connection is
    /// closing, and with it when the connection closes before the reply; if
    /// the calling task is cancelled, libdbus forgets the call and this
    /// throws `DBusError.cancelled` promptly.
    public func call(
        destination: String, path: String, interface: String, member: String, arguments: [DBusValue] = [],
        timeout: Duration = .seconds(25)
    ) async throws(DBusError) -> [DBusValue] {
        if Task.isCancelled { throw .cancelled("the calling task was cancelled before \(interface).\(member) was sent") }
        let core = core
        let pending = PendingCall(owner: core, timeout: timeout)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: PendingCall.Continuation) in
                do throws(DBusError) {
                    try core.loop.execute {
                        core.assumeIsolated { core in
                            core.send(pending, continuation: continuation) { () throws(DBusError) -> OpaquePointer in
                                try Self.methodCall(destination: destination, path: path, interface: interface, member: member, arguments: arguments)
                            }
                        }
                    }
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        } onCancel: {
            // If closing, this is dropped: closing fails the call itself.
            core.run { $0.cancel(pending) }
        }
        return try result.get()
    }

    /// A method call message, or why it cannot be one.
    private static func methodCall(
        destination: String, path: String, interface: String, member: String, arguments: [DBusValue]
    ) throws(DBusError) -> OpaquePointer {
        guard DBusNames.isValidObjectPath(path), let message = dbus_message_new_method_call(destination, path, interface, member) else {
            throw .invalidArgs("cannot call \(interface).\(member) on '\(path)'")
        }
        do throws(DBusError) {
            try MessageCoder.append(arguments, to: message)
        } catch {
            dbus_message_unref(message)
            throw error
        }
        return message
    }

    // MARK: Receiving signals

    /// Calls `handler` (on the connection's thread) for every matching signal;
    /// any thread. Returns a token for `unsubscribe`.
    @discardableResult
    public func subscribe(
        sender: String? = nil, path: String? = nil, interface: String? = nil, member: String? = nil, arg0: String? = nil,
        _ handler: @escaping @Sendable (DBusSignal) -> Void
    ) -> UInt64 {
        let id = lastSubscription.add(1, ordering: .relaxed).newValue
        let subscription = SignalSubscription(
            sender: sender, path: path, interface: interface, member: member, arg0: arg0, handler: handler)
        core.run { $0.subscribe(id, subscription) }
        return id
    }

    /// Ends a subscription and removes its match rule; any thread.
    public func unsubscribe(_ id: UInt64) {
        core.run { $0.unsubscribe(id) }
    }

    // MARK: Lifecycle

    /// Closes the connection: what was handed over before is still done and
    /// sent, calls awaiting a reply fail, libdbus's connection is freed.
    /// From another thread, returns once the connection's thread has ended
    /// (waiting on that event, typically well under a millisecond); from the
    /// connection's own thread (a handler), returns at once and the
    /// connection closes after the handler. Idempotent.
    public func close() {
        core.loop.close()
    }
}

/// libdbus's `DBusError`, set by calls that fail.
struct DBusErrorStorage {
    var raw = CDBus.DBusError()

    init() {
        dbus_error_init(&raw)
    }

    mutating func take(or fallback: String) -> DBusError {
        defer { dbus_error_free(&raw) }
        guard dbus_error_is_set(&raw) != 0 else { return .failed(fallback) }
        let name = raw.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
        let message = raw.message.map { String(cString: $0) } ?? fallback
        return DBusError(name, "\(fallback): \(message)")
    }
}

extension Duration {
    /// Whole milliseconds, for libdbus's and poll's timeouts and D-Bus's
    /// millisecond arguments; saturating, so a caller's `.seconds(.max)`
    /// is "never" rather than a trap.
    public var wholeMilliseconds: Int64 {
        let (product, overflow) = components.seconds.multipliedReportingOverflow(by: 1000)
        let (sum, carried) = product.addingReportingOverflow(components.attoseconds / 1_000_000_000_000_000)
        guard !overflow, !carried else { return components.seconds < 0 ? .min : .max }
        return sum
    }
}
