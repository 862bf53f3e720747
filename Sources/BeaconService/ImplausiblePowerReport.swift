import BeaconCore

/// When the journal hears of beacons whose frames carry no 1 m calibration
/// (`EngineEvent.implausibleMeasuredPower`): each beacon once a run (up to
/// `remembered` of them), at most `namedPerMinute` strangers named a minute
/// and the rest counted in one line a minute after the first of them; a
/// venue beacon (`BeaconEngine.isVenueBeacon`) is always named, as the bus puts them first. Anyone in radio range can send such
/// frames under a new identity 50 times a second: without this, 50 journal
/// lines a second.
struct ImplausiblePowerReport {
    static let namedPerMinute = 10
    static let interval: Duration = .seconds(60)
    /// Beacons said (or counted) already, up to the engine's tracked beacons:
    /// past that, one may be said again, within the same pace.
    static let remembered = EngineLimits().trackedBeacons

    private var said: Set<BeaconIdentity> = []
    /// The strangers named in the current minute.
    private var named = PeriodBudget(budget: namedPerMinute, period: interval)
    /// Beacons not named since the last count, and when the first of them came.
    private var unnamed: (count: Int, since: Timestamp)?

    /// Whether `beacon`'s line is said now.
    mutating func admit(_ beacon: BeaconIdentity, isVenue: Bool = false, now: Timestamp) -> Bool {
        guard !said.contains(beacon) else { return false }
        if said.count < Self.remembered { said.insert(beacon) }
        if isVenue { return true }
        guard named.remaining(at: now) > 0 else {
            unnamed = ((unnamed?.count ?? 0) + 1, unnamed?.since ?? now)
            return false
        }
        named.spend(1)
        return true
    }

    /// The count of beacons not named, a minute after the first of them.
    mutating func summary(now: Timestamp) -> String? {
        guard let pending = unnamed, now - pending.since >= Self.interval else { return nil }
        unnamed = nil
        return "\(pending.count) more beacon(s) advertised a measured power that is no 1 m calibration "
            + "(\(IBeaconFrame.plausibleMeasuredPower)) within a minute, not named: at most \(Self.namedPerMinute) are named a minute"
    }
}
