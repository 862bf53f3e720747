import BeaconCore

/// When the journal hears of advertisements the engine could not keep up
/// with: at the first drop, then at most once a minute with those dropped
/// since the last line, so a flood that lasts an hour is sixty lines, not a
/// line a batch. Drops that come within the minute are said once it has
/// passed, even if the flood has ended by then.
struct DropReport {
    static let interval: Duration = .seconds(60)
    /// The count since start that the last line gave, and when.
    private var said: (count: UInt64, at: Timestamp?) = (0, nil)

    /// The line for `total` advertisements dropped since start, at `now`, or
    /// `nil` when none is new or the last line is under a minute old.
    mutating func line(total: UInt64, now: Timestamp) -> String? {
        guard total > said.count else { return nil }
        if let at = said.at, now - at < Self.interval { return nil }
        defer { said = (total, now) }
        return "dropped \(total - said.count) advertisement(s) the engine could not keep up with (\(total) since start); the nearest venue is judged on the rest"
    }
}
