import CDBus
import Foundation
import Synchronization

/// A connection to a message bus, driven by its own thread.
///
/// The thread runs a poll loop over libdbus's watches and timeouts and an
/// eventfd, rather than blocking inside `dbus_connection_read_write_dispatch`,
/// which holds back messages queued from other threads until something
/// arrives (PLATFORM-NOTES). Everything that touches libdbus — sends, calls,
/// replies, exported objects' handlers — runs on that thread: other threads
/// hand it work with `perform`, which never blocks them on the bus.
public final class DBusConnection: @unchecked Sendable {
    public enum Bus: Sendable, Equatable, CustomStringConvertible {
        case system, session
        /// A bus address such as `unix:path=/run/test/bus`.
        case address(String)

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
    }

    let raw: OpaquePointer
    public let uniqueName: String
    public let bus: Bus
    /// A pipe whose write end wakes the loop out of poll.
    private let wakeDescriptors: (read: Int32, write: Int32)
    private let state = Mutex(LoopState())
    private var thread: Thread?
    /// Objects exported on this connection.
    public let objects: ObjectServer

    struct LoopState {
        var watches: [Handle] = []
        var timeouts: [Handle: ContinuousClock.Instant] = [:]
        var work: [@Sendable () -> Void] = []
        var signalHandlers: [UInt64: SignalSubscription] = [:]
        var nextHandlerID: UInt64 = 0
        var running = true
    }

    struct SignalSubscription {
        var sender: String?
        var path: String?
        var interface: String?
        var member: String?
        var handler: @Sendable (DBusSignal) -> Void
    }

    /// Connects, registers with the bus, and starts the connection's thread.
    public static func connect(_ bus: Bus) throws(DBusError) -> DBusConnection {
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
        guard let raw else { throw error.take(or: "cannot connect to the \(bus) bus") }
        dbus_connection_set_exit_on_disconnect(raw, 0)
        let connection = DBusConnection(raw: raw, bus: bus)
        connection.start()
        return connection
    }

    private init(raw: OpaquePointer, bus: Bus) {
        self.raw = raw
        self.bus = bus
        uniqueName = dbus_bus_get_unique_name(raw).map { String(cString: $0) } ?? ""
        var descriptors: [Int32] = [-1, -1]
        if pipe(&descriptors) != 0 { fatalError("cannot create a pipe: \(errno)") }
        for descriptor in descriptors {
            _ = fcntl(descriptor, F_SETFL, O_NONBLOCK)
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        }
        wakeDescriptors = (descriptors[0], descriptors[1])
        objects = ObjectServer()
    }

    deinit {
        Glibc.close(wakeDescriptors.read)
        Glibc.close(wakeDescriptors.write)
    }

    // MARK: Owning a name

