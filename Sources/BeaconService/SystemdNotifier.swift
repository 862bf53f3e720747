import BeaconCore
import BeaconSources
import CSystemd
import DBus

/// What systemd hears from beacond over `$NOTIFY_SOCKET` (sd_notify): the
/// watchdog's "alive", paced by `WatchdogPacing`, so a main loop or D-Bus
/// thread that wedges is killed and restarted instead of holding the bus
/// name and answering nothing; and a status line for `systemctl status`.
/// Outside systemd (no `$NOTIFY_SOCKET`) every call does nothing.
struct SystemdNotifier {
    /// Nil when the unit sets no `WatchdogSec=`.
    private var pacing: WatchdogPacing?

    init() {
        var microseconds: UInt64 = 0
        if sd_watchdog_enabled(0, &microseconds) > 0 {
            pacing = WatchdogPacing(interval: .microseconds(Int64(microseconds / 2)))
        }
    }

    /// Called once per pass of the main loop, which the ticker wakes every
    /// 200 ms; says what it did, for the log (nil without a watchdog).
    mutating func alive(bus: DBusEventLoop.Progress?) -> WatchdogPacing.Step? {
        guard let step = pacing?.pass(at: ServiceClock.watchdogNow(), bus: bus) else { return nil }
        switch step {
        case .ping, .unstuck: sd_notify(0, "WATCHDOG=1")
        case .wait, .stuck: break
        }
        return step
    }

    /// `systemctl status`'s "Status:" line: one line, as systemd shows it.
    /// Whether beacond scans, never where the listener is: every local user
    /// may read it, not only group beacond.
    func status(_ text: String) {
        sd_notify(0, "STATUS=" + text.split(whereSeparator: \.isNewline).joined(separator: " "))
    }
}
