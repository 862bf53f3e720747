/// How far a distance from RSSI can be off, beyond the noise the filter
/// averages: what stays the same for as long as the listener stands where
/// they are, and what the model itself gets wrong.
///
/// Per packet, RSSI = P1m − 10·n·log10(d) + X_spot + fading. In x = ln d the
/// errors add up as σ_x² = (ln 10 / (10 n))² (σ_filter² + σ_spot² + σ_cal²) + (x·σ_n / n)².
public struct RangingUncertainty: Hashable, Sendable {
    /// Small-scale fading at one frequency, dB. With a line of sight, as at a
    /// counter a few metres from its beacon, the field is Rician; indoor
    /// measurements with omnidirectional antennas report K ≈ 5–6 dB (e.g.
    /// "Spatial and Temporal Variation of Wideband Indoor Channels", Int. J.
    /// Antennas Propag. 2010, table 4), and for K = 4 (6 dB) the received power in dB
    /// has a standard deviation of 3.27 dB (5.57 dB with no line of sight).
    /// The part of it that changes from packet to packet (the three
    /// advertising channels, a hand, people passing) shows as the packets'
    /// spread and is averaged away; what does not change is frozen at the
    /// listener's spot (`frozenFading`).
    public var fadingSigma = Self.ricianFading
    /// The standard deviation of received power in dB under Rician fading with K = 4.
    public static let ricianFading = 3.27
    /// Error of the power at 1 m, dB: a measured power is one device's
    /// median at one orientation; 2 dB is the low end of the 2–3 dB reported
    /// between calibrations and between phones.
    public var calibrationSigma = 2.0
    /// Spread of the path-loss exponent indoors: measured values run from about
    /// 1.6 (corridors) to 3.5 (cluttered rooms); ±0.5 about the configured one.
    public var exponentSigma = 0.5

    /// iBeacons advertise on channels 37, 38 and 39 (2402, 2426, 2480 MHz),
    /// further apart than an indoor channel's coherence bandwidth (a few MHz
    /// for delay spreads of tens of nanoseconds): at best three independent
    /// fades at one spot.
    public static let advertisingChannels = 3.0

    public init() {}

    /// The fading frozen at the listener's spot, dB²: σ_F² less what the
    /// packets' spread (`nil`: not yet known) has shown to change. A device
    /// set down sees its spot through the three advertising channels only,
    /// and the mean of three independent fades keeps a third of their
    /// variance however long it is averaged; a device in a hand moves
    /// through the field and can average all of it away.
    public func frozenFading(packetSpread: Double?, listener: RSSIFilter.Listener) -> Double {
        let fading = fadingSigma * fadingSigma
        let shown = min(fading, (packetSpread ?? 0) * (packetSpread ?? 0))
        let floor = listener == .setDown ? fading / Self.advertisingChannels : 0
        return max(floor, fading - shown)
    }

    /// σ of ln d for a level known to `filterVariance` dB², whose packets
    /// spread by `packetSpread` dB, reported by the `listener` model, at
    /// x = ln d under exponent `exponent`.
    public func logSigma(
        logDistance x: Double, filterVariance: Double, packetSpread: Double?, listener: RSSIFilter.Listener, exponent: Double
    ) -> Double {
        let decibels =
            max(0, filterVariance) + frozenFading(packetSpread: packetSpread, listener: listener) + calibrationSigma * calibrationSigma
        let scale = 2.302585092994046 / (10 * exponent)
        let exponentTerm = x * exponentSigma / exponent
        return (scale * scale * decibels + exponentTerm * exponentTerm).squareRoot()
    }
}
