import BeaconCore

/// How often the engine named the truly nearest venue on a recording with
/// several beacons. The truth after each row is the venue of the beacon with
/// the smallest most recent `true_distance_m`; rows are scored once at least
/// two venues have been heard (with one, there is nothing to choose).
public struct TraceVenueScore: Sendable, Equatable {
    public private(set) var scoredRows = 0
    public private(set) var correctRows = 0
    private var latest: [BeaconIdentity: Latest] = [:]
    private var venuesHeard: Set<String> = []
    /// The beacon with the smallest latest distance (ties: the smaller
    /// identity), kept as rows come: looked for among all only when that
    /// beacon itself moves away, so a row costs a few steps, not one per beacon.
    private var nearest: BeaconIdentity?

    private struct Latest: Sendable, Equatable {
        var distance: Double
        var venue: String
    }

    public init() {}

    public mutating func record(_ identity: BeaconIdentity, trueDistance: Double, venue: String, answer: String?) {
        let movedAway = nearest == identity && trueDistance > latest[identity]!.distance
        latest[identity] = Latest(distance: trueDistance, venue: venue)
        venuesHeard.insert(venue)
        if movedAway {
            nearest = latest.min { ($0.value.distance, $0.key) < ($1.value.distance, $1.key) }!.key
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
