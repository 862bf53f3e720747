import BeaconCore
@testable import BeaconService
import DBus
import Testing

private typealias S = EngineTestSupport

/// systemd's watchdog hears "alive" at half its interval, not on every pass
/// of the main loop, and stops hearing it when the D-Bus thread is stuck: on
/// a hand clock, the main loop's passes every 200 ms for minutes.
@Suite struct WatchdogPacingTests {
    static let interval = Duration.seconds(15)
    static let pass = Duration.milliseconds(200)

    /// The steps of `passes` passes from `start`, the bus's progress on each given by `bus(n)`.
    static func run(
        _ pacing: inout WatchdogPacing, passes: Int, from start: Timestamp = S.t0,
        bus: (Int) -> DBusEventLoop.Progress? = { _ in nil }
    ) -> [(time: Timestamp, step: WatchdogPacing.Step)] {
        (0..<passes).map { n in
            let time = start + pass * n
            return (time, pacing.pass(at: time, bus: bus(n)))
        }
    }

    static func pings(_ steps: [(time: Timestamp, step: WatchdogPacing.Step)]) -> [Duration] {
        steps.filter { $0.step == .ping || $0.step == .unstuck }.map { $0.time - S.t0 }
    }

    static func longestGap(_ pings: [Duration]) -> Duration {
        zip(pings, pings.dropFirst()).map { $1 - $0 }.max() ?? .zero
    }

    @Test func aHealthyLoopPingsOncePerIntervalWhetherTheBusIsIdleOrBusy() {
        let idle = { (_: Int) in DBusEventLoop.Progress(batchesTaken: 7, workWaiting: false) }
        // Work waiting on every pass, as just after a publication, but taken by the next.
        let busy = { (n: Int) in DBusEventLoop.Progress(batchesTaken: UInt64(n), workWaiting: true) }
        for bus in [{ (_: Int) in nil }, idle, busy] {
            var pacing = WatchdogPacing(interval: Self.interval)
            let steps = Self.run(&pacing, passes: 301, bus: bus)  // 60 s
            #expect(Self.pings(steps) == [.zero, .seconds(15), .seconds(30), .seconds(45), .seconds(60)])
            #expect(!steps.contains { if case .stuck = $0.step { true } else { false } })
        }
    }

    @Test func aStuckBusThreadHoldsThePingBackUntilItTakesWorkAgain() {
        var pacing = WatchdogPacing(interval: Self.interval)
        // Healthy for 10 s, then work waits with the count standing still for
        // 40 s (a handler that never returns), then the thread takes it.
        let stuckFrom = 50, stuckUntil = 250
        let steps = Self.run(&pacing, passes: 400) { n in
            switch n {
            case ..<stuckFrom: DBusEventLoop.Progress(batchesTaken: UInt64(n), workWaiting: n % 2 == 0)
            case ..<stuckUntil: DBusEventLoop.Progress(batchesTaken: UInt64(stuckFrom), workWaiting: true)
            default: DBusEventLoop.Progress(batchesTaken: UInt64(n), workWaiting: false)
            }
        }
        let stuck = steps.compactMap { entry -> (Duration, Duration)? in
            if case .stuck(let waited) = entry.step { (entry.time - S.t0, waited) } else { nil }
        }
        // Said once, one interval after the work was first seen waiting (at 10 s).
        #expect(stuck.count == 1)
        #expect(stuck.first?.0 == .seconds(25) && stuck.first?.1 == .seconds(15))
        let pings = Self.pings(steps)
        // Pings while the wedge is younger than an interval, none after, until it clears.
        #expect(pings.filter { $0 < .seconds(50) } == [.zero, .seconds(15)])
        #expect(steps.first { $0.time - S.t0 == .seconds(50) }?.step == .unstuck)
        // systemd (WatchdogSec = two intervals) would have killed beacond:
        // the longest silence is longer than that.
        #expect(Self.longestGap(pings) > Self.interval * 2)
        // After the wedge the pace is the usual one, counted from the ping it resumed with.
        #expect(pings.filter { $0 > .seconds(50) } == [.seconds(65)])
    }

    /// A thread that leaves work waiting for a little less than the interval
    /// (a long round, a busy machine) is not taken for a wedge.
    @Test func aStallShorterThanTheIntervalKeepsThePings() {
        var pacing = WatchdogPacing(interval: Self.interval)
        // Work waits with the count still from 10 s to 24.8 s, then is taken.
        let steps = Self.run(&pacing, passes: 301) { n in
            (50..<124).contains(n)
                ? DBusEventLoop.Progress(batchesTaken: 50, workWaiting: true)
                : DBusEventLoop.Progress(batchesTaken: UInt64(n), workWaiting: false)
        }
        #expect(!steps.contains { if case .stuck = $0.step { true } else { false } })
        #expect(Self.longestGap(Self.pings(steps)) == Self.interval)
    }
}
