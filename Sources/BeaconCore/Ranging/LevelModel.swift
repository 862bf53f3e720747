#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One way of explaining a beacon's RSSI: where the listener stands (the
/// level) plus, when the listener holds the device, the spot fading the
/// hand moves it through (`RSSIFilter.SpotFading`), plus per-packet noise.
///
/// A Kalman filter in dB with a Huber-clipped update, and two CUSUM change
/// detectors on the same standardized innovations, one for moves and one for
/// small moves (`ChangeDetector`). When either fires (someone walked up to
/// the counter, or stepped along it), the level is re-seeded from the median
/// of the samples since the change began.
///
/// How fast the level may drift depends on whether the listener is still.
/// Since the last change the model fits a line through the samples
/// (`LevelTrend`); the listener is **stationary** for this beacon when that
/// line is flat enough to rule out even a slow walk at the beacon's distance
/// (`walkingRate`, supplied by the caller from the path-loss model). While
/// stationary the level may only drift slowly and the filter keeps averaging;
/// otherwise it may move as fast as such a walk would move it.
///
/// The hand's fading is a mean-reverting (Ornstein–Uhlenbeck) component: it
/// comes back, where a walk's change persists. A model that has it does not
/// take a swaying hand for a walk, and averages through it; the price is
/// that a small real move looks like sway until it has lasted a few of the
/// fading's correlation times.
struct LevelModel: Sendable {
    /// The hand's fading this model explains, or `nil` for a device set down (the spot's fading is frozen into the level).
    let spotFading: RSSIFilter.SpotFading?
    /// The filtered level, dBm (`nan` before the first sample).
    private(set) var estimate: Double = .nan
    /// Variance of `estimate`, dB².
    private(set) var variance: Double
    private(set) var isStationary = false
    /// The hand's fading now, dB, its variance and its covariance with the level.
    private var fading = 0.0
    private var fadingVariance = 0.0
    private var covariance = 0.0
    private var lastTime: Timestamp?
    private var moves: ChangeDetector
    private var smallMoves: ChangeDetector
    private(set) var trend = LevelTrend(start: Timestamp(microsecondsSinceEpoch: 0))
    /// The slowest walking rate since `trend.start`: the level is logarithmic in
    /// distance, so a walk's average slope over the line is at least the rate at
    /// its farthest point, not at where the listener is now.
    private var slowestRate = Double.infinity

    /// The hand's fading's variance, dB² (0 for a device set down).
    private var fadingPower: Double { (spotFading?.sigma ?? 0) * (spotFading?.sigma ?? 0) }

    /// `parameters` are the filter's; they are not kept here but passed to
    /// each call, so a track holds them once rather than once per model.
    init(parameters: RSSIFilter.Parameters, spotFading: RSSIFilter.SpotFading?) {
        self.spotFading = spotFading
        variance = parameters.measurementSigma * parameters.measurementSigma
        moves = ChangeDetector(design: parameters.moveDetector)
        smallMoves = ChangeDetector(design: parameters.smallMoveDetector)
    }

    /// Takes the level `other` re-seeded after its detector fired: a move
    /// that model saw, whatever this one makes of it.
    mutating func follow(_ other: LevelModel) {
        estimate = other.estimate
        variance = other.variance
        restart(from: other.trend)
        isStationary = other.isStationary
    }

    /// What this model expects a packet `horizon` seconds from now to read
    /// (mean and variance, dB), `nil` before the first sample.
    func forecast(_ horizon: Double, walkingRate: Double, parameters: RSSIFilter.Parameters) -> ModelComparison.Prediction? {
        guard estimate.isFinite else { return nil }
        var mean = estimate
        var spread = variance + drift(walkingRate: walkingRate, parameters: parameters) * horizon + parameters.measurementSigma * parameters.measurementSigma
        if let ahead = fadingAhead(horizon) {
            mean += ahead.decay * fading
            spread += 2 * ahead.decay * covariance + ahead.variance
        }
        return ModelComparison.Prediction(mean: mean, variance: spread)
    }

