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

    /// How fast, in dB/s, the level changes for a listener moving straight
    /// towards or away from the beacon at `speed` m/s, `distance` metres
    /// from it: |dRSSI/dd| · v = 10·n / (ln 10 · d) · v.
    public func levelRate(distance: Double, speed: Double) -> Double {
        10 * exponent / 2.302585092994046 * speed / max(distance, 0.1)
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
