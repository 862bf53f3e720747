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
/// back. `now()` is the wall clock as it was when the process started plus
/// the time elapsed since on `CLOCK_BOOTTIME` (monotonic, and counting a
/// suspend, during which beacons really were not heard). It reads like Unix
/// time, so logs and replays need no conversion, but it never steps;
/// `wallTime(of:)` gives the wall-clock time of such a reading for clients.
public enum ServiceClock {
    private static let anchor = (wall: realtime(), boot: boottime())

    public static func now() -> Timestamp {
        anchor.wall + (boottime() - anchor.boot)
    }

    /// When `time` (a reading of `now()`) was on the wall clock as it reads now.
    public static func wallTime(of time: Timestamp) -> Timestamp {
        realtime() - (now() - time)
    }

    private static func realtime() -> Timestamp { read(CLOCK_REALTIME) }
    private static func boottime() -> Timestamp { read(CLOCK_BOOTTIME) }

    private static func read(_ clock: clockid_t) -> Timestamp {
        var spec = timespec()
        clock_gettime(clock, &spec)
        return Timestamp(microsecondsSinceEpoch: Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1_000)
    }
}
