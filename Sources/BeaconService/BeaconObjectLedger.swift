import BeaconCore
import DBus

/// Which Beacon1 objects are on the bus, with the values last announced, and
/// what to announce next: a pure value, so its rules are tested on a hand
/// clock and the bus side only carries them out.
///
/// Objects appear and go (InterfacesAdded/Removed) and change
/// (PropertiesChanged) at most once per `coalescing` each, only on a
/// meaningful change, and at most `budget` announcements per `period`,
/// however often it is reconciled (region events publish between ticks);
/// venue beacons (`RangedBeacon.isVenueBeacon`: a venue's longest tracked,
/// not every identity minted under an open venue) come first, so a busy room
/// delays strangers, never the venues. Objects still waiting to go keep serving the values they
/// last announced.
struct BeaconObjectLedger {
    struct Entry {
        var identity: BeaconIdentity
        var properties: [(String, DBusValue)]
        var announced: Timestamp
        /// A venue beacon when last ranged: its object comes first.
        var isVenue: Bool
    }

    struct Changes {
        var added: [Entry] = []
        var removed: [BeaconIdentity] = []
        var changed: [(BeaconIdentity, [String])] = []
        var isEmpty: Bool { added.isEmpty && removed.isEmpty && changed.isEmpty }
    }

    var coalescing: Duration
    private var budget: PeriodBudget
    private(set) var exported: [BeaconIdentity: Entry] = [:]
    /// When each recently removed object went: it may not come back before `coalescing` has passed.
    private var departed: [BeaconIdentity: Timestamp] = [:]

    init(coalescing: Duration, budget: Int, period: Duration) {
        self.coalescing = coalescing
        self.budget = PeriodBudget(budget: budget, period: period)
    }

    /// Brings the exported objects towards `ranged` (nearest first), within the rules above.
    /// Venue beacons' objects are removed, added and changed before any
    /// stranger's, so strangers leaving in numbers cannot take their budget either.
    /// `nearest`, the beacon GetNearestVenue names, is exported first, whatever
    /// the budget, and comes back at once after a removal rather than after its
    /// second: an answer must not name a missing object, and it is one object,
    /// changing at the venue's dwell at most.
    mutating func reconcile(
        _ ranged: [RangedBeacon], nearest: BeaconIdentity? = nil, now: Timestamp, properties: (RangedBeacon) -> [(String, DBusValue)]
    ) -> Changes {
        var changes = Changes()
        let available = budget.remaining(at: now)
        var remaining = available
        defer { budget.spend(available - remaining) }
        departed = departed.filter { now - $0.value < coalescing }
        let live = Set(ranged.map(\.identity))
        // A beacon can become a venue beacon (its venue's place freed, a
        // reload) with no change worth a signal: its place in the order follows.
        for beacon in ranged { exported[beacon.identity]?.isVenue = beacon.isVenueBeacon }
        func add(_ entry: Entry) {
            exported[entry.identity] = entry
            changes.added.append(entry)
            remaining -= 1
        }
        if let nearest, exported[nearest] == nil, let beacon = ranged.first(where: { $0.identity == nearest }) {
            add(Entry(identity: nearest, properties: properties(beacon), announced: now, isVenue: beacon.isVenueBeacon))
        }
        for venues in [true, false] {
            for (identity, entry) in exported where entry.isVenue == venues && !live.contains(identity) {
                guard remaining > 0 else { return changes }
                guard now - entry.announced >= coalescing else { continue }
                exported[identity] = nil
                departed[identity] = now
                changes.removed.append(identity)
                remaining -= 1
            }
            for beacon in ranged where beacon.isVenueBeacon == venues {
                guard remaining > 0 else { return changes }
                let values = properties(beacon)
                let entry = Entry(identity: beacon.identity, properties: values, announced: now, isVenue: venues)
                guard let old = exported[beacon.identity] else {
                    if departed[beacon.identity] == nil { add(entry) }
                    continue
                }
                guard now - old.announced >= coalescing, Self.meaningfullyDifferent(old.properties, values) else { continue }
                exported[beacon.identity] = entry
                changes.changed.append((beacon.identity, Self.changedNames(old.properties, values)))
                remaining -= 1
            }
        }
        return changes
    }

    /// The names of the properties whose values differ, in declaration order.
    static func changedNames(_ old: [(String, DBusValue)], _ new: [(String, DBusValue)]) -> [String] {
        zip(old, new).filter { $0.1 != $1.1 }.map(\.1.0)
    }

    /// A change worth a signal: any text, flag or integer, or a number that moved by more than 5%.
    static func meaningfullyDifferent(_ old: [(String, DBusValue)], _ new: [(String, DBusValue)]) -> Bool {
        zip(old, new).contains { a, b in
            switch (a.1, b.1) {
            case (.double(let x), .double(let y)):
                return abs(x - y) > 0.05 * max(abs(x), abs(y), 0.01)
            case (.uint64, .uint64):
                return false  // LastSeen moves with every packet: not a change by itself
            default:
                return a.1 != b.1
            }
        }
    }
}
