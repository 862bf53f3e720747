/// How close a beacon is, in Core Location's words (`CLProximity`).
public enum Proximity: String, Sendable, Hashable, CaseIterable, Comparable {
    case immediate, near, far, unknown

    /// Nearest first, unknown last: the order ranged beacons are reported in.
    public static func < (lhs: Proximity, rhs: Proximity) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// Proximity bands with hysteresis: a distance must cross a band edge by a
/// margin before the band changes, so a beacon sitting on an edge does not
/// flicker between two answers.
public struct ProximityBands: Hashable, Sendable {
    public var immediate: Double
    public var near: Double
    /// Fraction of an edge a distance must pass it by (0.1: 10%).
    public var hysteresis: Double

    public init(immediate: Double, near: Double, hysteresis: Double = 0.1) {
        self.immediate = immediate
        self.near = near
        self.hysteresis = hysteresis
    }

    /// The band for `distance` given the band reported before.
    public func band(for distance: Double, previous: Proximity) -> Proximity {
        let plain: Proximity = distance < immediate ? .immediate : distance < near ? .near : .far
        guard previous != .unknown, previous != plain else { return plain }
        // Moving out past an edge needs distance ≥ edge·(1+h); moving in needs ≤ edge·(1−h).
        switch (previous, plain) {
        case (.immediate, .near): return distance >= immediate * (1 + hysteresis) ? .near : .immediate
        case (.immediate, .far): return distance >= near * (1 + hysteresis) ? .far : .near
        case (.near, .far): return distance >= near * (1 + hysteresis) ? .far : .near
        case (.near, .immediate): return distance <= immediate * (1 - hysteresis) ? .immediate : .near
        case (.far, .near): return distance <= near * (1 - hysteresis) ? .near : .far
        case (.far, .immediate): return distance <= immediate * (1 - hysteresis) ? .immediate : .near
        default: return plain
        }
    }
}
