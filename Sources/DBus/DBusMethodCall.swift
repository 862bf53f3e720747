import CDBus
import Synchronization

/// A method call received by an exported object. Answer it exactly once,
/// now or later, from any thread; one dropped without an answer fails, so a
/// caller is never left waiting for nothing.
///
/// Threading: handlers receive it on the connection's thread; an answer
/// given there is sent at once, one given elsewhere is handed to that thread.
public final class DBusMethodCall: Sendable {
    public let sender: String
    public let path: String
    public let interface: String
    public let member: String
    public let arguments: [DBusValue]
    /// False when the caller said it wants no reply (NO_REPLY_EXPECTED, as
    /// `dbus-send` without `--print-reply` sends): work that only answers,
    /// such as waiting for a venue, has no one to do it for.
    public let expectsReply: Bool
    /// The caller's arguments held more values than are decoded from a peer
    /// (`MessageCoder.mostValuesFromPeers`): `arguments` is empty, and the
    /// call is refused before any handler sees it.
    let oversized: Bool
    private let responder: Responder
    private let answered = Atomic<Bool>(false)

    /// Where the answer goes.
    enum Responder: Sendable {
        /// To the libdbus message, through its connection's state.
        case bus(Handle, BusState)
        /// To a caller on the in-memory bus.
        case memory(@Sendable (Result<[DBusValue], DBusError>) -> Void)
    }

    /// What a call is answered with.
    enum Answer: Sendable {
        case values([DBusValue])
        case encoded(DBusEncodedReply)
        case failure(DBusError)

        /// As a caller on the in-memory bus receives it.
        var result: Result<[DBusValue], DBusError> {
            switch self {
            case .values(let values): .success(values)
            case .encoded(let encoded): .success(encoded.values)
            case .failure(let error): .failure(error)
            }
        }
    }

    init(message: OpaquePointer, state: BusState) {
        dbus_message_ref(message)
        responder = .bus(Handle(pointer: message), state)
        sender = dbus_message_get_sender(message).map { String(cString: $0) } ?? ""
        path = dbus_message_get_path(message).map { String(cString: $0) } ?? ""
        interface = dbus_message_get_interface(message).map { String(cString: $0) } ?? ""
        member = dbus_message_get_member(message).map { String(cString: $0) } ?? ""
        do {
            arguments = try MessageCoder.read(message, atMost: MessageCoder.mostValuesFromPeers)
            oversized = false
        } catch {
            arguments = []
            oversized = true
        }
        expectsReply = dbus_message_get_no_reply(message) == 0
    }

    init(
        sender: String, path: String, interface: String, member: String, arguments: [DBusValue],
        answer: @escaping @Sendable (Result<[DBusValue], DBusError>) -> Void
    ) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
        expectsReply = true
        oversized = false
        responder = .memory(answer)
    }

    deinit {
        if !answered.load(ordering: .acquiring) {
            send(.failure(.failed("\(member) was not answered")))
        }
        // libdbus counts a message's references atomically: any thread may drop one.
        if case .bus(let message, _) = responder { dbus_message_unref(message.pointer) }
    }

    public func reply(_ values: [DBusValue] = []) {
        answer(.values(values))
    }

    /// Replies with values encoded once for many replies, copying their encoding.
    public func reply(_ encoded: DBusEncodedReply) {
        answer(.encoded(encoded))
    }

    public func fail(_ error: DBusError) {
        answer(.failure(error))
    }

    /// Whether this call has been answered (a deferred reply may race a timeout).
    public var isAnswered: Bool { answered.load(ordering: .acquiring) }

    private func answer(_ result: Answer) {
        guard answered.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            return
        }
        send(result)
    }

    private func send(_ answer: Answer) {
        switch responder {
        case .bus(let message, let state):
            // The D-Bus specification: a call flagged NO_REPLY_EXPECTED gets no reply.
            guard expectsReply else { return }
            state.send(answer, to: message)
        case .memory(let deliver):
            deliver(answer.result)
        }
    }
}

/// A libdbus object (message, watch, timeout) handed between threads. libdbus
/// is initialised for threads, and this binding uses such objects only on the
/// connection's thread (messages' reference counts excepted, which are atomic).
struct Handle: Hashable, @unchecked Sendable {
    let pointer: OpaquePointer
}
