import BeaconCore
import BeaconMQTT
import Testing

@Suite struct ReconnectBackoffTests {
    @Test func doublesToTheCapWithJitterInTheUpperHalfAndResets() {
        var backoff = ReconnectBackoff(initial: .seconds(1), maximum: .seconds(60))
        let highest = (0..<10).map { _ in backoff.nextDelay(random: 0.999_999) }
        #expect(highest.map { Int(($0.seconds).rounded()) } == [1, 2, 4, 8, 16, 32, 60, 60, 60, 60])
        backoff.succeeded()
        #expect(backoff.failures == 0)
        let lowest = (0..<8).map { _ in backoff.nextDelay(random: 0) }
        #expect(lowest.map(\.seconds) == [0.5, 1, 2, 4, 8, 16, 30, 30])
        // Far past any sensible count, still the cap (no overflow).
        for _ in 0..<100 { _ = backoff.nextDelay(random: 0.5) }
        #expect(backoff.nextDelay(random: 1) == .seconds(60))
    }
}
