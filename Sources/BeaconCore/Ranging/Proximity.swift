/// How close a beacon is, in Core Location's words (`CLProximity`).
public enum Proximity: String, Sendable, Hashable, CaseIterable, Comparable {
    case immediate, near, far, unknown

    /// Nearest first, unknown last: the order ranged beacons are reported in.
    public static func < (lhs: Proximity, rhs: Proximity) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// The proximity band edges: `immediate` below the first, `near` below the
/// second, `far` beyond. The ranger decides a beacon's band with
/// `ProximityClassifier`; the edges alone band a known distance (ground truth,
/// the baselines).
public struct ProximityBands: Hashable, Sendable {
    public var immediate: Double
    public var near: Double

    public init(immediate: Double, near: Double) {
        self.immediate = immediate
        self.near = near
    }

    /// The band a distance lies in.
    public func band(for distance: Double) -> Proximity {
        distance < immediate ? .immediate : distance < near ? .near : .far
    }
}
