import BeaconThreads
import Dispatch
import Glibc
import Synchronization

/// The thread that drives one bus connection, and the serial executor of
/// everything that touches it (as swift-nio's `SelectableEventLoop`).
///
/// An actor that declares `nonisolated var unownedExecutor` as this loop's
/// runs on the connection's thread, so it may use the connection's state
/// and libdbus without locks or hops. Work reaches the thread through one
/// mailbox (the only lock here, held for an append); the thread polls the
/// transport's descriptors plus a wake-up pipe, so work never waits for bus
/// traffic (PLATFORM-NOTES: a thread blocked in libdbus holds back messages
/// queued from others).
///
/// Lifecycle: `open` → `closing` (closures refused, the loop finishes its
/// round and shuts the transport down) → `closed` (the thread has ended).
/// Actor jobs cannot be refused: once closed they run on the thread that
/// enqueues them, one at a time, so an actor on this executor still answers
/// (and sees its connection closed) rather than hanging its callers.
public final class DBusEventLoop: SerialExecutor, @unchecked Sendable {
    public enum State: Sendable, Hashable, CustomStringConvertible {
        case open, closing, closed

        public var description: String {
            switch self {
            case .open: "open"
            case .closing: "closing"
            case .closed: "closed"
            }
        }
    }

    enum Work {
        case closure(@Sendable () -> Void)
        case job(UnownedJob)
    }

    private struct Mailbox {
        var state = State.open
        var work: [Work] = []
        /// Whether a byte is already in the wake pipe (one is enough).
        var wakeArmed = false
        /// Whether a thread is running the jobs that came after closing.
        var draining = false
        /// Batches of work the thread has taken (`Progress`).
        var batchesTaken: UInt64 = 0
    }

    /// How far the thread has got, for a watchdog on another thread: work
    /// that stays waiting while `batchesTaken` stands still means the thread
    /// is stuck (in a handler, in libdbus), not idle.
    public struct Progress: Sendable, Equatable {
        public var batchesTaken: UInt64
        public var workWaiting: Bool

        public init(batchesTaken: UInt64, workWaiting: Bool) {
            self.batchesTaken = batchesTaken
            self.workWaiting = workWaiting
        }
    }

    /// What the loop does each round on its thread, given the wake-up
    /// descriptor to include in its poll and whether it may block there.
    typealias Round = (_ wakeDescriptor: Int32, _ mayBlock: Bool) -> Void

    let name: String
    private let mailbox = Mutex(Mailbox())
    /// The thread whose code is isolated to this executor right now: the loop's
    /// thread while it runs, then whichever thread drains jobs after closing.
    private let isolatedThread = Atomic<UInt>(0)
    private let wakeDescriptors: (read: Int32, write: Int32)
    /// Left when the thread ends: `close()` waits on it.
    private let ended = DispatchGroup()

    init(name: String) {
        self.name = name
        var descriptors: [Int32] = [-1, -1]
        if pipe(&descriptors) != 0 { fatalError("cannot create a pipe: errno \(errno)") }
        for descriptor in descriptors {
            _ = fcntl(descriptor, F_SETFL, O_NONBLOCK)
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        }
        wakeDescriptors = (descriptors[0], descriptors[1])
    }

    deinit {
        Glibc.close(wakeDescriptors.read)
        Glibc.close(wakeDescriptors.write)
    }

    // MARK: State

    /// `open`, `closing` or `closed`; any thread.
    public var state: State { mailbox.withLock { $0.state } }

    /// Any thread.
    public var progress: Progress {
        mailbox.withLock { Progress(batchesTaken: $0.batchesTaken, workWaiting: !$0.work.isEmpty) }
    }

    /// Whether the caller runs on this loop (its thread, or the thread
    /// draining jobs after close); any thread.
    public var inEventLoop: Bool { isolatedThread.load(ordering: .acquiring) == UInt(pthread_self()) }

    /// Stops the program if the caller is not on this loop: the check behind
    /// every "runs on the connection's thread" in this module.
    public func preconditionInEventLoop(file: StaticString = #fileID, line: UInt = #line) {
        precondition(inEventLoop, "not on the \(name) thread", file: file, line: line)
    }

    // MARK: Work

    /// Runs `work` on the loop's thread, after the work already handed to it.
    /// Throws at once, without running it, once the loop is closing or closed.
    func execute(_ work: @escaping @Sendable () -> Void) throws(DBusError) {
        let wake = try mailbox.withLock { mailbox throws(DBusError) -> Bool in
            switch mailbox.state {
            case .open:
                mailbox.work.append(.closure(work))
                return Self.arm(&mailbox)
            case .closing, .closed:
                throw DBusError.disconnected("the \(name) connection is \(mailbox.state)")
            }
        }
        if wake { self.wake() }
    }