    /// Becomes the primary owner of `name`, or fails saying who has it.
    public func requestName(_ name: String) async throws(DBusError) {
        let reply = try await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "RequestName", arguments: [.string(name), .uint32(4 /* DBUS_NAME_FLAG_DO_NOT_QUEUE */)])
        switch reply.first?.integer {
        case 1, 4: return
        case 3:
            throw DBusError("org.freedesktop.DBus.Error.AddressInUse", "the name \(name) is already owned by another process on the \(bus) bus")
        default:
            throw DBusError.failed("could not own \(name) on the \(bus) bus")
        }
    }

    // MARK: Sending

    /// Runs `work` on the connection's thread.
    public func perform(_ work: @escaping @Sendable () -> Void) {
        state.withLock { $0.work.append(work) }
        wake()
    }

    /// Emits a signal from `path`.
    public func emit(path: String, interface: String, member: String, arguments: [DBusValue]) {
        perform { [self] in
            guard let message = dbus_message_new_signal(path, interface, member) else { return }
            defer { dbus_message_unref(message) }
            do {
                try MessageCoder.append(arguments, to: message)
            } catch {
                return
            }
            dbus_connection_send(raw, message, nil)
        }
    }

    /// Calls a method and waits for its reply, without blocking any thread.
    public func call(
        destination: String, path: String, interface: String, member: String, arguments: [DBusValue] = [],
        timeout: Duration = .seconds(25)
    ) async throws(DBusError) -> [DBusValue] {
        let result: Result<[DBusValue], DBusError> = await withCheckedContinuation { continuation in
            perform { [self] in
                guard DBusNames.isValidObjectPath(path),
                    let message = dbus_message_new_method_call(destination, path, interface, member)
                else {
                    continuation.resume(returning: .failure(.invalidArgs("cannot call \(interface).\(member) on '\(path)'")))
                    return
                }
                defer { dbus_message_unref(message) }
                do throws(DBusError) {
                    try MessageCoder.append(arguments, to: message)
                } catch {
                    continuation.resume(returning: .failure(error))
                    return
                }
                var pending: OpaquePointer?
                let milliseconds = Int32(clamping: timeout.milliseconds)
                guard dbus_connection_send_with_reply(raw, message, &pending, milliseconds) != 0, let pending else {
                    continuation.resume(returning: .failure(.failed("the connection to the \(bus) bus is closed")))
                    return
                }
                let box = Unmanaged.passRetained(PendingReply(continuation)).toOpaque()
                dbus_pending_call_set_notify(pending, pendingCallCompleted, box, releasePendingReply)
                dbus_pending_call_unref(pending)
            }
        }
        return try result.get()
    }

    // MARK: Receiving signals

    /// Calls `handler` (on the connection's thread) for every matching signal.
    /// Returns a token for `unsubscribe`.
    @discardableResult
    public func subscribe(
        sender: String? = nil, path: String? = nil, interface: String? = nil, member: String? = nil,
        _ handler: @escaping @Sendable (DBusSignal) -> Void
    ) -> UInt64 {
        var rule = ["type='signal'"]
        if let sender { rule.append("sender='\(sender)'") }
        if let path { rule.append("path='\(path)'") }
        if let interface { rule.append("interface='\(interface)'") }
        if let member { rule.append("member='\(member)'") }
        let id = state.withLock { state in
            state.nextHandlerID += 1
            state.signalHandlers[state.nextHandlerID] = SignalSubscription(
                sender: sender, path: path, interface: interface, member: member, handler: handler)
            return state.nextHandlerID
        }
        let matchRule = rule.joined(separator: ",")
        perform { [self] in dbus_bus_add_match(raw, matchRule, nil) }
        return id
    }

    public func unsubscribe(_ id: UInt64) {
        _ = state.withLock { $0.signalHandlers.removeValue(forKey: id) }
    }

    // MARK: Lifecycle

    /// Stops the thread and closes the connection.
    public func close() {
        perform { [self] in
            dbus_connection_flush(raw)
            state.withLock { $0.running = false }
        }
        while state.withLock({ $0.running }) { usleep(1000) }
        thread = nil
    }

    public var isConnected: Bool { dbus_connection_get_is_connected(raw) != 0 }

    private func start() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        dbus_connection_set_watch_functions(raw, addWatch, removeWatch, toggleWatch, context, nil)
        dbus_connection_set_timeout_functions(raw, addTimeout, removeTimeout, toggleTimeout, context, nil)
        dbus_connection_set_wakeup_main_function(raw, wakeMain, context, nil)
        dbus_connection_add_filter(raw, filterMessage, context, nil)
        var vtable = DBusObjectPathVTable()
        vtable.message_function = handleObjectMessage
        dbus_connection_try_register_fallback(raw, "/", &vtable, context, nil)
        let thread = Thread { [self] in runLoop() }
        thread.name = "dbus-\(bus)"
        self.thread = thread
        thread.start()
    }

    func wake() {
        var one: UInt8 = 1
        _ = write(wakeDescriptors.write, &one, 1)
    }

    private func runLoop() {
        while true {
            let (handles, deadline, work, running) = state.withLock { state -> ([Handle], ContinuousClock.Instant?, [@Sendable () -> Void], Bool) in
                let work = state.work
                state.work.removeAll()
                return (state.watches, state.timeouts.values.min(), work, state.running)
            }
            let watches = handles.map(\.pointer).filter { dbus_watch_get_enabled($0) != 0 }
            for item in work { item() }
            if !running || !state.withLock({ $0.running }) { break }
            while dbus_connection_get_dispatch_status(raw) == DBUS_DISPATCH_DATA_REMAINS {
                dbus_connection_dispatch(raw)
            }
            if !state.withLock({ $0.work.isEmpty }) { continue }
            var descriptors = watches.map { watch -> pollfd in
                let flags = dbus_watch_get_flags(watch)
                var events: Int16 = 0
                if flags & UInt32(DBUS_WATCH_READABLE.rawValue) != 0 { events |= Int16(POLLIN) }
                if flags & UInt32(DBUS_WATCH_WRITABLE.rawValue) != 0 { events |= Int16(POLLOUT) }
                return pollfd(fd: dbus_watch_get_unix_fd(watch), events: events, revents: 0)
            }
            descriptors.append(pollfd(fd: wakeDescriptors.read, events: Int16(POLLIN), revents: 0))
            var waitMilliseconds: Int32 = -1
            if let deadline {
                let remaining = deadline - ContinuousClock.now
                waitMilliseconds = max(0, Int32(clamping: remaining.milliseconds + 1))
            }
            let ready = poll(&descriptors, nfds_t(descriptors.count), waitMilliseconds)
            if ready > 0 {
                for (index, watch) in watches.enumerated() where descriptors[index].revents != 0 {
                    let revents = Int32(descriptors[index].revents)
                    var flags: UInt32 = 0
                    if revents & Int32(POLLIN) != 0 { flags |= UInt32(DBUS_WATCH_READABLE.rawValue) }
                    if revents & Int32(POLLOUT) != 0 { flags |= UInt32(DBUS_WATCH_WRITABLE.rawValue) }
                    if revents & Int32(POLLERR) != 0 { flags |= UInt32(DBUS_WATCH_ERROR.rawValue) }
                    if revents & Int32(POLLHUP) != 0 { flags |= UInt32(DBUS_WATCH_HANGUP.rawValue) }
                    dbus_watch_handle(watch, flags)
                }
                if descriptors[descriptors.count - 1].revents != 0 {
                    var drain = [UInt8](repeating: 0, count: 256)
                    while read(wakeDescriptors.read, &drain, drain.count) > 0 {}
                }
            }
            let now = ContinuousClock.now
            let expired = state.withLock { state in state.timeouts.filter { $0.value <= now }.map(\.key) }
            for timeout in expired {
                let next = now + .milliseconds(Int64(dbus_timeout_get_interval(timeout.pointer)))
                state.withLock { $0.timeouts[timeout] = next }
                dbus_timeout_handle(timeout.pointer)
            }
        }
        dbus_connection_close(raw)
        dbus_connection_unref(raw)
    }

    // MARK: Called from libdbus (on whatever thread), through the C callbacks below

    func watchAdded(_ watch: OpaquePointer) {
        let handle = Handle(pointer: watch)
        state.withLock { $0.watches.append(handle) }
        wake()
    }

    func watchRemoved(_ watch: OpaquePointer) {
        let handle = Handle(pointer: watch)
        state.withLock { $0.watches.removeAll { $0 == handle } }
        wake()
    }

    func timeoutChanged(_ timeout: OpaquePointer, removed: Bool) {
        let handle = Handle(pointer: timeout)
        let deadline: ContinuousClock.Instant? =
            removed || dbus_timeout_get_enabled(timeout) == 0
            ? nil : ContinuousClock.now + .milliseconds(Int64(dbus_timeout_get_interval(timeout)))
        state.withLock { $0.timeouts[handle] = deadline }
        wake()
    }

    /// Hands a signal to the subscriptions it matches. Unicast signals (sent
    /// to this connection by name rather than broadcast) are dropped: any
    /// peer may send one with any sender-looking content, and nothing here
    /// asks for them. The bus driver's signals match only if the bus itself
    /// sent them; another well-known name is matched by the bus through the
    /// subscription's match rule, since a message carries only the owner's
    /// unique name (and a subscriber that cares checks the owner too).
    func dispatchSignal(_ message: OpaquePointer) {
        guard dbus_message_get_destination(message) == nil else { return }
        let signal = DBusSignal(message: message)
        let handlers = state.withLock { state in
            state.signalHandlers.values.filter { subscription in
                (subscription.sender.map { wanted in
                    wanted == signal.sender || (!wanted.hasPrefix(":") && wanted != DBusNames.busDriver)
                } ?? true)
                    && (subscription.path == nil || subscription.path == signal.path)
                    && (subscription.interface == nil || subscription.interface == signal.interface)
                    && (subscription.member == nil || subscription.member == signal.member)
            }.map(\.handler)
        }
        for handler in handlers { handler(signal) }
    }
}

