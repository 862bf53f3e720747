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
    /// Solved for u = a/median, which depends on `logSigma` alone, by Newton's
    /// method kept inside a shrinking bracket (a handful of steps: ranging
    /// calls this for every beacon at every sighting and tick).
    public var accuracy: Double {
        guard logSigma > 0 else { return 0 }
        let s = logSigma
        let root2 = 2.squareRoot()
        let density = 1 / (2 * Double.pi).squareRoot()
        var low = 0.0
        var high = exp(3 * s)  // covers more than 99.8 % from above alone
        var u = min(s, high / 2)  // the narrow limit: a ≈ median·σ
        for _ in 0..<60 {
            let z1 = log1p(u) / s
            var covered = 0.5 * erfc(-z1 / root2)
            var slope = density * exp(-z1 * z1 / 2) / (s * (1 + u))
            if u < 1 {
                let z2 = log1p(-u) / s
                covered -= 0.5 * erfc(-z2 / root2)
                slope += density * exp(-z2 * z2 / 2) / (s * (1 - u))
            }
            let excess = covered - Self.oneSigma
            if abs(excess) < 1e-10 { break }
            if excess < 0 { low = u } else { high = u }
            let newton = u - excess / slope
            u = newton > low && newton < high && slope > 0 ? newton : (low + high) / 2
        }
        return median * u
    }

    /// The share of a normal distribution within one sigma of its mean.
    public static let oneSigma = 0.682_689_492_137_086
}
