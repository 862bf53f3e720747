import BeaconCore
import BeaconSources
import Synchronization
import Testing

/// The service's clock on hand-driven readings: the wall clock stepping (NTP
/// on a Pi without a real-time clock, an operator) moves neither its readings
/// nor, so, any timeout; only the wall-clock times shown to clients follow it.
@Suite struct ServiceClockTests {
    final class Readings: Sendable {
        let wall = Mutex(Timestamp.milliseconds(1_700_000_000_000))
        let monotonic = Mutex(Timestamp.milliseconds(5_000))
        func pass(_ duration: Duration) {
            wall.withLock { $0 = $0 + duration }
            monotonic.withLock { $0 = $0 + duration }
        }
    }

    @Test func aWallClockSteppedBackMovesNoTimeout() {
        let readings = Readings()
        let clock = ServiceClock(wall: { readings.wall.withLock { $0 } }, monotonic: { readings.monotonic.withLock { $0 } })
        let start = clock.now()
        #expect(start == .milliseconds(1_700_000_000_000))
        readings.pass(.seconds(3))
        let lastSeen = clock.now()
        readings.wall.withLock { $0 = $0 - .seconds(5 * 3_600) }  // stepped back 5 h
        readings.pass(.seconds(11))
        // 11 s have passed for every timeout, whatever the wall clock says.
        #expect(clock.now() - lastSeen == .seconds(11))
        // What clients see as "last seen" is on the wall clock as it reads now: 11 s ago.
        #expect(readings.wall.withLock { $0 } - clock.wallTime(of: lastSeen) == .seconds(11))
        // Stepped forward (NTP's first fix): still 11 s + 1 s.
        readings.wall.withLock { $0 = $0 + .seconds(86_400) }
        readings.pass(.seconds(1))
        #expect(clock.now() - lastSeen == .seconds(12))
    }
}