    /// Folds the newest sample of `window` in.
    /// - Parameter walkingRate: dB/s by which a slow walk would move this
    ///   beacon's level now (it depends on the distance: see `Ranger.walkingRate`).
    /// - Returns: whether a detector fired and the level was re-seeded: the listener moved.
    @discardableResult
    mutating func update(
        rssi: Double, at time: Timestamp, walkingRate: Double, window: SampleWindow, parameters: RSSIFilter.Parameters
    ) -> Bool {
        defer { lastTime = time }
        let r = parameters.measurementSigma * parameters.measurementSigma
        guard let lastTime, estimate.isFinite else {
            estimate = rssi
            variance = r
            resetFading()
            restartStillness(at: time)
            return false
        }
        let gap = time - lastTime
        if gap > parameters.longestGap { restartStillness(at: time) }
        // Predict: while moving the level may change as fast as a walk moves it;
        // the hand's fading decays towards zero and is renewed.
        let elapsed = max(0, time.seconds(since: lastTime))
        variance += drift(walkingRate: walkingRate, parameters: parameters) * elapsed
        if let ahead = fadingAhead(elapsed) {
            fading *= ahead.decay
            covariance *= ahead.decay
            fadingVariance = ahead.variance
        }
        let predicted = variance + 2 * covariance + fadingVariance + r
        let spread = predicted.squareRoot()
        let standardized = (rssi - estimate - fading) / spread
        let clipped = min(max(standardized, -parameters.huberClip), parameters.huberClip)
        let innovation = clipped * spread
        let levelShare = variance + covariance
        let fadingShare = covariance + fadingVariance
        estimate += levelShare / predicted * innovation
        fading += fadingShare / predicted * innovation
        variance -= levelShare * levelShare / predicted
        covariance -= levelShare * fadingShare / predicted
        fadingVariance -= fadingShare * fadingShare / predicted

        // Both detectors see every innovation; a move found by either re-seeds.
        let moveStart = moves.add(clipped, at: time)
        let smallMoveStart = smallMoves.add(clipped, at: time)
        let start = moveStart ?? smallMoveStart
        var moved = false
        if let start, let reseed = window.median(since: start, now: time, span: parameters.memory) {
            estimate = reseed.median
            variance = Double.pi / 2 * r / Double(reseed.count)  // the variance of a sample median
            var since = LevelTrend(start: reseed.since)
            window.forEach(since: reseed.since) { since.append($0, at: $1) }
            restart(from: since)
            moved = true
        } else {
            // A wild packet would tilt the line: it counts at most three sigmas from the level.
            let limit = 3 * parameters.measurementSigma
            trend.append(min(max(rssi, estimate - limit), estimate + limit), at: time)
        }
        slowestRate = min(slowestRate, walkingRate)
        isStationary = Self.isFlat(trend, now: time, walkingRate: slowestRate, parameters: parameters)
        return moved
    }

    /// dB² per second the level may drift: slowly while still, as fast as a slow walk otherwise.
    private func drift(walkingRate: Double, parameters: RSSIFilter.Parameters) -> Double {
        isStationary ? parameters.stillProcessNoise : walkingRate * walkingRate
    }

    /// How the hand's fading stands `seconds` from now: the factor its value
    /// and covariance decay by, and its variance, renewed towards the
    /// fading's own (`nil` for a device set down).
    private func fadingAhead(_ seconds: Double) -> (decay: Double, variance: Double)? {
        guard let spotFading else { return nil }
        let decay = exp(-seconds / spotFading.correlationTime.seconds)
        return (decay, decay * decay * fadingVariance + fadingPower * (1 - decay * decay))
    }

    /// After a new level (re-seeded, or followed from the other model): the
    /// fading and the detectors start over, and the line runs from `trend`.
    private mutating func restart(from trend: LevelTrend) {
        resetFading()
        moves.reset()
        smallMoves.reset()
        self.trend = trend
        slowestRate = .infinity
    }

    /// After a level taken from recent samples: they carried the fading of
    /// the moment, so the level's error is that fading (of unknown sign) plus
    /// the samples' own noise, and the two are anticorrelated.
    private mutating func resetFading() {
        let power = fadingPower
        fading = 0
        fadingVariance = power
        covariance = -power
        variance += power
    }

    private mutating func restartStillness(at time: Timestamp) {
        trend = LevelTrend(start: time)
        slowestRate = .infinity
        isStationary = false
    }

    /// Flat: even at the slope's far confidence bound (two standard errors)
    /// the level changes at under half the rate of a slow walk.
    private static func isFlat(_ trend: LevelTrend, now: Timestamp, walkingRate: Double, parameters: RSSIFilter.Parameters) -> Bool {
        guard now - trend.start >= parameters.minimumStill,
            let fit = trend.slope(minimumSpread: parameters.quantization)
        else { return false }
        return abs(fit.slope) + 2 * fit.standardError < walkingRate / 2
    }
}
