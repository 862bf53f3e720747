import CDBus

/// A call on its way: the caller's continuation and libdbus's pending call.
/// Touched only on the connection's thread (its owner's isolation); it
/// answers its caller exactly once, whichever comes first: the reply, the
/// caller's cancellation, or the connection closing.
final class PendingCall: @unchecked Sendable {
    typealias Continuation = CheckedContinuation<Result<[DBusValue], DBusError>, Never>

    let owner: BusState
    let timeoutMilliseconds: Int32
    private var continuation: Continuation?
    /// The outcome, when it came before the call was even sent (cancelled first).
    private var early: DBusError?
    private var pending: OpaquePointer?
    private var finished = false

    init(owner: BusState, timeout: Duration) {
        self.owner = owner
        // libdbus takes -1 (its default) or 0 and up; a negative timeout is none left.
        timeoutMilliseconds = Int32(clamping: max(0, timeout.wholeMilliseconds))
    }

    /// Takes the caller's continuation; false (and the caller answered) if the call already ended.
    func begin(_ continuation: Continuation) -> Bool {
        owner.loop.preconditionInEventLoop()
        if let early {
            continuation.resume(returning: .failure(early))
            return false
        }
        self.continuation = continuation
        return true
    }

    /// Keeps libdbus's pending call (and the reference `send_with_reply` gave)
    /// until the call ends, so cancelling it never touches a freed one.
    func attach(_ pending: OpaquePointer) {
        self.pending = pending
        let context = Unmanaged.passRetained(self).toOpaque()
        dbus_pending_call_set_notify(pending, pendingCallCompleted, context, releasePendingCall)
    }

    /// Ends the call with `error` before its reply: libdbus forgets it, the caller gets the error.
    func abandon(_ error: DBusError) {
        if let pending { dbus_pending_call_cancel(pending) }
        finish(.failure(error))
    }

    func finish(_ result: Result<[DBusValue], DBusError>) {
        owner.loop.preconditionInEventLoop()
        guard !finished else { return }
        finished = true
        if let pending {
            self.pending = nil
            dbus_pending_call_unref(pending)
        }
        if let continuation {
            self.continuation = nil
            continuation.resume(returning: result)
        } else if case .failure(let error) = result {
            early = error
        }
    }

    /// The reply (or libdbus's own error for a timeout or a lost connection) as a result.
    /// A reply of more than `MessageCoder.mostValuesInReplies` values fails as `DBusError.replyTooLarge`.
    static func result(of reply: OpaquePointer) -> Result<[DBusValue], DBusError> {
        let arguments: [DBusValue]
        do {
            arguments = try MessageCoder.read(reply, atMost: MessageCoder.mostValuesInReplies)
        } catch {
            let sender = dbus_message_get_sender(reply).map { String(cString: $0) } ?? "the peer"
            return .failure(.replyTooLarge("\(sender) answered with more than \(MessageCoder.mostValuesInReplies) values; none were read"))
        }
        guard dbus_message_get_type(reply) == DBUS_MESSAGE_TYPE_ERROR else { return .success(arguments) }
        let name = dbus_message_get_error_name(reply).map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
        return .failure(DBusError(name, arguments.first?.string ?? name))
    }
}

private let pendingCallCompleted: DBusPendingCallNotifyFunction = { pending, context in
    let call = Unmanaged<PendingCall>.fromOpaque(context!).takeUnretainedValue()
    guard let pending, let reply = dbus_pending_call_steal_reply(pending) else { return }
    let result = PendingCall.result(of: reply)
    dbus_message_unref(reply)
    call.owner.assumeIsolated { $0.complete(call, with: result) }
}

/// libdbus frees its pending call once answered or cancelled: drop its reference to ours.
private let releasePendingCall: DBusFreeFunction = { context in
    Unmanaged<PendingCall>.fromOpaque(context!).release()
}
