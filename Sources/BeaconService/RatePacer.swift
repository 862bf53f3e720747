import BeaconCore

/// At most `burst` events at once per key, then one per `interval`: the
/// generic cell rate algorithm, one time per key (when its next event is
/// due with a full allowance), dropped once that time has passed, so it
/// holds only the keys that went faster than the rate just now.
struct RatePacer<Key: Hashable & Sendable>: Sendable {
    let interval: Duration
    let burst: Int
    private var due: [Key: Timestamp] = [:]

    init(interval: Duration, burst: Int) {
        self.interval = interval
        self.burst = max(1, burst)
    }

    /// Counts an event of `key` at `now` and returns nil if it may happen;
    /// otherwise counts nothing and returns how long until it may.
    mutating func admit(_ key: Key, now: Timestamp) -> Duration? {
        due = due.filter { $0.value > now }
        let next = due[key] ?? now
        let tolerance = interval * (burst - 1)
        if next - now > tolerance { return next - now - tolerance }
        due[key] = next + interval
        return nil
    }

    /// Takes back an event `admit` counted that did not happen after all.
    mutating func refund(_ key: Key) {
        guard let next = due[key] else { return }
        due[key] = next - interval
    }
}
