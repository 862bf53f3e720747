/// A beacon's RSSI level, filtered: robust to outliers, averaging for as long
/// as the listener stands still, following a real move within a few seconds.
///
/// A one-dimensional Kalman filter in dB with a Huber-clipped update, and a
/// two-sided CUSUM change detector on the same standardized innovations.
/// When the detector fires (someone walked up to the counter), the level is
/// re-seeded from the median of the samples since the change began.
///
/// How fast the level may drift depends on whether the listener is still.
/// Since the last change the filter fits a line through the samples
/// (`LevelTrend`); the listener is **stationary** for this beacon when that
/// line is flat enough to rule out even a slow walk at the beacon's distance
/// (`walkingRate`, supplied by the caller from the path-loss model). While
/// stationary the level may only drift slowly and the filter keeps averaging
/// (like a 25 s window at 10 Hz, 80 s at 1 Hz); otherwise it may move as fast as such
/// a walk would move it.
/// Every constant is physical or textbook; none is fitted to a recording:
public struct RSSIFilter: Sendable {
    public struct Parameters: Hashable, Sendable {
        /// Per-packet spread, dB: fading across the three advertising channels
        /// and the body's shadow. 4 dB lies between the 3.27 dB of line-of-sight
        /// (Rician, K = 4) and the 5.57 dB of Rayleigh fading (`RangingUncertainty`),
        /// nearer the first, so the filter is not sluggish.
        public var measurementSigma = 4.0
        /// dB² per second the level drifts while the listener stands still:
        /// people passing, a door; 1 dB in 100 s. With 4 dB per packet the filter
        /// then averages like a 25 s window at 10 Hz, an 80 s one at 1 Hz
        /// (time constant √(R·Δt/Q): 12.6 s and 40 s).
        public var stillProcessNoise = 0.01
        /// Huber clip, in sigmas: the textbook 95%-efficient constant. One wild packet moves the level little.
        public var huberClip = 1.345
        /// CUSUM allowance and threshold, in sigmas: the textbook pair (k 0.5, h 5), which
        /// catches shifts of one sigma (4 dB, ×1.6 in distance) after a handful of packets.
        public var cusumAllowance = 0.5
        public var cusumThreshold = 5.0
        /// How far back a re-seed may look: the window holds 64 samples
        /// (6.4 s at 10 Hz); at 1 Hz this keeps a re-seed to the last 20 s,
        /// the span of one stand rather than of the walk before it.
        public var memory: Duration = .seconds(20)
        /// The shortest stillness the filter will call stationary: the line needs
        /// some span before its slope means anything.
        public var minimumStill: Duration = .seconds(2)
        /// A silence this long may hide a move (half again Bluetooth's longest
        /// advertising interval): stillness starts over after it.
        public var longestGap: Duration = .milliseconds(15_360)
        /// RSSI is whole dB (rounding alone spreads it by σ ≈ 0.3 dB): a run of equal
        /// values does not prove a flat line, so the slope's error uses at least this spread.
        public var quantization = 0.3

        public init() {}
    }

    public let parameters: Parameters
    /// The filtered level, dBm (`nan` before the first sample).
    public private(set) var estimate: Double = .nan
    /// Variance of `estimate`, dB².
    public private(set) var variance: Double
    public private(set) var samples = 0
    /// The signal says the listener has not moved relative to this beacon since `stillSince`.
    public private(set) var isStationary = false
    private var lastTime: Timestamp?
    private var upward = 0.0
    private var downward = 0.0
    private var upwardStart: Timestamp?
    private var downwardStart: Timestamp?
    private var window = SampleWindow()
    private var trend = LevelTrend(start: Timestamp(microsecondsSinceEpoch: 0))
    /// The slowest walking rate since `trend.start`: the level is logarithmic in
    /// distance, so a walk's average slope over the line is at least the rate at
    /// its farthest point, not at where the listener is now.
    private var slowestRate = Double.infinity

    public init(parameters: Parameters = Parameters()) {
        self.parameters = parameters
        variance = parameters.measurementSigma * parameters.measurementSigma
    }

    /// Folds one sample in.
    /// - Parameter walkingRate: dB/s by which a slow walk would move this
    ///   beacon's level now (it depends on the distance: see `Ranger.walkingRate`).
    public mutating func update(rssi: Double, at time: Timestamp, walkingRate: Double) {
        window.append(rssi, at: time)
        samples += 1
        defer { lastTime = time }
        let r = parameters.measurementSigma * parameters.measurementSigma
        guard let lastTime, estimate.isFinite else {
            estimate = rssi
            variance = r
            restartStillness(at: time)
            return
        }
        let gap = time - lastTime
        if gap > parameters.longestGap { restartStillness(at: time) }
        // Predict: while moving the level may change as fast as a walk moves it.
        let drift = isStationary ? parameters.stillProcessNoise : walkingRate * walkingRate
        variance += drift * max(0, time.seconds(since: lastTime))
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
            var since = LevelTrend(start: reseed.since)
            window.forEach(since: reseed.since) { since.append($0, at: $1) }
            trend = since
            slowestRate = .infinity
        } else {
            // A wild packet would tilt the line: it counts at most three sigmas from the level.
            let limit = 3 * parameters.measurementSigma
            trend.append(min(max(rssi, estimate - limit), estimate + limit), at: time)
        }
        slowestRate = min(slowestRate, walkingRate)
        isStationary = Self.isFlat(trend, now: time, walkingRate: slowestRate, parameters: parameters)
    }

    /// One-sigma uncertainty of the level, dB.
    public var sigma: Double { variance.squareRoot() }

    /// When the current stillness (or movement) began: the last change, gap or first sample.
    public var stillSince: Timestamp { trend.start }

    /// Packet-to-packet spread of the level since the last change, dB (`nil`
    /// until three samples): the fading the filter averages away.
    public var packetSpread: Double? { trend.residualVariance.map { $0.squareRoot() } }

    private mutating func restartStillness(at time: Timestamp) {
        trend = LevelTrend(start: time)
        slowestRate = .infinity
        isStationary = false
    }

    /// Flat: even at the slope's far confidence bound (two standard errors)
    /// the level changes at under half the rate of a slow walk.
    private static func isFlat(_ trend: LevelTrend, now: Timestamp, walkingRate: Double, parameters: Parameters) -> Bool {
        guard now - trend.start >= parameters.minimumStill,
            let fit = trend.slope(minimumSpread: parameters.quantization)
        else { return false }
        return abs(fit.slope) + 2 * fit.standardError < walkingRate / 2
    }
}
