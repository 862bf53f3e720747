/// A least-squares line through a beacon's RSSI samples since a start time,
/// kept as running sums: constant memory however long the listener stands
/// still. Its slope says whether the level is moving (someone walking
/// towards or away from the beacon); its residual spread is the packet-to-
/// packet fading that averaging removes.
struct LevelTrend: Sendable {
    private(set) var start: Timestamp
    private(set) var count = 0
    private var sumT = 0.0
    private var sumTT = 0.0
    private var sumY = 0.0
    private var sumTY = 0.0
    private var sumYY = 0.0

    init(start: Timestamp) {
        self.start = start
    }

    mutating func append(_ value: Double, at time: Timestamp) {
        let t = time.seconds(since: start)
        count += 1
        sumT += t
        sumTT += t * t
        sumY += value
        sumTY += t * value
        sumYY += value * value
    }

    /// The slope (dB/s) and its standard error; `nil` until three samples span some time.
    /// The error uses the residual spread, floored at `minimumSpread` (RSSI is
    /// reported in whole dB, so a run of equal values does not prove a flat line).
    func slope(minimumSpread: Double) -> (slope: Double, standardError: Double)? {
        guard let fit, fit.spreadT > 1e-9 else { return nil }
        let variance = max(fit.residualVariance, minimumSpread * minimumSpread)
        return (fit.slope, (variance / fit.spreadT).squareRoot())
    }

    /// Variance of the samples about the line, dB² (about their mean if they span no time); `nil` below three samples.
    var residualVariance: Double? { fit?.residualVariance }

    private var fit: (slope: Double, spreadT: Double, residualVariance: Double)? {
        guard count >= 3 else { return nil }
        let n = Double(count)
        let spreadT = sumTT - sumT * sumT / n
        let slope = spreadT > 1e-9 ? (sumTY - sumT * sumY / n) / spreadT : 0
        let spreadY = sumYY - sumY * sumY / n
        return (slope, spreadT, max(0, spreadY - slope * slope * spreadT) / (n - 2))
    }
}
