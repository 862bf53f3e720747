import BeaconCore

/// At most `budget` announcements per `period`, however often they are
/// asked for: the count starts again once a period has passed since the
/// first of it. One rule for Beacon1 and Venue1 objects and the journal's
/// implausible-power lines.
struct PeriodBudget {
    let budget: Int
    let period: Duration
    /// When the current period began, and the announcements made in it.
    private var spent = (since: Timestamp?.none, count: 0)

    init(budget: Int, period: Duration) {
        self.budget = budget
        self.period = period
    }

    /// How many more may go at `now`.
    mutating func remaining(at now: Timestamp) -> Int {
        if spent.since.map({ now - $0 >= period }) ?? true { spent = (now, 0) }
        return max(0, budget - spent.count)
    }

    /// `count` more went in the current period.
    mutating func spend(_ count: Int) {
        spent.count += count
    }
}
