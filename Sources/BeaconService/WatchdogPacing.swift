import BeaconCore
import DBus

/// When beacond tells systemd's watchdog it is alive: from the main loop's
/// pass, at most once per `interval` (half the unit's `WatchdogSec=`), and
/// only while the D-Bus thread also takes the work handed to it.
///
/// A main loop that wedges stops passing and so stops pinging. A D-Bus
/// thread that wedges (in a handler, in libdbus) would not: org.beacond
/// would stay held and answer nothing, and every publication would pile up
/// on its queue. So work left waiting for `interval` while the thread takes
/// none holds the ping back, and systemd aborts beacond `WatchdogSec=` after
/// the last ping — at most three intervals (and a pass) after the wedge —
/// then starts it again (`Restart=`). Times are `CLOCK_MONOTONIC`'s, as
/// systemd's are.
struct WatchdogPacing: Sendable {
    enum Step: Sendable, Equatable {
        /// Send `WATCHDOG=1`.
        case ping
        /// Nothing to send on this pass.
        case wait
        /// The D-Bus thread has left work waiting this long: the ping is
        /// held back from now on. Said once.
        case stuck(Duration)
        /// The D-Bus thread took work again after `stuck`: ping.
        case unstuck
    }

    let interval: Duration
    private var lastPing: Timestamp?
    /// The D-Bus thread's count of batches taken when work was first seen
    /// waiting with it, and when.
    private var waiting: (batchesTaken: UInt64, since: Timestamp)?
    private var heldBack = false

    init(interval: Duration) {
        self.interval = interval
    }

    /// One pass of the main loop at `now`; `bus` is the D-Bus thread's progress (nil without a bus).
    mutating func pass(at now: Timestamp, bus: DBusEventLoop.Progress?) -> Step {
        if let bus, bus.workWaiting {
            if waiting?.batchesTaken != bus.batchesTaken { waiting = (bus.batchesTaken, now) }
        } else {
            waiting = nil
        }
        if let waiting, now - waiting.since >= interval {
            defer { heldBack = true }
            return heldBack ? .wait : .stuck(now - waiting.since)
        }
        let resumed = heldBack
        heldBack = false
        guard resumed || lastPing.map({ now - $0 >= interval }) ?? true else { return .wait }
        lastPing = now
        return resumed ? .unstuck : .ping
    }
}
