/// When to re-arm a scan that has gone quiet, and how often at most.
///
/// A Pi's radio can go deaf: the adapter stays up, the scan is nominally on,
/// and no report arrives. Re-arming (re-issuing the scan for `hci`,
/// Stop/StartDiscovery for `bluez`) often brings it back. But silence is also
/// what an empty room sounds like, and other programs share the adapter, so
/// the tries are bounded: the first after `firstAfter` of quiet, each next one
/// after twice the quiet of the one before, `attempts` in all; then nothing
/// more until something is heard again. Each try also waits its spacing after
/// the one before, so a stall or a suspend that let the quiet run long does
/// not spend them all at once. Time is passed in.
public struct SilenceRecovery: Sendable {
    public enum Step: Sendable, Equatable {
        /// Re-arm now: try `attempt` of `of`, after at least `quiet` without a report.
        case rearm(attempt: Int, of: Int, quiet: Duration)
        /// The last try brought nothing back; leave the scan alone.
        case giveUp(attempts: Int, quiet: Duration)
    }

    public let firstAfter: Duration
    public let attempts: Int
    private var lastHeard: ContinuousClock.Instant
    private var tried = 0
    private var lastTry: ContinuousClock.Instant?
    private var gaveUp = false

    public init(firstAfter: Duration, attempts: Int, now: ContinuousClock.Instant) {
        self.firstAfter = firstAfter
        self.attempts = attempts
        lastHeard = now
    }

    /// Something was heard; returns how many tries it took, when it took any.
    public mutating func heard(at now: ContinuousClock.Instant) -> Int? {
        defer { restart(at: now) }
        return tried > 0 ? tried : nil
    }

    /// Silence counts from now, with every try available again: the scan was (re)started for another reason.
    public mutating func restart(at now: ContinuousClock.Instant) {
        lastHeard = now
        tried = 0
        lastTry = nil
        gaveUp = false
    }

    /// What to do now, if anything.
    public mutating func step(at now: ContinuousClock.Instant) -> Step? {
        guard !gaveUp else { return nil }
        // Tries at firstAfter · (2^(n+1) − 1) of quiet: 5 s, 15 s, 35 s for 5 s; the give-up one spacing later.
        // And at least firstAfter · 2^n after the try before: 10 s, 20 s, 40 s.
        let due = firstAfter * ((1 << (tried + 1)) - 1)
        guard now - lastHeard >= due else { return nil }
        if let lastTry, now - lastTry < firstAfter * (1 << tried) { return nil }
        lastTry = now
        if tried == attempts {
            gaveUp = true
            return .giveUp(attempts: attempts, quiet: due)
        }
        tried += 1
        return .rearm(attempt: tried, of: attempts, quiet: due)
    }

    /// "1 try", "3 tries": for the notes that say how many it took.
    public static func count(_ tries: Int) -> String { tries == 1 ? "1 try" : "\(tries) tries" }
}