    /// Runs `work` now if the caller is on the loop, else hands it over;
    /// does nothing once closed (its callers' effects have nowhere to go).
    func run(_ work: @escaping @Sendable () -> Void) {
        if inEventLoop {
            work()
        } else {
            try? execute(work)
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        // The runtime holds this executor unowned, and a job run here may let
        // the last owner go: AddressSanitizer caught the loop freed mid-drain.
        let owner = Unmanaged.passRetained(self)
        defer { owner.release() }
        hand(job)
    }

    private func hand(_ job: UnownedJob) {
        enum Next { case wake, nothing, drain }
        let next = mailbox.withLock { mailbox -> Next in
            mailbox.work.append(.job(job))
            switch mailbox.state {
            case .open, .closing:
                return Self.arm(&mailbox) ? .wake : .nothing
            case .closed:
                guard !mailbox.draining else { return .nothing }
                mailbox.draining = true
                return .drain
            }
        }
        switch next {
        case .wake: wake()
        case .nothing: break
        case .drain: drainAfterClose()
        }
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func checkIsolated() {
        preconditionInEventLoop()
    }

    public func isIsolatingCurrentContext() -> Bool? {
        inEventLoop
    }

    private static func arm(_ mailbox: inout Mailbox) -> Bool {
        defer { mailbox.wakeArmed = true }
        return !mailbox.wakeArmed
    }

    private func wake() {
        var one: UInt8 = 1
        _ = write(wakeDescriptors.write, &one, 1)
    }

    private func run(_ work: [Work]) {
        for item in work {
            switch item {
            case .closure(let closure): closure()
            case .job(let job): job.runSynchronously(on: asUnownedSerialExecutor())
            }
        }
    }

    /// Runs the jobs enqueued after the thread ended, on the enqueuing thread,
    /// until none are left; a job enqueued meanwhile joins the queue.
    private func drainAfterClose() {
        let me = UInt(pthread_self())
        while true {
            let work = mailbox.withLock { mailbox -> [Work] in
                defer { mailbox.work.removeAll() }
                if mailbox.work.isEmpty { mailbox.draining = false }
                return mailbox.work
            }
            guard !work.isEmpty else { return }
            isolatedThread.store(me, ordering: .releasing)
            run(work)
            isolatedThread.store(0, ordering: .releasing)
        }
    }

    // MARK: The thread

    /// Starts the thread: `setUp` once, then `round` until `close()`, then `tearDown`, all on it.
    func start(setUp: @escaping () -> Void, round: @escaping Round, tearDown: @escaping () -> Void) {
        ended.enter()
        let body = ThreadBody { [self] in
            DetachedThread.nameCurrent("dbus-" + name)
            isolatedThread.store(UInt(pthread_self()), ordering: .releasing)
            setUp()
            loop(round)
            tearDown()
            finish()
        }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(body).toOpaque()
        let created = pthread_create(&thread, nil, { context in
            let body = Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue()
            body.run()
            return nil
        }, context)
        guard created == 0 else { fatalError("cannot start the \(name) thread: error \(created)") }
        pthread_detach(thread)
    }

    private func loop(_ round: Round) {
        while true {
            let (work, state) = mailbox.withLock { mailbox in
                defer { mailbox.work.removeAll(); mailbox.wakeArmed = false }
                if !mailbox.work.isEmpty { mailbox.batchesTaken &+= 1 }
                return (mailbox.work, mailbox.state)
            }
            run(work)
            if state != .open { return }
            let idle = mailbox.withLock { $0.work.isEmpty }
            round(wakeDescriptors.read, idle)
        }
    }

    /// Drains the wake-up pipe; the round calls it when poll says it is readable.
    func drainWakeups() {
        var bytes = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &bytes, { read(wakeDescriptors.read, $0.baseAddress, $0.count) }) > 0 {}
    }

    /// The thread's last step: later jobs run on their enqueuers.
    private func finish() {
        let leftover = mailbox.withLock { mailbox -> [Work] in
            mailbox.state = .closed
            mailbox.draining = true
            defer { mailbox.work.removeAll() }
            return mailbox.work
        }
        run(leftover)
        // Before another thread may claim the draining: its claim must not be overwritten.
        isolatedThread.store(0, ordering: .releasing)
        mailbox.withLock { $0.draining = false }
        drainAfterCloseIfNeeded()
        ended.leave()
    }

    /// Jobs enqueued while `finish` ran its leftovers found `draining` set and only queued themselves.
    private func drainAfterCloseIfNeeded() {
        let claim = mailbox.withLock { mailbox -> Bool in
            guard !mailbox.work.isEmpty, !mailbox.draining else { return false }
            mailbox.draining = true
            return true
        }
        if claim { drainAfterClose() }
    }

    // MARK: Closing

    /// Moves `open` to `closing` and, unless called on the loop itself, waits
    /// for the thread to end (a real event, no polling). Safe to call more
    /// than once, from any thread.
    func close() {
        let wake = mailbox.withLock { mailbox -> Bool in
            switch mailbox.state {
            case .open:
                mailbox.state = .closing
                return Self.arm(&mailbox)
            case .closing, .closed:
                return false
            }
        }
        if wake { self.wake() }
        if !inEventLoop { ended.wait() }
    }
}

/// The closure a new thread runs, passed to it through `pthread_create`.
private final class ThreadBody {
    let run: () -> Void

    init(_ run: @escaping () -> Void) {
        self.run = run
    }
}
