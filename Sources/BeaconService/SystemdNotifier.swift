import BeaconCore
import CSystemd

/// What systemd hears from beacond over `$NOTIFY_SOCKET` (sd_notify): the
/// watchdog's "alive" from the main loop, at half the unit's `WatchdogSec=`,
/// so a loop that wedges is killed and restarted instead of holding the bus
/// name and answering nothing; and a status line for `systemctl status`.
/// Outside systemd (no `$NOTIFY_SOCKET`) every call does nothing.
struct SystemdNotifier {
    /// Half the watchdog's interval, or nil when the unit sets none.
    private let pingInterval: Duration?
    private var lastPing: Timestamp?

    init() {
        var microseconds: UInt64 = 0
        pingInterval = sd_watchdog_enabled(0, &microseconds) > 0 ? .microseconds(Int64(microseconds / 2)) : nil
    }

    /// Called once per pass of the main loop, which the ticker wakes every 200 ms.
    mutating func alive(at now: Timestamp) {
        guard let pingInterval, lastPing.map({ now - $0 >= pingInterval }) ?? true else { return }
        sd_notify(0, "WATCHDOG=1")
        lastPing = now
    }

    /// `systemctl status`'s "Status:" line: one line, as systemd shows it.
    /// Whether beacond scans, never where the listener is: every local user
    /// may read it, not only group beacond.
    func status(_ text: String) {
        sd_notify(0, "STATUS=" + text.split(whereSeparator: \.isNewline).joined(separator: " "))
    }
}
