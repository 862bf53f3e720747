#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What ranging knows of a beacon's distance: log-normal, ln d ~ N(ln `median`, `logSigma`²).
///
/// RSSI errors in dB are roughly normal (shadowing, calibration), and the
/// path-loss model turns dB into ln d linearly, so ln d is normal. With a prior
/// flat in ln d (no distance scale preferred: we do not know the room), the
/// posterior's median is the point estimate, `accuracy` its one-sigma
/// half-width in metres, and the proximity band comes from the same
/// distribution (`ProximityClassifier`).
public struct DistanceDistribution: Hashable, Sendable {
    public var median: Double
    public var logSigma: Double

    public init(median: Double, logSigma: Double) {
        self.median = median
        self.logSigma = max(0, logSigma)
    }

    /// The probability that the distance is below `edge` metres.
    public func probability(below edge: Double) -> Double {
        guard edge > 0 else { return 0 }
        guard logSigma > 0 else { return median < edge ? 1 : 0 }
        return 0.5 * erfc(-log(edge / median) / (logSigma * 2.squareRoot()))
    }

    /// The half-width a with P(|d − median| ≤ a) = 68.27 % (one sigma of a
    /// normal): `|distance − truth| ≤ accuracy` about two times in three.
    /// Solved by bisection on a/median, which depends on `logSigma` alone.
    public var accuracy: Double {
        guard logSigma > 0 else { return 0 }
        func covered(_ u: Double) -> Double {
            let upper = 0.5 * erfc(-log1p(u) / (logSigma * 2.squareRoot()))
            let lower = u < 1 ? 0.5 * erfc(-log1p(-u) / (logSigma * 2.squareRoot())) : 0
            return upper - lower
        }
        var low = 0.0
        var high = exp(3 * logSigma)  // covers more than 99.8 % from above alone
        for _ in 0..<50 {
            let middle = (low + high) / 2
            if covered(middle) < Self.oneSigma { low = middle } else { high = middle }
        }
        return median * (low + high) / 2
    }

    /// The share of a normal distribution within one sigma of its mean.
    public static let oneSigma = 0.682_689_492_137_086
}