/// A signal as received.
public struct DBusSignal: Sendable {
    public var sender: String
    public var path: String
    public var interface: String
    public var member: String
    public var arguments: [DBusValue]

    init(message: OpaquePointer) {
        sender = dbus_message_get_sender(message).map { String(cString: $0) } ?? ""
        path = dbus_message_get_path(message).map { String(cString: $0) } ?? ""
        interface = dbus_message_get_interface(message).map { String(cString: $0) } ?? ""
        member = dbus_message_get_member(message).map { String(cString: $0) } ?? ""
        arguments = MessageCoder.read(message)
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

/// The continuation of a call waiting for its reply.
final class PendingReply: @unchecked Sendable {
    let continuation: CheckedContinuation<Result<[DBusValue], DBusError>, Never>
    var resumed = false

    init(_ continuation: CheckedContinuation<Result<[DBusValue], DBusError>, Never>) {
        self.continuation = continuation
    }
}

// MARK: C callbacks

private func connection(_ context: UnsafeMutableRawPointer?) -> DBusConnection {
    Unmanaged<DBusConnection>.fromOpaque(context!).takeUnretainedValue()
}

private let addWatch: DBusAddWatchFunction = { watch, context in
    connection(context).watchAdded(watch!)
    return 1
}

private let removeWatch: DBusRemoveWatchFunction = { watch, context in
    connection(context).watchRemoved(watch!)
}

private let toggleWatch: DBusWatchToggledFunction = { _, context in
    connection(context).wake()
}

private let addTimeout: DBusAddTimeoutFunction = { timeout, context in
    connection(context).timeoutChanged(timeout!, removed: false)
    return 1
}

private let removeTimeout: DBusRemoveTimeoutFunction = { timeout, context in
    connection(context).timeoutChanged(timeout!, removed: true)
}

private let toggleTimeout: DBusTimeoutToggledFunction = { timeout, context in
    connection(context).timeoutChanged(timeout!, removed: false)
}

private let wakeMain: DBusWakeupMainFunction = { context in
    connection(context).wake()
}

private let filterMessage: DBusHandleMessageFunction = { _, message, context in
    if let message, dbus_message_get_type(message) == DBUS_MESSAGE_TYPE_SIGNAL {
        connection(context).dispatchSignal(message)
    }
    return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
}

private let handleObjectMessage: DBusObjectPathMessageFunction = { _, message, context in
    guard let message else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
    let owner = connection(context)
    return owner.objects.handle(message, on: owner) ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
}

private let pendingCallCompleted: DBusPendingCallNotifyFunction = { pending, context in
    let box = Unmanaged<PendingReply>.fromOpaque(context!).takeUnretainedValue()
    guard !box.resumed, let pending, let reply = dbus_pending_call_steal_reply(pending) else { return }
    defer { dbus_message_unref(reply) }
    box.resumed = true
    if dbus_message_get_type(reply) == DBUS_MESSAGE_TYPE_ERROR {
        let name = dbus_message_get_error_name(reply).map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
        let text = MessageCoder.read(reply).first?.string ?? name
        box.continuation.resume(returning: .failure(DBusError(name, text)))
    } else {
        box.continuation.resume(returning: .success(MessageCoder.read(reply)))
    }
}

/// A call freed without a reply (the connection closed) still answers its caller.
private let releasePendingReply: DBusFreeFunction = { context in
    let box = Unmanaged<PendingReply>.fromOpaque(context!).takeRetainedValue()
    if !box.resumed {
        box.resumed = true
        box.continuation.resume(returning: .failure(.failed("the connection closed before a reply came")))
    }
}

extension Duration {
    /// Whole milliseconds, for libdbus's and poll's timeouts.
    var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
