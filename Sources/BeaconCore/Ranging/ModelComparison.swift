#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Which of `RSSIFilter`'s two listener models foresees the packets better a
/// fading time ahead: once a second both forecast the packets due one
/// horizon later, and each packet is scored against the newest forecast due
/// by then. The scores (log-likelihood ratios) are remembered over a time
/// constant. Fixed storage: the forecasts in flight sit in a ring of eight,
/// so a beacon costs no allocation however long it is tracked (`InlineArray`
/// is why the package needs Swift 6.2).
struct ModelComparison: Sendable {
    /// What one model expects a packet to read.
    struct Prediction: Sendable {
        var mean: Double
        var variance: Double
        /// ½·ln(variance), taken once when the forecast is made.
        var halfLogVariance: Double

        init(mean: Double, variance: Double) {
            self.mean = mean
            self.variance = variance
            halfLogVariance = 0.5 * log(variance)
        }

        /// The log density of `rssi` (up to a constant; a wild packet counts as a three-sigma one).
        func fit(_ rssi: Double) -> Double {
            -0.5 * min((rssi - mean) * (rssi - mean) / variance, 9) - halfLogVariance
        }
    }

    private struct Forecast: Sendable {
        var due: Timestamp
        var setDown: Prediction
        var handHeld: Prediction
    }

    private static let spacing: Duration = .seconds(1)
    private typealias Ring = InlineArray<8, Forecast>
    private static let capacity = Ring.count
    private var ring = Ring(
        repeating: Forecast(
            due: Timestamp(microsecondsSinceEpoch: 0), setDown: Prediction(mean: 0, variance: 1), handHeld: Prediction(mean: 0, variance: 1)))
    private var head = 0
    private var count = 0
    private var lastMade: Timestamp?
    private var lastDecay: Timestamp?
    /// How much better the hand-held model foresaw the recent packets: a log-likelihood ratio with fading memory.
    private var handHeldAdvantage = 0.0

    var favoursHandHeld: Bool { handHeldAdvantage > 0 }

    /// Scores `rssi` against the newest forecast due by `time`, after dropping those overdue by more than the spacing.
    mutating func score(_ rssi: Double, at time: Timestamp) {
        while count > 0, ring[head].due < time - Self.spacing {
            head = (head + 1) % Self.capacity
            count -= 1
        }
        var newest: Int?
        for offset in 0..<count {
            let index = (head + offset) % Self.capacity
            guard ring[index].due <= time else { break }
            newest = index
        }
        if let newest { handHeldAdvantage += ring[newest].handHeld.fit(rssi) - ring[newest].setDown.fit(rssi) }
    }

    /// Whether a second has passed since the last forecast was made.
    func wantsForecast(at time: Timestamp) -> Bool {
        lastMade.map { time - $0 >= Self.spacing } ?? true
    }

    /// Adds both models' forecasts for `due`, and lets the scores fade by the time since the last forecast.
    mutating func add(due: Timestamp, setDown: Prediction, handHeld: Prediction, at time: Timestamp, memory: Duration) {
        if let lastDecay { handHeldAdvantage *= exp(-max(0, time.seconds(since: lastDecay)) / memory.seconds) }
        lastDecay = time
        lastMade = time
        if count == Self.capacity {
            head = (head + 1) % Self.capacity
            count -= 1
        }
        ring[(head + count) % Self.capacity] = Forecast(due: due, setDown: setDown, handHeld: handHeld)
        count += 1
    }
}
