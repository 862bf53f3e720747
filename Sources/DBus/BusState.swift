import CDBus
import Glibc
import Synchronization

/// Everything a connection keeps: the libdbus connection, its watches and
/// timeouts, the exported objects, the signal subscriptions and the calls
/// awaiting replies. An actor whose executor is the connection's event
/// loop, so all of it lives on that one thread without locks; libdbus's
/// callbacks (which run there, inside dispatch) enter it with `assumeIsolated`.
actor BusState {
    nonisolated let loop: DBusEventLoop
    nonisolated let bus: DBusConnection.Bus
    /// libdbus's connection; nil once shut down, after which nothing touches libdbus.
    private var raw: OpaquePointer?
    private var sources = EventSources()
    private(set) var tree = ObjectTree()
    private var subscriptions: [UInt64: SignalSubscription] = [:]
    private var calls: [ObjectIdentifier: PendingCall] = [:]
    /// Signals are dropped while set (`DBusConnection.withholdSignalsUntilNamed`).
    var withholdsSignals = false
    /// Whether libdbus still has its link to the bus; read from any thread.
    nonisolated let linked = Atomic<Bool>(true)
    /// Bytes waiting in libdbus to be sent while over `DBusConnection.mostUnsent`
    /// (0 otherwise), and signals dropped meanwhile; read from any thread.
    nonisolated let backlog = Atomic<Int>(0)
    nonisolated let signalsDropped = Atomic<Int>(0)
    /// The most bytes seen waiting since the connection last backed up.
    nonisolated let backlogPeak = Atomic<Int>(0)
    /// Set while the bus does not take what this connection sends: nothing
    /// is read or dispatched (no new reply is made) and signals are dropped,
    /// until half of `mostUnsent` is left. The connection's own calls wait
    /// meanwhile, timeouts included: libdbus ends them in dispatch.
    private var backedUp = false

    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    init(raw: OpaquePointer, bus: DBusConnection.Bus) {
        self.raw = raw
        self.bus = bus
        loop = DBusEventLoop(name: bus.description.hasPrefix("unix:") ? "private" : bus.description)
    }

    /// Starts the loop: hooks libdbus to this state on the loop's thread, then runs rounds until closed.
    nonisolated func start() {
        loop.start(
            setUp: { self.assumeIsolated { $0.hookUp() } },
            round: { wake, mayBlock in self.assumeIsolated { $0.round(wakeDescriptor: wake, mayBlock: mayBlock) } },
            tearDown: { self.assumeIsolated { $0.shutDown() } })
    }

    private func hookUp() {
        guard let raw else { return }
        let context = Unmanaged.passUnretained(self).toOpaque()
        dbus_connection_set_watch_functions(raw, addWatch, removeWatch, toggleWatch, context, nil)
        dbus_connection_set_timeout_functions(raw, addTimeout, removeTimeout, toggleTimeout, context, nil)
        dbus_connection_set_wakeup_main_function(raw, wakeMain, context, nil)
        dbus_connection_add_filter(raw, filterMessage, context, nil)
        var vtable = DBusObjectPathVTable()
        vtable.message_function = handleObjectMessage
        dbus_connection_try_register_fallback(raw, "/", &vtable, context, nil)
    }

    // MARK: The loop's round

    /// Dispatches what arrived, polls the enabled watches and the wake-up
    /// pipe (without blocking if `mayBlock` is false: work is waiting), and
    /// handles the ready watches and the expired timeouts, each only if
    /// still registered (see `EventSources`). What they read is dispatched
    /// next round, after the work handed over meanwhile: an object exported
    /// before a call was sent is there when the call is dispatched.
    private func round(wakeDescriptor: Int32, mayBlock: Bool) {
        guard let raw else { return }
        updateBacklog(raw)
        if !backedUp { dispatchAll(raw) }
        if !updateLink(raw) { failWaitingCalls("the \(bus) bus went away before a reply came") }
        let polled = sources.enabledWatches
        // Backed up, the read watch polls for a hang-up only (poll always reports it).
        let readable = Int16(POLLIN)
        var descriptors = polled.map {
            let events = EventSources.pollEvents($0.handle.pointer)
            return pollfd(fd: dbus_watch_get_unix_fd($0.handle.pointer), events: backedUp ? events & ~readable : events, revents: 0)
        }
        descriptors.append(pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0))
        var wait: Int32 = mayBlock ? -1 : 0
        if mayBlock, let deadline = sources.nextDeadline {
            // A millisecond more, so the deadline has passed when poll returns; clamped before, so .max cannot wrap.
            wait = max(0, Int32(clamping: (deadline - ContinuousClock.now).wholeMilliseconds).saturatingIncrement)
        }
        if poll(&descriptors, nfds_t(descriptors.count), wait) > 0 {
            for (entry, descriptor) in zip(polled, descriptors) where descriptor.revents != 0 {
                guard sources.isCurrent(watch: entry) else { continue }
                dbus_watch_handle(entry.handle.pointer, EventSources.watchFlags(descriptor.revents))
            }
            if descriptors[descriptors.count - 1].revents != 0 { loop.drainWakeups() }
        }
        let now = ContinuousClock.now
        for entry in sources.expiredTimeouts(at: now) where sources.rearm(timeout: entry, now: now) {
            dbus_timeout_handle(entry.handle.pointer)
        }
        updateLink(raw)
    }

    /// dbus-daemon stops reading a connection whose messages it still holds
    /// for receivers up to its `max_incoming_bytes` — a client that never
    /// reads its replies fills that — and libdbus's queue of what waits to be
    /// sent has no bound: taking calls on then grows it for as long as the client stays.
    private func updateBacklog(_ raw: OpaquePointer) {
        let unsent = Int(dbus_connection_get_outgoing_size(raw))
        if unsent > DBusConnection.mostUnsent {
            backlogPeak.store(backedUp ? max(unsent, backlogPeak.load(ordering: .relaxed)) : unsent, ordering: .relaxed)
            backedUp = true
        } else if backedUp, unsent <= DBusConnection.mostUnsent / 2 {
            backedUp = false
        }
        backlog.store(backedUp ? unsent : 0, ordering: .releasing)
    }

    /// Records whether libdbus is still linked to the bus (handling a watch may have found it gone).
    @discardableResult
    private func updateLink(_ raw: OpaquePointer) -> Bool {
        let isLinked = dbus_connection_get_is_connected(raw) != 0
        linked.store(isLinked, ordering: .releasing)
        return isLinked
    }

    /// libdbus never notifies the calls pending when the link drops (it
    /// queues their timeout errors as plain messages), so the caller's
    /// continuations are failed here.
    private func failWaitingCalls(_ reason: String) {
        let waiting = calls.values
        calls.removeAll()
        for call in waiting { call.abandon(.disconnected(reason)) }
    }

    private func dispatchAll(_ raw: OpaquePointer) {
        while dbus_connection_get_dispatch_status(raw) == DBUS_DISPATCH_DATA_REMAINS {
            dbus_connection_dispatch(raw)
        }
    }

    /// The loop's last step: sends what is queued (for up to a second: a bus
    /// that stopped reading must not hold the close), fails the calls still
    /// waiting, closes and frees the libdbus connection.
    private func shutDown() {
        guard let raw else { return }
        let deadline = ContinuousClock.now + .seconds(1)
        while dbus_connection_has_messages_to_send(raw) != 0, dbus_connection_get_is_connected(raw) != 0,
            ContinuousClock.now < deadline
        {
            _ = dbus_connection_read_write(raw, 100)
        }
        failWaitingCalls("the connection to the \(bus) bus closed before a reply came")
        dbus_connection_close(raw)
        dbus_connection_unref(raw)
        self.raw = nil
        // Handlers often hold their connection: dropping them breaks that cycle.
        tree = ObjectTree()
        subscriptions.removeAll()
        linked.store(false, ordering: .releasing)
    }

    // MARK: Calls

    /// Sends a method call for `call`, unless it was cancelled first.
    func send(_ call: PendingCall, continuation: PendingCall.Continuation, message build: () throws(DBusError) -> OpaquePointer) {
        guard call.begin(continuation) else { return }
        guard let raw else {
            return call.finish(.failure(.disconnected("the connection to the \(bus) bus is closed")))
        }
        let message: OpaquePointer
        do throws(DBusError) {
            message = try build()
        } catch {
            return call.finish(.failure(error))
        }
        defer { dbus_message_unref(message) }
        var pending: OpaquePointer?
        guard dbus_connection_send_with_reply(raw, message, &pending, call.timeoutMilliseconds) != 0, let pending else {
            return call.finish(.failure(.disconnected("the connection to the \(bus) bus is closed")))
        }
        calls[ObjectIdentifier(call)] = call
        call.attach(pending)
    }

    func complete(_ call: PendingCall, with result: Result<[DBusValue], DBusError>) {
        calls[ObjectIdentifier(call)] = nil
        call.finish(result)
    }

    func cancel(_ call: PendingCall) {
        calls[ObjectIdentifier(call)] = nil
        call.abandon(.cancelled("the call was cancelled before its reply came"))
    }

    // MARK: Sending

    func emit(_ signal: DBusSignal) {
        if backedUp, !withholdsSignals {
            signalsDropped.add(1, ordering: .relaxed)
            return
        }
        guard !withholdsSignals, let raw, let message = dbus_message_new_signal(signal.path, signal.interface, signal.member) else { return }
        defer { dbus_message_unref(message) }
        do throws(DBusError) {
            try MessageCoder.append(signal.arguments, to: message)
        } catch {
            return
        }
        dbus_connection_send(raw, message, nil)
    }

    /// Answers `call` (unless its caller asked for no reply); a reply that
    /// cannot be encoded becomes an error, so the caller still hears.
    private func answer(_ call: Handle, with answer: DBusMethodCall.Answer) {
        guard let raw, dbus_message_get_no_reply(call.pointer) == 0 else { return }
        let reply: OpaquePointer?
        do throws(DBusError) {
            switch answer {
            case .values(let values):
                reply = dbus_message_new_method_return(call.pointer)
                if let reply {
                    do throws(DBusError) {
                        try MessageCoder.append(values, to: reply)
                    } catch {
                        dbus_message_unref(reply)
                        throw error
                    }
                }
            case .encoded(let encoded):
                reply = try encoded.reply(to: call.pointer)
            case .failure(let error):
                reply = dbus_message_new_error(call.pointer, error.name, error.message)
            }
        } catch {
            return self.answer(call, with: .failure(.failed("reply could not be encoded: \(error.message)")))
        }
        guard let reply else { return }
        dbus_connection_send(raw, reply, nil)
        dbus_message_unref(reply)
    }

    /// Answers `call` from any thread: at once on the loop's, else handed to
    /// it with a reference of its own to the message (the call may be gone
    /// by then); dropped once the loop is closing.
    nonisolated func send(_ answer: DBusMethodCall.Answer, to call: Handle) {
        if loop.inEventLoop {
            return assumeIsolated { $0.answer(call, with: answer) }
        }
        dbus_message_ref(call.pointer)
        do {
            try loop.execute {
                self.assumeIsolated { $0.answer(call, with: answer) }
                dbus_message_unref(call.pointer)
            }
        } catch {
            dbus_message_unref(call.pointer)
        }
    }

    /// Runs `body` in this isolation: at once on the loop's thread, else
    /// handed to it; dropped once the loop is closing.
    nonisolated func run(_ body: @escaping @Sendable (isolated BusState) -> Void) {
        loop.run { self.assumeIsolated { body($0) } }
    }

    // MARK: Objects and signals

    func setObjectManager(at path: String, listingAlways paths: [String]) {
        tree.setObjectManager(at: path, listingAlways: paths)
    }

    func export(_ path: String, interfaces: [DBusInterface]) {
        if let added = tree.export(path, interfaces: interfaces) { emit(added) }
    }

    func unexport(_ path: String) {
        if let removed = tree.unexport(path) { emit(removed) }
    }

    func propertiesChanged(_ path: String, interface: String, names: [String]) {
        if let changed = tree.propertiesChanged(path, interface: interface, names: names) { emit(changed) }
    }

    func subscribe(_ id: UInt64, _ subscription: SignalSubscription) {
        subscriptions[id] = subscription
        if let raw { dbus_bus_add_match(raw, subscription.matchRule, nil) }
    }

    func unsubscribe(_ id: UInt64) {
        guard let subscription = subscriptions.removeValue(forKey: id), let raw else { return }
        dbus_bus_remove_match(raw, subscription.matchRule, nil)
    }

    /// Hands a signal to the subscriptions it matches, decoding its
    /// arguments only if one does, and only as far as a peer's bound
    /// (`MessageCoder.mostValuesFromPeers`): one past it is dropped.
    fileprivate func deliver(_ message: OpaquePointer) {
        var signal = DBusSignal(header: message)
        let unicast = dbus_message_get_destination(message) != nil
        let matching = subscriptions.values.filter { $0.matches(signal, unicast: unicast) }
        guard !matching.isEmpty, let arguments = try? MessageCoder.read(message, atMost: MessageCoder.mostValuesFromPeers) else { return }
        signal.arguments = arguments
        for subscription in matching where subscription.matches(arguments: arguments) { subscription.handler(signal) }
    }

    /// A method call to any path; false leaves it to libdbus (Peer, or not a call).
    fileprivate func handleMethodCall(_ message: OpaquePointer) -> Bool {
        guard dbus_message_get_type(message) == DBUS_MESSAGE_TYPE_METHOD_CALL,
            !(dbus_message_get_interface(message).map { String(cString: $0) == ObjectTree.peer } ?? false)
        else { return false }
        let signature = dbus_message_get_signature(message).map { String(cString: $0) } ?? ""
        let call = DBusMethodCall(message: message, state: self)
        // A message's file descriptors stay open for as long as it is held, and
        // a call may be held minutes (a RequestNearestVenue waiting): a caller
        // could fill this process's descriptor table, and lose it its bus
        // connection. No method here takes one; a call with any is refused
        // at once, and freed with them.
        guard dbus_message_contains_unix_fds(message) == 0 else {
            call.fail(.invalidArgs("no method here takes file descriptors; send the call without them"))
            return true
        }
        tree.dispatch(call, signature: signature)
        return true
    }

    fileprivate func watchAdded(_ watch: OpaquePointer) { sources.addWatch(watch) }
    fileprivate func watchRemoved(_ watch: OpaquePointer) { sources.removeWatch(watch) }

    fileprivate func timeoutChanged(_ timeout: OpaquePointer, removed: Bool) {
        sources.setTimeout(timeout, removed: removed, now: .now)
    }
}

