import BeaconCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A slow sinusoidal sway of the received level, added to a recording to
/// stand for a phone held in a hand: the body and the hand move the level by
/// a few dB over seconds while the distance stays the same. A still
/// listener's estimate should average it away, as a 20 s average does;
/// `beacond evaluate --trace FILE --sway DB:SECONDS` shows whether it does.
public struct Sway: Sendable, Equatable {
    /// Peak deviation, dB.
    public var amplitude: Double
    /// One full swing, seconds.
    public var period: Double

    public init(amplitude: Double, period: Double) {
        self.amplitude = amplitude
        self.period = period
    }

    /// `DB:SECONDS`, e.g. `3:8`; `nil` unless both are finite, the amplitude is
    /// 0–40 dB and the period over 0 s.
    public init?(argument: String) {
        let parts = argument.split(separator: ":")
        guard parts.count == 2, let amplitude = Double(parts[0]), let period = Double(parts[1]),
            amplitude.isFinite, period.isFinite, (0...40).contains(amplitude), period > 0
        else { return nil }
        self.init(amplitude: amplitude, period: period)
    }

    /// The trace with every reading swayed (rounded to whole dB as receivers
    /// report it, kept within −127…−1 dBm: 0 and 127 mean "no reading", and
    /// a row without a reading stays without one); the truth is unchanged.
    public func applied(to trace: Trace) -> Trace {
        var swayed = trace
        for index in swayed.rows.indices where BeaconSighting.reading(swayed.rows[index].rssi) != nil {
            let seconds = Double(swayed.rows[index].timeMilliseconds) / 1000
            let level = Double(swayed.rows[index].rssi) + amplitude * sin(2 * Double.pi * seconds / period)
            swayed.rows[index].rssi = Int8(min(-1, max(-127, level.rounded())))
        }
        return swayed
    }
}
