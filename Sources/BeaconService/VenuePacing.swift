import BeaconCore
import BeacondAPI

/// When a Venue1 object's PropertiesChanged may go. A change of `Nearest`
/// or `Proximity` goes at once (a kiosk wants them, and they change at the
/// venue's dwell and hysteresis at most); a change of `Distance` alone at most
/// once per `coalescing` per venue, and at most `budget` of those per
/// `period` in all, the venues waiting longest first. A file may list 1,000
/// venues and anyone in radio range may send their beacons' identities: without
/// this, a few thousand signals a second. A pure value, tested on a hand clock.
struct VenuePacing {
    var coalescing: Duration
    private var budget: PeriodBudget
    /// When each venue's change was last announced.
    private var announced: [String: Timestamp] = [:]

    init(coalescing: Duration, budget: Int, period: Duration) {
        self.coalescing = coalescing
        self.budget = PeriodBudget(budget: budget, period: period)
    }

    /// The properties whose change goes at once.
    static let urgent: Set<String> = [Beacond.Venue1.nearest.name, Beacond.Venue1.proximity.name]

    /// Which of the venues with a change (id, changed property names) are announced now.
    mutating func admit(_ changed: [(id: String, names: [String])], now: Timestamp) -> Set<String> {
        let available = budget.remaining(at: now)
        var admitted: Set<String> = []
        var paced: [(id: String, last: Timestamp?)] = []
        for (id, names) in changed {
            if names.contains(where: Self.urgent.contains) {
                admitted.insert(id)
            } else if announced[id].map({ now - $0 >= coalescing }) ?? true {
                paced.append((id, announced[id]))
            }
        }
        // Never announced first, then the longest waiting; ids break ties, so the order is the same every run.
        paced.sort { ($0.last ?? .distantPast, $0.id) < ($1.last ?? .distantPast, $1.id) }
        for (id, _) in paced.prefix(available) { admitted.insert(id) }
        budget.spend(min(paced.count, available))
        for id in admitted { announced[id] = now }
        return admitted
    }

    /// A venue the file no longer has.
    mutating func forget(_ id: String) {
        announced[id] = nil
    }
}
