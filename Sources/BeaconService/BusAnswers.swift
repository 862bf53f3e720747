import BeaconCore
import BeacondAPI
import BeacondBus
import DBus

/// What beacond's reads are answered from: the engine's last published
/// snapshot and the answers read most, built once per publication instead of
/// once per call.
///
/// Isolated to the connection's executor: the method handlers and property
/// getters run on the connection's thread, so they read it with no lock and
/// no hop (`assumeIsolated`). Each publication is handed over in the same
/// step on that thread as the objects and signals it causes, before them, so
/// a client that heard a signal reads what it announced, and no answer names
/// an object that is not exported yet (`BusService.publish`).
actor BusAnswers {
    /// One publication, built by the engine's owner, off the connection's thread.
    struct Publication: Sendable {
        var snapshot: ServiceSnapshot
        /// GetNearestVenue's answer, the venue's `a{sv}` encoded once for
        /// every reply until the next publication; nil when there is no venue.
        var nearest: DBusEncodedReply?
        /// Manager1's properties.
        var manager: [(String, DBusValue)]
    }

    /// A RequestNearestVenue call waiting for a venue.
    private struct Waiter {
        var call: DBusMethodCall
        /// The Unix user its caller runs as, for the bound per user.
        var user: UInt32
        var deadline: Timestamp
    }

    nonisolated let executor: DBusEventLoop
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    private(set) var publication: Publication
    /// GetRangedBeacons' entries, built by the first call after a publication
    /// (the engine publishes five times a second; most are never asked for them).
    private var ranged: [(identity: BeaconIdentity, value: DBusValue)]?
    private var waiters: [Waiter] = []
    /// The Unix user of each client asked so far, until it leaves the bus:
    /// one round trip to the bus per client, not one per call.
    private var users: [String: UInt32] = [:]
    /// A call waiting for its client's user, and what to do with it then.
    typealias UserWaiter = (call: DBusMethodCall, then: @Sendable (UInt32) -> Void)
    /// Calls waiting for the bus to say their client's user, by client.
    private var lookups: [String: [UserWaiter]] = [:]
    /// What each Venue1 and Beacon1 object serves, by path: the values its
    /// last signal announced, set in the step that sends it (`BusService.publish`).
    private(set) var served: [String: [(String, DBusValue)]] = [:]

    init(_ publication: Publication, executor: DBusEventLoop) {
        self.publication = publication
        self.executor = executor
    }

    var snapshot: ServiceSnapshot { publication.snapshot }

    func apply(_ publication: Publication) {
        self.publication = publication
        ranged = nil
    }

    func serve(_ path: String, _ values: [(String, DBusValue)]?) {
        served[path] = values
    }

    /// The ranged beacons, nearest first, each as its `a{sv}`.
    func rangedBeacons() -> [(identity: BeaconIdentity, value: DBusValue)] {
        if let ranged { return ranged }
        let built = snapshot.ranged.map { ($0.identity, DBusValue.vardict(Beacond.Beacon($0, in: snapshot).properties)) }
        ranged = built
        return built
    }

    // MARK: RequestNearestVenue

    /// GetNearestVenue's answer if it is confident (SPEC: RequestNearestVenue
    /// waits for one): a venue ranged in a known proximity, not the preferred
    /// venue standing in for one.
    private var confidentAnswer: DBusEncodedReply? {
        guard let nearest = snapshot.nearest, nearest.source == .ranging, nearest.proximity != .unknown else { return nil }
        return publication.nearest
    }

    /// Answers at once with a confident venue, or fails at once for a zero
    /// timeout; otherwise the deadline the call should wait until (for its
    /// client's user, then `wait`), timed from its arrival on the service
    /// clock (not from the last publication, which a stalled main loop may
    /// have made long ago). A call that wants no answer is dropped: holding
    /// it would only hold its message.
    func deadlineToWait(_ call: DBusMethodCall, timeout: Duration, arrived: Timestamp) -> Timestamp? {
        if let answer = confidentAnswer {
            call.reply(answer)
            return nil
        }
        guard timeout > .zero else {
            call.fail(BeacondError.locationUnknown("no venue is known right now"))
            return nil
        }
        return call.expectsReply ? arrived + timeout : nil
    }

    /// Waits for a venue, unless the call's client, its user or all
    /// together wait too often already (`ServiceLimits.waitersPerClient`,
    /// `waitersPerUser`, `waiters`); a venue that came meanwhile answers it.
    func wait(_ call: DBusMethodCall, user: UInt32, deadline: Timestamp, limits: ServiceLimits) {
        if let answer = confidentAnswer {
            return call.reply(answer)
        }
        guard waiters.count(where: { $0.call.sender == call.sender }) < limits.waitersPerClient else {
            return call.fail(BeacondError.busy("this client has \(limits.waitersPerClient) calls waiting for a venue already; wait for their answers"))
        }
        guard waiters.count(where: { $0.user == user }) < limits.waitersPerUser else {
            return call.fail(
                BeacondError.busy("the clients of user \(user) have \(limits.waitersPerUser) calls waiting for a venue already; wait for their answers"))
        }
        guard waiters.count < limits.waiters else {
            return call.fail(BeacondError.busy("\(limits.waiters) calls wait for a venue already; try again later, or read NearestVenue"))
        }
        waiters.append(Waiter(call: call, user: user, deadline: deadline))
    }

    /// Answers the waiting calls once there is a confident venue; fails those past their deadline.
    func answerWaiters() {
        if let answer = confidentAnswer {
            for waiter in waiters { waiter.call.reply(answer) }
            waiters.removeAll()
            return
        }
        let now = snapshot.serviceTime
        for waiter in waiters where waiter.deadline <= now {
            waiter.call.fail(BeacondError.locationUnknown("no venue could be determined within the timeout"))
        }
        waiters.removeAll { $0.deadline <= now }
    }

    // MARK: Callers' users

    /// What `user(of:then:limit:)` found.
    enum UserLookup {
        /// Known: `then` was not kept; call it.
        case known(UInt32)
        /// Not known and not yet asked: `then` is kept; ask the bus, then `userAnswered`.
        case ask
        /// Asked already: `then` is kept, behind the client's earlier calls.
        case queued
        /// Asked already, and the client has `limit` calls waiting for the answer.
        case refused
    }

    /// The Unix user of `call`'s client, or a place in line for it: the
    /// client's calls that need it wait for the bus's answer in the order
    /// they came, so its requests reach the engine in order.
    func user(of call: DBusMethodCall, then: @escaping @Sendable (UInt32) -> Void, limit: Int) -> UserLookup {
        if let user = users[call.sender] { return .known(user) }
        let waiting = lookups[call.sender]?.count
        guard waiting ?? 0 < limit else { return .refused }
        lookups[call.sender, default: []].append((call, then))
        return waiting == nil ? .ask : .queued
    }

    /// The bus answered which user `client` runs as: kept (unless the
    /// client left meanwhile), and the calls that waited for it, in order.
    func userAnswered(_ client: String, _ answer: Result<UInt32, DBusError>) -> [UserWaiter] {
        guard let waiting = lookups.removeValue(forKey: client) else { return [] }
        if case .success(let user) = answer { users[client] = user }
        return waiting
    }

    /// Why beacond answers nothing more, once it stops: then every call is refused with it.
    private(set) var stopping: BeacondError?

    /// Refuses the calls waiting for a venue or for their client's user
    /// (`BusService` refuses every call from now on, by `stopping`): callers
    /// learn beacond is stopping, not the bus's NoReply when it goes.
    func stop(_ refusal: BeacondError) {
        stopping = refusal
        for waiter in waiters { waiter.call.fail(refusal) }
        waiters.removeAll()
        for waiting in lookups.values.joined() { waiting.call.fail(refusal) }
        lookups.removeAll()
    }

    /// A client left: its waiting calls have no one to answer, and its user is not needed again.
    func forget(_ client: String) {
        waiters.removeAll { $0.call.sender == client }
        users[client] = nil
        lookups[client] = nil
    }
}
