import BeaconSources
import Testing

/// When a quiet scan is re-armed, on a hand-held clock.
@Suite struct SilenceRecoveryTests {
    @Test func triesDoubleTheirSpacingThenStopUntilSomethingIsHeard() {
        let start = ContinuousClock.now
        var recovery = SilenceRecovery(firstAfter: .seconds(5), attempts: 3, now: start)
        func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int64(seconds * 1000)) }
        #expect(recovery.step(at: at(4.9)) == nil)
        #expect(recovery.step(at: at(5)) == .rearm(attempt: 1, of: 3, quiet: .seconds(5)))
        #expect(recovery.step(at: at(14.9)) == nil)
        #expect(recovery.step(at: at(15)) == .rearm(attempt: 2, of: 3, quiet: .seconds(15)))
        #expect(recovery.step(at: at(35)) == .rearm(attempt: 3, of: 3, quiet: .seconds(35)))
        #expect(recovery.step(at: at(74.9)) == nil)
        #expect(recovery.step(at: at(75)) == .giveUp(attempts: 3, quiet: .seconds(75)))
        #expect(recovery.step(at: at(10_000)) == nil)
        // Heard again: it says how many tries it took, and the next silence starts afresh.
        #expect(recovery.heard(at: at(10_000)) == 3)
        #expect(recovery.heard(at: at(10_001)) == nil)
        #expect(recovery.step(at: at(10_005)) == nil)
        #expect(recovery.step(at: at(10_006)) == .rearm(attempt: 1, of: 3, quiet: .seconds(5)))
    }

    /// A stall (a suspend, a busy source thread) that let the quiet run long
    /// spends one try, not all of them at once: each waits its spacing after the one before.
    @Test func aLongStallSpendsOneTryAtATime() {
        let start = ContinuousClock.now
        var recovery = SilenceRecovery(firstAfter: .seconds(5), attempts: 3, now: start)
        func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int64(seconds * 1000)) }
        #expect(recovery.step(at: at(100)) == .rearm(attempt: 1, of: 3, quiet: .seconds(5)))
        #expect(recovery.step(at: at(100.2)) == nil)
        #expect(recovery.step(at: at(109.9)) == nil)
        #expect(recovery.step(at: at(110)) == .rearm(attempt: 2, of: 3, quiet: .seconds(15)))
        #expect(recovery.step(at: at(129.9)) == nil)
        #expect(recovery.step(at: at(130)) == .rearm(attempt: 3, of: 3, quiet: .seconds(35)))
        #expect(recovery.step(at: at(169.9)) == nil)
        #expect(recovery.step(at: at(170)) == .giveUp(attempts: 3, quiet: .seconds(75)))
    }
}
