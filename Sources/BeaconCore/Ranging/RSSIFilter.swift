/// A beacon's RSSI level, filtered: robust to outliers, averaging long while
/// the listener stands still, following a real move within a few packets.
///
/// A one-dimensional Kalman filter in dB with a Huber-clipped update, and a
/// two-sided CUSUM change detector on the same standardized innovations.
/// When the detector fires (someone walked up to the counter), the level is
/// re-seeded from the median of the samples since the change began.
/// Every constant is physical or textbook; none is fitted to a recording:
public struct RSSIFilter: Sendable {
    public struct Parameters: Hashable, Sendable {
        /// Per-packet spread, dB: log-normal shadowing indoors (4–6 dB) plus
        /// fading across the three advertising channels; the low end, so the filter is not sluggish.
        public var measurementSigma = 4.0
        /// dB² per second the level drifts while the listener stays put (about 1 dB in 10 s):
        /// a stationary averaging time of √(R/Q) ≈ 13 s.
        public var processNoise = 0.1
        /// Huber clip, in sigmas: the textbook 95%-efficient constant. One wild packet moves the level little.
        public var huberClip = 1.345
        /// CUSUM allowance and threshold, in sigmas: the textbook pair (k 0.5, h 5), which
        /// catches shifts of one sigma (4 dB, ×1.6 in distance) after a handful of packets.
        public var cusumAllowance = 0.5
        public var cusumThreshold = 5.0
        /// How far back a re-seed may look.
        public var memory: Duration = .seconds(20)

        public init() {}
    }

    public let parameters: Parameters
    /// The filtered level, dBm (`nan` before the first sample).
    public private(set) var estimate: Double = .nan
    /// Variance of `estimate`, dB².
    public private(set) var variance: Double
    public private(set) var samples = 0
    private var lastTime: Timestamp?
    private var upward = 0.0
    private var downward = 0.0
    private var upwardStart: Timestamp?
    private var downwardStart: Timestamp?
    private var window = SampleWindow()

    public init(parameters: Parameters = Parameters()) {
        self.parameters = parameters
        variance = parameters.measurementSigma * parameters.measurementSigma
    }

    public mutating func update(rssi: Double, at time: Timestamp) {
        window.append(rssi, at: time)
        samples += 1
        defer { lastTime = time }
        let r = parameters.measurementSigma * parameters.measurementSigma
        guard let lastTime, estimate.isFinite else {
            estimate = rssi
            variance = r
            return
        }
        // Predict: a long gap lets the level re-acquire quickly.
        variance += parameters.processNoise * max(0, (time - lastTime).seconds)
        let spread = (variance + r).squareRoot()
        let standardized = (rssi - estimate) / spread
        let clipped = min(max(standardized, -parameters.huberClip), parameters.huberClip)
        let gain = variance / (variance + r)
        estimate += gain * clipped * spread
        variance *= 1 - gain

        // The start of each side's current run estimates where a change began.
        if upward == 0 { upwardStart = time }
        if downward == 0 { downwardStart = time }
        upward = max(0, upward + clipped - parameters.cusumAllowance)
        downward = max(0, downward - clipped - parameters.cusumAllowance)
        let start = upward > parameters.cusumThreshold ? upwardStart : downward > parameters.cusumThreshold ? downwardStart : nil
        if let start, let reseed = window.median(since: start, now: time, span: parameters.memory) {
            estimate = reseed.median
            variance = Double.pi / 2 * r / Double(reseed.count)  // the variance of a sample median
            upward = 0
            downward = 0
        }
    }

    /// One-sigma uncertainty of the level, dB.
    public var sigma: Double { variance.squareRoot() }
}
