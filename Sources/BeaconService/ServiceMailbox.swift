import BeaconCore
import BeaconSources
import Synchronization

/// The engine owner's inbox, in two queues so that a flood of advertisements
/// never delays a D-Bus request, a reload or the passing of time.
///
/// Advertisements wait in a bounded queue: past `capacity` new ones are
/// dropped and counted (the service logs and publishes the count), so memory
/// stays bounded and the engine never works through a backlog judged against
/// a clock that has moved on. The owner takes everything at once and handles
/// control first, then advertisements, then lets time pass.
final class ServiceMailbox: Sendable {
    enum Control: Sendable {
        case request(ServiceRequest)
        case availability(Bool, reason: String)
        /// What a source tried on its own (re-arming a quiet scan): a log line.
        case note(String)
        /// The source and adapter scanning now (`SourceEvent.opened`).
        case opened(SourceSpec)
        /// A replay reached its end (or where it breaks off): the service goes on answering.
        case sourceEnded(String)
        /// The source cannot scan (no adapter, no permission, no bluetoothd, an unreadable file): the service stops.
        case sourceFailed(SourceError)
        case tick
    }

    struct Batch {
        var control: [Control]
        var advertisements: [SourceEvent]
        /// Advertisements dropped since the service started.
        var dropped: UInt64
    }

    private struct Queues {
        var control: [Control] = []
        var advertisements: [SourceEvent] = []
        var dropped: UInt64 = 0
        /// Requests queued and not yet taken, by caller.
        var requests: [String: Int] = [:]
    }

    let capacity: Int
    private let queues = Mutex(Queues())
    private let wake: AsyncStream<Void>.Continuation
    /// One element whenever something was posted since the last `take()`.
    let wakeups: AsyncStream<Void>

    init(capacity: Int) {
        self.capacity = capacity
        (wakeups, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    func post(_ control: Control) {
        queues.withLock { $0.control.append(control) }
        wake.yield()
    }

    /// Queues a caller's request unless `perCaller` of that caller's wait
    /// already (false: refused, nothing queued); the bus's own always go.
    func post(request: ServiceRequest, perCaller: Int) -> Bool {
        let accepted = queues.withLock { queues in
            if let caller = request.call?.sender {
                guard queues.requests[caller, default: 0] < perCaller else { return false }
                queues.requests[caller, default: 0] += 1
            }
            queues.control.append(.request(request))
            return true
        }
        if accepted { wake.yield() }
        return accepted
    }

    /// A source's event: availability and notes go with control, the rest is bounded.
    func post(_ event: SourceEvent) {
        switch event {
        case .availability(let available, let reason):
            post(.availability(available, reason: reason))
            return
        case .note(let note):
            post(Control.note(note))
            return
        case .opened(let source):
            post(Control.opened(source))
            return
        case .hciEvent, .advertisement:
            break
        }
        let accepted = queues.withLock { queues in
            guard queues.advertisements.count < capacity else {
                queues.dropped += 1
                return false
            }
            queues.advertisements.append(event)
            return true
        }
        if accepted { wake.yield() }
    }

    func take() -> Batch {
        queues.withLock { queues in
            defer {
                queues.control.removeAll(keepingCapacity: true)
                queues.advertisements.removeAll(keepingCapacity: true)
                queues.requests.removeAll(keepingCapacity: true)
            }
            return Batch(control: queues.control, advertisements: queues.advertisements, dropped: queues.dropped)
        }
    }

    func finish() { wake.finish() }
}
