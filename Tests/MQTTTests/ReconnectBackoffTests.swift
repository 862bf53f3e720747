import BeaconCore
import BeaconMQTT
import Testing

@Suite struct ReconnectBackoffTests {
    @Test func doublesToTheCapWithJitterInTheUpperHalfAndResets() {
        var backoff = ReconnectBackoff(initial: .seconds(1), maximum: .seconds(60))
        let highest = (0..<10).map { _ in backoff.nextDelay(random: 0.999_999) }
        #expect(highest.map { Int(($0.seconds).rounded()) } == [1, 2, 4, 8, 16, 32, 60, 60, 60, 60])
        backoff.connectionEnded(after: .seconds(60))
        #expect(backoff.failures == 0)
        let lowest = (0..<8).map { _ in backoff.nextDelay(random: 0) }
        #expect(lowest.map(\.seconds) == [0.5, 1, 2, 4, 8, 16, 30, 30])
        // Far past any sensible count, still the cap (no overflow).
        for _ in 0..<100 { _ = backoff.nextDelay(random: 0.5) }
        #expect(backoff.nextDelay(random: 1) == .seconds(60))
    }

    /// A connection that is dropped soon after it is made (the audit's
    /// second node with the same id: 163 reconnects a minute) backs off as
    /// a failed attempt does; one that lasted starts over.
    @Test func aConnectionThatDoesNotLastBacksOff() {
        var backoff = ReconnectBackoff(initial: .seconds(1), maximum: .seconds(60))
        var delays: [Int] = []
        for _ in 0..<8 {
            backoff.connectionEnded(after: .milliseconds(500))
            delays.append(Int(backoff.nextDelay(random: 0.999_999).seconds.rounded()))
        }
        #expect(delays == [1, 2, 4, 8, 16, 32, 60, 60])
        backoff.connectionEnded(after: .seconds(59))
        #expect(backoff.failures == 8)
        backoff.connectionEnded(after: .seconds(3600))
        #expect(backoff.failures == 0)
        #expect(backoff.nextDelay(random: 0.999_999) == .seconds(1))
    }
}
