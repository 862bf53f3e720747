/// How long to wait before the next connection attempt: doubling from
/// `initial` up to `maximum`, each delay drawn from its upper half (jitter),
/// so a fleet that lost the broker together does not return together.
public struct ReconnectBackoff: Sendable, Equatable {
    public var initial: Duration
    public var maximum: Duration
    /// Failed attempts, and connections that did not last, since a connection last lasted.
    public private(set) var failures = 0

    public init(initial: Duration = .seconds(1), maximum: Duration = .seconds(60)) {
        self.initial = initial
        self.maximum = maximum
    }

    /// The delay after one more failure; `random` is uniform in 0..<1 (injected, so tests choose it).
    public mutating func nextDelay(random: Double) -> Duration {
        let ceiling = min(maximum.seconds, initial.seconds * Double(1 << min(failures, 30)))
        failures += 1
        let fraction = 0.5 + 0.5 * min(max(random, 0), 1)
        return .milliseconds(Int64((ceiling * fraction * 1000).rounded()))
    }

    /// A connection that stayed up `maximum` or longer starts the backoff
    /// over; a shorter one counts as one more failure. A broker that takes
    /// the connection and drops it at once (another client with this client
    /// id, an ACL that closes it) is then retried less and less often, not
    /// every second.
    public mutating func connectionEnded(after uptime: Duration) {
        if uptime >= maximum { failures = 0 }
    }
}
