/// A beacon's RSSI, filtered: rejects outliers, averages long while the
/// listener stands still, and follows a real change within a few seconds.
///
/// A one-dimensional Kalman filter in dB. Its measurement noise is estimated
/// robustly (MAD) from the recent samples, so a noisy room is trusted less than
/// a quiet one. Its process noise is small, because people stand still at
/// counters; a change detector compares the median of the last few seconds with
/// the estimate and, when they disagree beyond the noise, jumps to that median
/// (someone walked up to the counter).
public struct RSSIFilter: Sendable {
    public struct Parameters: Hashable, Sendable {
        /// dB² per second the true level may wander while nobody moves.
        public var processNoise = 0.2
        /// Samples of the last this-long are checked for a real change.
        public var changeWindow: Duration = .seconds(3)
        /// A change is real when the window's median is this many sigmas away ...
        public var changeSigmas = 4.0
        /// ... and at least this many dB.
        public var changeFloor = 2.0
        /// Log-normal shadowing indoors is 4–6 dB: the prior for the measurement noise.
        public var initialVariance = 16.0
        /// Never trust a single sample better than ±1 dB (RSSI is reported in whole dB).
        public var minimumVariance = 1.0

        public init() {}
    }

    public let parameters: Parameters
    public private(set) var estimate: Double = .nan
    /// Variance of `estimate`, dB².
    public private(set) var variance: Double
    /// Variance of one sample around the estimate, dB², from the recent spread.
    public private(set) var measurementVariance: Double
    public private(set) var samples = 0
    private var lastTime: Timestamp?
    private var window = SampleWindow()

    public init(parameters: Parameters = Parameters()) {
        self.parameters = parameters
        variance = parameters.initialVariance
        measurementVariance = parameters.initialVariance
    }

    public mutating func update(rssi: Double, at time: Timestamp) {
        window.append(rssi, at: time, keeping: parameters.changeWindow)
        samples += 1
        defer { lastTime = time }
        guard let lastTime, estimate.isFinite else {
            estimate = rssi
            variance = parameters.initialVariance
            return
        }
        variance += parameters.processNoise * max(0, (time - lastTime).seconds)
        let recent = window.median()
        if window.count >= 3 {
            let sigma = window.robustSigma(around: recent)
            measurementVariance = max(parameters.minimumVariance, sigma * sigma)
        }
        let innovation = rssi - estimate
        let gate = max(3 * (variance + measurementVariance).squareRoot(), 6)
        if abs(innovation) <= gate {
            let gain = variance / (variance + measurementVariance)
            estimate += gain * innovation
            variance *= 1 - gain
        }
        if window.count >= 3 {
            let spread = (measurementVariance / Double(window.count) + variance).squareRoot()
            if abs(recent - estimate) > max(parameters.changeFloor, parameters.changeSigmas * spread) {
                estimate = recent
                variance = measurementVariance / Double(window.count)
            }
        }
    }

    /// One-sigma uncertainty of the estimate, dB.
    public var sigma: Double { variance.squareRoot() }
}
