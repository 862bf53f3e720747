import BeaconCore

/// How often the engine named the truly nearest venue on a recording with
/// several beacons. The truth after each row is the venue of the beacon with
/// the smallest most recent `true_distance_m` among those still heard: a
/// beacon whose rows have stopped for longer than the engine's rule for "too
/// old" (`Ranger.staleAfter(interval:minimum:)`, with the gap between its
/// last two rows where the engine keeps a running average) is out of it, as
/// a listener who walked out of its range no longer has it near. Rows are scored once at least two venues have been heard (with one,
/// there is nothing to choose).
public struct TraceVenueScore: Sendable, Equatable {
    public private(set) var scoredRows = 0
    public private(set) var correctRows = 0
    /// SPEC's "too old", the floor of each beacon's staleness.
    public let staleAfter: Duration
    private var latest: [BeaconIdentity: Latest] = [:]
    private var venuesHeard: Set<String> = []
    /// The heard beacon with the smallest latest distance (ties: the smaller
    /// identity), kept as rows come: looked for among all only when that
    /// beacon itself moves away or goes unheard, so a row costs a few steps,
    /// not one per beacon.
    private var nearest: BeaconIdentity?
    /// The last row's time: a row earlier than it (a trace whose time goes
    /// back, which is only warned about) makes every beacon a candidate again.
    private var lastRow: Timestamp?

    private struct Latest: Sendable, Equatable {
        var distance: Double
        var venue: String
        var time: Timestamp
        /// The gap between its last two rows, when not a spell out of range.
        var interval: Duration?
        var heardUntil: Timestamp
    }

    public init(staleAfter: Duration) {
        self.staleAfter = staleAfter
    }

    public mutating func record(_ identity: BeaconIdentity, at time: Timestamp, trueDistance: Double, venue: String, answer: String?) {
        let previous = latest[identity]
        var interval = previous?.interval
        if let previous, time - previous.time > .zero, time - previous.time <= RegionMonitor.longestGap { interval = time - previous.time }
        let heardUntil = time + Ranger.staleAfter(interval: interval, minimum: staleAfter)
        latest[identity] = Latest(distance: trueDistance, venue: venue, time: time, interval: interval, heardUntil: heardUntil)
        venuesHeard.insert(venue)
        let movedAway = nearest == identity && trueDistance > previous!.distance
        let wentBack = lastRow.map { time < $0 } ?? false
        lastRow = time
        if movedAway || wentBack || nearest.map({ latest[$0]!.heardUntil < time }) ?? false {
            nearest = identity
            for (other, entry) in latest where entry.heardUntil >= time && (entry.distance, other) < (latest[nearest!]!.distance, nearest!) {
                nearest = other
            }
        } else if nearest.map({ $0 == identity || (trueDistance, identity) < (latest[$0]!.distance, $0) }) ?? true {
            nearest = identity
        }
        guard venuesHeard.count >= 2, let truth = nearest.flatMap({ latest[$0] }) else { return }
        scoredRows += 1
        if answer == truth.venue { correctRows += 1 }
    }

    /// Share of scored rows answered right; `nil` when the trace has one venue.
    public var accuracy: Double? { scoredRows == 0 ? nil : Double(correctRows) / Double(scoredRows) }
}
