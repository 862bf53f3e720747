/// The log-distance path-loss model: `RSSI = P1m − 10·n·log10(d)`.
public struct PathLossModel: Hashable, Sendable {
    /// n: 2 in free space, 2.5–4 in rooms with people and furniture.
    public var exponent: Double

    public init(exponent: Double) {
        self.exponent = exponent
    }

    /// Metres from a (filtered) RSSI and the power measured at 1 m.
    public func distance(rssi: Double, measuredPower: Double) -> Double {
        pow10((measuredPower - rssi) / (10 * exponent))
    }

    /// RSSI expected at `distance` metres: the simulator's forward model.
    public func rssi(atDistance distance: Double, measuredPower: Double) -> Double {
        measuredPower - 10 * exponent * log10(max(distance, 0.01))
    }

    /// One-sigma distance uncertainty for an RSSI known to ±`rssiSigma` dB:
    /// the model's slope, d·ln10/(10n), times that sigma.
    public func distanceSigma(distance: Double, rssiSigma: Double) -> Double {
        distance * 2.302585092994046 / (10 * exponent) * rssiSigma
    }
}

@inline(__always) func pow10(_ x: Double) -> Double { exp(x * 2.302585092994046) }

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
