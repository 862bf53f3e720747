import BeaconCore
import BeaconThreads
import Synchronization

/// `hci[:hciN]`: scans an adapter through a raw HCI socket, on a thread of its
/// own (the socket is read with blocking calls), and keeps scanning across
/// the adapter going away.
///
/// A problem at the first start is an error: beacond refuses to start and
/// says why. Once it has scanned, losing the adapter (unplugged, reset,
/// brought down) is an availability change: the source reopens it every
/// `retryInterval` and says so when it is back.
public struct HCISource: Sendable {
    public typealias Opener = @Sendable (_ adapter: String?) throws(SourceError) -> any HCIChannel

    public var adapter: String?
    public var retryInterval: Duration
    /// How often the adapter's flags are read: `hciconfig down` says nothing on the socket.
    public var statusCheck: Duration
    /// After this long without a report, the scan is re-issued (`SilenceRecovery`).
    public var quietCheck: Duration
    /// How many times at most, until a report arrives again.
    public var recoveryAttempts: Int
    private let open: Opener

    public init(
        adapter: String?, retryInterval: Duration = .seconds(2), statusCheck: Duration = .seconds(1),
        quietCheck: Duration = .seconds(5), recoveryAttempts: Int = 3,
        open: @escaping Opener = { (adapter) throws(SourceError) in try HCISocket(adapter: adapter) }
    ) {
        self.adapter = adapter
        self.retryInterval = retryInterval
        self.statusCheck = statusCheck
        self.quietCheck = quietCheck
        self.recoveryAttempts = recoveryAttempts
        self.open = open
    }

    private enum Output: Sendable {
        case event(SourceEvent)
        case failed(SourceError)
    }

    /// Delivers advertising-report events and availability changes until cancelled;
    /// returns once the scan is stopped and the socket filter restored.
    public func run(_ deliver: (SourceEvent) -> Void) async throws(SourceError) {
        let (outputs, continuation) = AsyncStream<Output>.makeStream(bufferingPolicy: .bufferingNewest(1 << 16))
        let control = ThreadControl()
        DetachedThread.start(name: "beacond-hci") { [self] in
            supervise(control) { continuation.yield($0) }
            continuation.finish()
            control.finish()
        }
        let failure: SourceError? = await withTaskCancellationHandler {
            for await output in outputs {
                switch output {
                case .event(let event): deliver(event)
                case .failed(let error): return error
                }
            }
            return nil
        } onCancel: {
            control.stop()
        }
        control.stop()
        await control.finished()
        if let failure { throw failure }
    }

    private func supervise(_ control: ThreadControl, emit: (Output) -> Void) {
        var started = false
        var reported: String?
        while !control.isStopped {
            do throws(SourceError) {
                // Scanning again: the next outage is said, even if it is the same as the last.
                try scan(try open(adapter), control: control, scanning: { started = true; reported = nil }, emit: emit)
                return
            } catch {
                guard started else {
                    emit(.failed(error))
                    return
                }
                if reported != error.description {
                    reported = error.description
                    emit(.event(.availability(available: false, reason: "\(error); trying again every \(retryInterval.configurationText)")))
                }
                control.wait(retryInterval)
            }
        }
    }

    /// Scans through one opened channel until stopped; throws when the adapter
    /// fails, goes down or is reset (each clears the controller's scan, so the
    /// caller reopens and re-arms once it is back). A scan gone quiet is
    /// re-issued a bounded number of times, each try and its outcome noted.
    private func scan<Channel: HCIChannel>(
        _ channel: Channel, control: ThreadControl, scanning: () -> Void, emit: (Output) -> Void
    ) throws(SourceError) {
        var scanner = HCIScanner(channel: channel)
        defer { scanner.stop() }
        let mode = try scanner.start()
        scanning()
        emit(.event(.opened(.hci(adapter: channel.name))))
        emit(.event(.availability(available: true, reason: "\(channel.name): \(mode)")))
        var recovery = SilenceRecovery(firstAfter: quietCheck, attempts: recoveryAttempts, now: .now)
        var lastChecked = ContinuousClock.now
        while !control.isStopped {
            let (before, othersBefore) = (scanner.mode, scanner.othersScanCommands)
            let event = try scanner.next(timeout: .milliseconds(200))
            // How it scans is the availability's reason (Manager1, systemd's status), not only a log line.
            if let mode = scanner.mode, mode != before { emit(.event(.availability(available: true, reason: "\(channel.name): \(mode)"))) }
            // Another program changed the scan (while we scanned or listened): its silence counts
            // afresh, with every try, or a scan it disabled after the tries were spent stayed off.
            if scanner.othersScanCommands != othersBefore { recovery.restart(at: .now) }
            if let event {
                emit(.event(.hciEvent(event[...], time: ServiceClock.now())))
                if let tries = recovery.heard(at: .now) {
                    emit(.event(.note("\(channel.name): advertisements came back after re-issuing the scan (\(SilenceRecovery.count(tries)))")))
                }
            }
            let now = ContinuousClock.now
            if now - lastChecked >= statusCheck {
                lastChecked = now
                guard channel.isAdapterUp else {
                    throw .unavailable("\(channel.name) went down (`sudo hciconfig \(channel.name) up`, `rfkill list`)")
                }
            }
            switch recovery.step(at: now) {
            case .rearm(let attempt, let attempts, let quiet):
                let before = scanner.mode
                let mode = try scanner.rearm()
                emit(.event(.note(
                    "\(channel.name): no advertising report for \(quiet.configurationText); re-issued the scan "
                        + "(try \(attempt) of \(attempts)): \(mode)")))
                if mode != before { emit(.event(.availability(available: true, reason: "\(channel.name): \(mode)"))) }
            case .giveUp(let attempts, let quiet):
                emit(.event(.note(
                    "\(channel.name): still no advertising report after \(attempts) re-issued scans "
                        + "(\(quiet.configurationText) of quiet); leaving the scan alone until one arrives. Nothing in "
                        + "range, or a deaf radio: `sudo hciconfig \(channel.name) down; sudo hciconfig \(channel.name) up`")))
            case nil:
                break
            }
        }
    }
}

/// Stopping a source's thread from async code, and waiting until it has cleaned up.
final class ThreadControl: Sendable {
    private struct State {
        var stopped = false
        var finished = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    var isStopped: Bool { state.withLock { $0.stopped } }

    func stop() { state.withLock { $0.stopped = true } }

    /// Sleeps for `duration` on the thread, waking early when stopped.
    func wait(_ duration: Duration) {
        let deadline = ContinuousClock.now + duration
        while !isStopped, ContinuousClock.now < deadline {
            DetachedThread.sleep(min(.milliseconds(50), max(.zero, deadline - ContinuousClock.now)))
        }
    }

    /// Called by the thread as its last act.
    func finish() {
        let waiters = state.withLock { state in
            state.finished = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func finished() async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state in
                if !state.finished { state.waiters.append(continuation) }
                return state.finished
            }
            if done { continuation.resume() }
        }
    }
}
