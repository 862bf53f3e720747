/// How close a beacon is, in Core Location's words (`CLProximity`).
public enum Proximity: String, Sendable, Hashable, CaseIterable, Comparable {
    case immediate, near, far, unknown

    /// Nearest first, unknown last: the order ranged beacons are reported in.
    public static func < (lhs: Proximity, rhs: Proximity) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// Proximity bands with hysteresis: a distance must pass a band edge by a
/// factor before the band changes, so a beacon sitting on an edge does not
/// flicker between two answers.
public struct ProximityBands: Hashable, Sendable {
    public var immediate: Double
    public var near: Double
    /// Leaving a band needs `distance ≥ edge·factor`, entering one `distance < edge/factor`.
    public var hysteresisFactor: Double

    public init(immediate: Double, near: Double, hysteresisFactor: Double = 1) {
        self.immediate = immediate
        self.near = near
        self.hysteresisFactor = hysteresisFactor
    }

    /// One whole dB of RSSI past the edge (the receiver's resolution) as a
    /// distance factor: 10^(1/(10n)), ±12% at n = 2.
    public static func oneDecibel(pathLossExponent n: Double) -> Double {
        pow10(1 / (10 * n))
    }

    /// The band for `distance` given the band reported before.
    public func band(for distance: Double, previous: Proximity) -> Proximity {
        let plain: Proximity = distance < immediate ? .immediate : distance < near ? .near : .far
        guard previous != .unknown, previous != plain else { return plain }
        let f = hysteresisFactor
        switch (previous, plain) {
        case (.immediate, .near), (.immediate, .far):
            // Step out edge by edge, each only when passed by the factor.
            guard distance >= immediate * f else { return .immediate }
            return distance >= near * f ? .far : .near
        case (.near, .far):
            return distance >= near * f ? .far : .near
        case (.near, .immediate):
            return distance < immediate / f ? .immediate : .near
        case (.far, .near), (.far, .immediate):
            guard distance < near / f else { return .far }
            return distance < immediate / f ? .immediate : .near
        default:
            return plain
        }
    }
}