// MARK: C callbacks, all on the loop's thread (libdbus is driven only from it)

private func state(_ context: UnsafeMutableRawPointer?) -> BusState {
    Unmanaged<BusState>.fromOpaque(context!).takeUnretainedValue()
}

private let addWatch: DBusAddWatchFunction = { watch, context in
    let watch = Handle(pointer: watch!)
    state(context).assumeIsolated { $0.watchAdded(watch.pointer) }
    return 1
}

private let removeWatch: DBusRemoveWatchFunction = { watch, context in
    let watch = Handle(pointer: watch!)
    state(context).assumeIsolated { $0.watchRemoved(watch.pointer) }
}

/// The next round polls the watches' current flags; nothing to record.
private let toggleWatch: DBusWatchToggledFunction = { _, _ in }

private let addTimeout: DBusAddTimeoutFunction = { timeout, context in
    let timeout = Handle(pointer: timeout!)
    state(context).assumeIsolated { $0.timeoutChanged(timeout.pointer, removed: false) }
    return 1
}

private let removeTimeout: DBusRemoveTimeoutFunction = { timeout, context in
    let timeout = Handle(pointer: timeout!)
    state(context).assumeIsolated { $0.timeoutChanged(timeout.pointer, removed: true) }
}

private let toggleTimeout: DBusTimeoutToggledFunction = { timeout, context in
    let timeout = Handle(pointer: timeout!)
    state(context).assumeIsolated { $0.timeoutChanged(timeout.pointer, removed: false) }
}

/// libdbus wants another round (queued data to dispatch); the loop is on it already.
private let wakeMain: DBusWakeupMainFunction = { _ in }

private let filterMessage: DBusHandleMessageFunction = { _, message, context in
    if let message, dbus_message_get_type(message) == DBUS_MESSAGE_TYPE_SIGNAL {
        let message = Handle(pointer: message)
        state(context).assumeIsolated { $0.deliver(message.pointer) }
    }
    return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
}

private let handleObjectMessage: DBusObjectPathMessageFunction = { _, message, context in
    guard let message = message.map(Handle.init), state(context).assumeIsolated({ $0.handleMethodCall(message.pointer) }) else {
        return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
    }
    return DBUS_HANDLER_RESULT_HANDLED
}

extension Int32 {
    /// One more, or `.max` at `.max`.
    fileprivate var saturatingIncrement: Int32 { self == .max ? .max : self + 1 }
}
