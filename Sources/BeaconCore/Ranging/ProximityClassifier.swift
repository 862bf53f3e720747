#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A beacon's proximity as the band it most probably is in, under the
/// distance distribution ranging reports (`DistanceDistribution`: the filter's
/// noise, the spot's frozen fading, calibration and the exponent's spread)
/// — rather than the band its point distance happens to fall in.
///
/// The prior is flat in ln d, as the distribution's: no band is favoured
/// for its own sake. (A floor prior, p(d) ∝ d, moves the mean by 2σ² in
/// ln d — ×1.8 at an honest σ — and made estimates lean "far".) The band
/// with the largest posterior mass wins; a beacon leaves its band only when
/// another is more probable by `switchMargin`, so a beacon on an edge does not flicker.
public struct ProximityClassifier: Hashable, Sendable {
    public var bands: ProximityBands
    /// How much more probable another band must be before the band changes:
    /// the hysteresis SPEC asks for. At a typical σ of ln d of 0.3, 0.1 of
    /// probability is about ±4 % of the distance around an edge — more than
    /// a still listener's filtered level wanders (a few tenths of a dB).
    /// Set from `RangingSettings.proximityHysteresis`.
    public var switchMargin: Double = RangingSettings().proximityHysteresis

    public init(bands: ProximityBands) {
        self.bands = bands
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

    /// The bands' probabilities under `distance`.
    public func probabilities(_ distance: DistanceDistribution) -> Probabilities {
        let immediate = distance.probability(below: bands.immediate)
        let far = 1 - distance.probability(below: bands.near)
        return Probabilities(immediate: immediate, near: max(0, 1 - immediate - far), far: far)
    }

    /// The most probable band, keeping `previous` unless another beats it by the margin.
    public func band(_ distance: DistanceDistribution, previous: Proximity) -> Proximity {
        let probability = probabilities(distance)
        let best = probability.best
        guard previous != .unknown, best != previous else { return best }
        return probability[best] - probability[previous] < switchMargin ? previous : best
    }
}
