#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A beacon's proximity as the band it most probably is in, given the
/// filtered RSSI and how uncertain it is — rather than the band its point
/// distance happens to fall in.
///
/// In x = ln d the estimate is normal: the filter's variance plus the
/// shadowing a standing listener keeps (a position's offset from the
/// path-loss line, which no averaging removes), scaled by ln 10 / (10 n).
/// Combined with the prior of a listener anywhere on a floor around the beacon,
/// p(d) ∝ d (so p(x) ∝ e^{2x}), the posterior of x is normal with its mean
/// moved by 2 s². The band with the largest posterior mass wins; a beacon
/// leaves its band only when another is more probable by `switchMargin`, so a
/// beacon on an edge does not flicker.
public struct ProximityClassifier: Hashable, Sendable {
    public var bands: ProximityBands
    public var pathLossExponent: Double
    /// Shadowing at a standing position that averaging cannot remove, in dB (one sigma).
    public var positionSigma: Double = 2
    /// How much more probable another band must be before the band changes.
    public var switchMargin: Double = 0.1

    public init(bands: ProximityBands, pathLossExponent: Double) {
        self.bands = bands
        self.pathLossExponent = pathLossExponent
    }

    /// Posterior probabilities of the three bands (a value, so ranging allocates nothing).
    public struct Probabilities: Hashable, Sendable {
        public var immediate: Double
        public var near: Double
        public var far: Double

        public subscript(band: Proximity) -> Double {
            switch band {
            case .immediate: immediate
            case .near: near
            case .far: far
            case .unknown: 0
            }
        }

        /// The most probable band.
        public var best: Proximity {
            if immediate >= near, immediate >= far { return .immediate }
            return near >= far ? .near : .far
        }
    }

    /// The bands' posterior probabilities for an estimated distance whose RSSI
    /// estimate has variance `rssiVariance` (dB²).
    public func probabilities(distance: Double, rssiVariance: Double) -> Probabilities {
        let scale = 2.302585092994046 / (10 * pathLossExponent)
        let variance = (max(0, rssiVariance) + positionSigma * positionSigma) * scale * scale
        let sigma = variance.squareRoot()
        let mean = log(distance) + 2 * variance
        func below(_ edge: Double) -> Double { 0.5 * erfc(-(log(edge) - mean) / (sigma * 2.squareRoot())) }
        let immediate = below(bands.immediate)
        let far = 1 - below(bands.near)
        return Probabilities(immediate: immediate, near: max(0, 1 - immediate - far), far: far)
    }

    /// The most probable band, keeping `previous` unless another beats it by the margin.
    public func band(distance: Double, rssiVariance: Double, previous: Proximity) -> Proximity {
        let probability = probabilities(distance: distance, rssiVariance: rssiVariance)
        let best = probability.best
        guard previous != .unknown, best != previous else { return best }
        return probability[best] - probability[previous] < switchMargin ? previous : best
    }
}
