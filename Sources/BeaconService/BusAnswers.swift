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
        let built = snapshot.ranged.map { ($0.identity, DBusValue.vardict(Beacond.Beacon($0).properties)) }
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

    /// Answers at once with a confident venue; otherwise fails at once for a
    /// zero timeout, or waits for one — unless the caller wants no answer, or
    /// its client, its user or all together wait too often already
    /// (`ServiceLimits.waitersPerClient`, `waitersPerUser`, `waiters`).
    func requestNearestVenue(_ call: DBusMethodCall, timeout: Duration, limits: ServiceLimits) {
        if let answer = confidentAnswer {
            return call.reply(answer)
        }
        guard timeout > .zero else {
            return call.fail(BeacondError.locationUnknown("no venue is known right now"))
        }
        guard call.expectsReply else { return }  // nobody to answer: holding it would only hold its message
        guard waiters.count(where: { $0.call.sender == call.sender }) < limits.waitersPerClient else {
            return call.fail(BeacondError.busy("this client has \(limits.waitersPerClient) calls waiting for a venue already; wait for their answers"))
        }
        let user: UInt32
        do {
            user = try self.user(of: call)
        } catch {
            return call.fail(error)
        }
        guard waiters.count(where: { $0.user == user }) < limits.waitersPerUser else {
            return call.fail(
                BeacondError.busy("the clients of user \(user) have \(limits.waitersPerUser) calls waiting for a venue already; wait for their answers"))
        }
        guard waiters.count < limits.waiters else {
            return call.fail(BeacondError.busy("\(limits.waiters) calls wait for a venue already; try again later, or read NearestVenue"))
        }
        waiters.append(Waiter(call: call, user: user, deadline: snapshot.serviceTime + timeout))
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

    /// The Unix user `call`'s client runs as (`DBusMethodCall.senderUser`, asked once per client).
    func user(of call: DBusMethodCall) throws(DBusError) -> UInt32 {
        if let user = users[call.sender] { return user }
        let user = try call.senderUser()
        users[call.sender] = user
        return user
    }

    /// A client left: its waiting calls have no one to answer, and its user is not needed again.
    func forget(_ client: String) {
        waiters.removeAll { $0.call.sender == client }
        users[client] = nil
    }
}
