import BeaconCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The shell's one reading of time; the core only ever gets it passed in.
///
/// Timeouts must not follow the wall clock: a Raspberry Pi has no real-time
/// clock, so NTP steps it by hours after boot, and an operator may set it
/// back. `now()` is the wall clock as it was when the clock was made plus the
/// time elapsed since on a monotonic clock (`CLOCK_BOOTTIME`, which also
/// counts a suspend, during which beacons really were not heard). It reads
/// like Unix time, so logs and replays need no conversion, but it never
/// steps; `wallTime(of:)` gives the wall-clock time of such a reading for clients.
public struct ServiceClock: Sendable {
    /// The process's clock, anchored at its first use.
    public static let system = ServiceClock(
        wall: { read(CLOCK_REALTIME) }, monotonic: { read(CLOCK_BOOTTIME) })

    private let wall: @Sendable () -> Timestamp
    private let monotonic: @Sendable () -> Timestamp
    private let anchor: (wall: Timestamp, monotonic: Timestamp)

    /// A clock on the given readings: the system's, or a test's hand-driven ones.
    public init(wall: @escaping @Sendable () -> Timestamp, monotonic: @escaping @Sendable () -> Timestamp) {
        self.wall = wall
        self.monotonic = monotonic
        anchor = (wall(), monotonic())
    }

    public func now() -> Timestamp {
        anchor.wall + (monotonic() - anchor.monotonic)
    }

    /// When `time` (a reading of `now()`) was on the wall clock as it reads now.
    public func wallTime(of time: Timestamp) -> Timestamp {
        wall() - (now() - time)
    }

    /// `system.now()`.
    public static func now() -> Timestamp { system.now() }

    /// The clock systemd times its watchdog by (`CLOCK_MONOTONIC`, which
    /// stops during a suspend, where `now()` counts it): the watchdog's pings
    /// are paced on it, so a suspend is not taken for a wedge.
    public static func watchdogNow() -> Timestamp { read(CLOCK_MONOTONIC) }

    private static func read(_ clock: clockid_t) -> Timestamp {
        var spec = timespec()
        clock_gettime(clock, &spec)
        return Timestamp(microsecondsSinceEpoch: Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1_000)
    }
}
