/// The answer to "which venue am I nearest to, and how sure is that?".
public struct NearestVenue: Sendable, Equatable {
    public enum Source: String, Sendable {
        /// From ranging: the venue of the closest ranged beacon.
        case ranging
        /// Nothing in range; the user's preferred venue stands in.
        case preference
    }

    public var venueID: String
    public var name: String
    public var source: Source
    /// The beacon that decided it (`nil` for a preference).
    public var beacon: RangedBeacon?
    /// The closest other venue in range, if any.
    public var runnerUpID: String?
    /// How far ahead of the runner-up, 0...1: (d_runner − d_winner) / d_runner;
    /// 1 with no runner-up, 0 for a preference (nothing ranged backs it).
    public var margin: Double
    /// The listener has not moved, as far as the signal can tell: the beacons
    /// that decide the answer (the winner's and the runner-up's) both have
    /// flat levels. A walk along one beacon's circle changes the other's, so
    /// two beacons see most moves one alone would miss. `false` for a preference.
    public var isStationary: Bool

    public var proximity: Proximity { beacon?.proximity ?? .unknown }
    public var distance: Double { beacon?.distance ?? -1 }
}
