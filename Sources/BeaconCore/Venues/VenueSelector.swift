/// Chooses the nearest venue, with a switch margin and a dwell time so that
/// a person standing between two counters does not see the answer flicker.
///
/// The incumbent keeps the answer until challengers are closer by more than
/// `margin` (a fraction of the incumbent's distance) continuously for
/// `dwell`; then the closest of that moment takes it, so two challengers
/// taking turns do not keep a far incumbent. An incumbent that drops out of
/// range (unknown, stale) is replaced at once; `max_distance` admits a venue
/// at or within the limit and keeps the incumbent until it is `margin` beyond
/// it, so a listener standing at the limit does not see the answer come and
/// go. With nothing in range, the preferred venue, if set, is the answer,
/// marked as such.
public struct VenueSelector: Sendable {
    public struct Candidate: Sendable, Equatable {
        public var venueIndex: Int
        public var beacon: RangedBeacon
        /// The venue's `max_distance`, if any: beyond it the venue only keeps an answer it has.
        public var limit: Double?
        /// The beacon's distance distribution, its accuracy not yet solved:
        /// the engine hands over every venue's closest beacon at every tick,
        /// and only the answer's accuracy is ever read.
        var unsolved: DistanceDistribution?

        public init(venueIndex: Int, beacon: RangedBeacon, limit: Double? = nil) {
            self.venueIndex = venueIndex
            self.beacon = beacon
            self.limit = limit
        }

        init(venueIndex: Int, beacon: RangedBeacon, limit: Double?, unsolved: DistanceDistribution?) {
            self.init(venueIndex: venueIndex, beacon: beacon, limit: limit)
            self.unsolved = unsolved
        }

        var isWithinLimit: Bool { limit.map { beacon.distance <= $0 } ?? true }

        /// Ranked closest first, then by venue.
        func precedes(_ other: Candidate) -> Bool {
            (beacon.distance, venueIndex) < (other.beacon.distance, other.venueIndex)
        }

        var solvedBeacon: RangedBeacon {
            guard let unsolved else { return beacon }
            var solved = beacon
            solved.accuracy = unsolved.accuracy
            return solved
        }
    }

    public var margin: Double
    public var dwell: Duration
    public private(set) var current: NearestVenue?
    /// Since when some challenger has been closer than the incumbent by the margin.
    private var challengedSince: Timestamp?
    private var currentIndex: Int?
    /// The beacons' word on the listener's stillness as last seen, and since
    /// when it has said so. The answer calls the listener stationary once the
    /// beacons have said it for `dwell`, like a challenger, and moving as soon
    /// as they say so: a flicker (a detector's false alarm, someone stepping a
    /// spoofed runner-up) is announced at most once per few seconds, and a
    /// walk whose word flickers is never called still.
    private var stillness: (says: Bool, since: Timestamp)?

    public init(margin: Double, dwell: Duration) {
        self.margin = margin
        self.dwell = dwell
    }

    /// How far the answer's venue may be and keep the answer, for a
    /// `max_distance` of `limit`: as much farther as a challenger must be nearer.
    public func reach(of limit: Double) -> Double { limit * (1 + margin) }

    /// Whether a venue's beacon at `distance` may keep the answer (no `limit`: any distance).
    func reaches(_ distance: Double, limit: Double?) -> Bool { limit.map { distance <= reach(of: $0) } ?? true }

    /// Re-decides from this moment's candidates (at most one per venue, its
    /// closest ranged beacon). Returns true when the answer changed: its
    /// venue, its source, its name (a reload renamed it), or whether the listener is stationary (so that
    /// live updates, like Core Location's, say when the listener settles or
    /// moves on; stillness is taken once the beacons have told it for `dwell`,
    /// or at once with a new venue, and moving at once).
    public mutating func update(
        candidates: [Candidate], venues: [VenueDefinition], preferred: Int?, now: Timestamp
    ) -> Bool {
        let previous = current.map { ($0.venueID, $0.source, $0.isStationary, $0.name) }
        // Of the candidates ranked, only the first, the incumbent's and the
        // first of another venue than the winner's matter: found without sorting them all.
        func first(where included: (Candidate) -> Bool) -> Candidate? {
            var found: Candidate?
            for candidate in candidates where included(candidate) {
                if let found, !candidate.precedes(found) { continue }
                found = candidate
            }
            return found
        }
        let incumbent = currentIndex.flatMap { index in first { $0.venueIndex == index && reaches($0.beacon.distance, limit: $0.limit) } }
        if let best = first(where: \.isWithinLimit) ?? incumbent {
            var winner = incumbent ?? best
            if let incumbent, best.venueIndex != incumbent.venueIndex,
                best.beacon.distance < incumbent.beacon.distance * (1 - margin)
            {
                // The challenge counts from its first update; a dwell of zero switches in that one.
                let since = challengedSince ?? now
                challengedSince = since
                if now - since >= dwell { winner = best }
            } else {
                challengedSince = nil
            }
            if winner.venueIndex != incumbent?.venueIndex { challengedSince = nil }
            let runnerUp = first { $0.venueIndex != winner.venueIndex && $0.isWithinLimit }
            let lead = runnerUp.map { ($0.beacon.distance - winner.beacon.distance) / $0.beacon.distance } ?? 1
            let says = winner.beacon.isStationary && (runnerUp?.beacon.isStationary ?? true)
            let sameVenue = previous.map { $0.0 == venues[winner.venueIndex].id && $0.1 == .ranging } == true
            if !sameVenue {
                // A new answer takes the beacons' word at once, and keeps it as if said for `dwell`.
                stillness = (says, says ? now - dwell : now)
            } else if stillness?.says != says {
                stillness = (says, now)
            }
            currentIndex = winner.venueIndex
            current = NearestVenue(
                venueID: venues[winner.venueIndex].id, name: venues[winner.venueIndex].name, source: .ranging,
                beacon: winner.solvedBeacon, runnerUpID: runnerUp.map { venues[$0.venueIndex].id },
                margin: min(1, max(0, lead)),
                isStationary: says && now - (stillness?.since ?? now) >= dwell)
        } else {
            challengedSince = nil
            currentIndex = nil
            stillness = nil
            current = preferred.map {
                NearestVenue(
                    venueID: venues[$0].id, name: venues[$0].name, source: .preference, beacon: nil,
                    runnerUpID: nil, margin: 0, isStationary: false)
            }
        }
        let now = current.map { ($0.venueID, $0.source, $0.isStationary, $0.name) }
        return now?.0 != previous?.0 || now?.1 != previous?.1 || now?.2 != previous?.2 || now?.3 != previous?.3
    }

    /// Keeps the incumbent across a reconfiguration that moved it to `index`
    /// (or dropped it: `nil`), so a reload does not announce a change that is none.
    /// A preference answer has no incumbent to keep: the first beacon ranged
    /// then wins at once, as without the reload.
    public mutating func retarget(currentIndex index: Int?) {
        challengedSince = nil
        currentIndex = current?.source == .ranging ? index : nil
        if index == nil { current = nil }
    }
}
