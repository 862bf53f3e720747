#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A beacon's RSSI level, filtered: robust to outliers, averaging for as long
/// as the listener stands still, following a real move within a few seconds,
/// and not taking a swaying hand for a move.
///
/// Two models run side by side on the same samples (`LevelModel`): a device
/// set down, whose spot's fading is frozen into the level, and a device in
/// a hand, whose fading changes as the hand sways and comes back. The first
/// catches small moves fast; the second averages through the sway that the
/// first would take for moves. Whichever foresaw the recent packets better
/// a fading time ahead is the one reported: each model forecasts, once a
/// second, the packets due one correlation time of the hand's fading later,
/// and the log densities of those packets under the two forecasts are
/// compared, remembered over `comparisonMemory`. One packet ahead the
/// hand-held model always looks good, because its fading follows whatever
/// happens; a fading time ahead, a swing has come back and a move (even a
/// slow one, a robot's ramp) has not, which is what tells them apart. Both
/// start equal, and the set-down model wins ties.
///
/// The set-down model sees moves first: one of at least its move detector's design
/// shift is handed to the hand-held model, provisionally. If within one
/// fading time the level comes back nearer where it was, it was a swing: the
/// hand-over is undone and the hand-held model replays the samples it missed
/// (at most the window's 64), as if it had never followed.
/// Every constant is physical, textbook or a design choice whose reason is
/// given (4 dB, the re-seed memory, the shortest stillness, the comparison's
/// memory); none is fitted to a recording:
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
        /// Moves: the textbook CUSUM (k 0.5, h 5), built for a shift of one
        /// sigma (4 dB, ×1.6 in distance), which it catches after a handful of packets.
        public var moveDetector = Detector(allowance: 0.5, threshold: 5)
        /// Small moves: a CUSUM built for half that shift (2 dB: half a metre
        /// at 2 m from the beacon, a robot's or a queue's slow creep). The move
        /// detector has no margin at that shift, and the filter, averaging a
        /// still listener, eats into it as it follows, so it often never
        /// fires. The threshold is the round one at which this detector
        /// false-alarms no more often than the move detector on the filter's
        /// own noise (4 dB per packet, Gaussian): 28 against 40 times in eight
        /// hours at 10 Hz (`SmallMoveDetectorTests`; at 9, more often). For the
        /// raw CUSUM, Siegmund's approximation would have given 8.5; the
        /// clipped innovations of a filter that follows the level change that.
        public var smallMoveDetector = Detector(allowance: 0.25, threshold: 9.5)
        /// The shift the move detector is built to catch, dB.
        public var designShift: Double { moveDetector.shift * measurementSigma }
        /// How far back a re-seed may look: the window holds 64 samples
        /// (6.4 s at 10 Hz); at 1 Hz this keeps a re-seed to the last 20 s,
        /// the span of one stand rather than of the walk before it.
        public var memory: Duration = .seconds(20)
        /// The shortest stillness the filter will call stationary: the line needs
        /// some span before its slope means anything.
        public var minimumStill: Duration = .seconds(2)
        /// A silence this long may hide a move (half again Bluetooth's longest
        /// advertising interval): stillness starts over after it.
        public var longestGap = RegionMonitor.longestGap
        /// RSSI is whole dB (rounding alone spreads it by σ ≈ 0.3 dB): a run of equal
        /// values does not prove a flat line, so the slope's error uses at least this spread.
        public var quantization = 0.3

        /// The hand-held model's fading (`LevelModel`).
        public var handHeld = SpotFading()
        /// How long the comparison of the two models' forecasts remembers (its
        /// time constant): a dozen of the hand's fading times, so a few swings
        /// decide nothing, and short enough to notice within a minute or two
        /// that a phone was picked up or set down.
        public var comparisonMemory: Duration = .seconds(60)

        public init() {}
    }

    /// Small-scale fading that a hand moves the device through while the
    /// listener stands still: it changes and comes back, where a walk's
    /// change persists.
    public struct SpotFading: Hashable, Sendable {
        /// dB: the fading at one spot (`RangingUncertainty.ricianFading`);
        /// moving the device by half a wavelength (6 cm) draws it afresh.
        public var sigma = RangingUncertainty.ricianFading
        /// How long the hand takes to move the device half a wavelength:
        /// quiet standing sways at about 1 cm/s (centre-of-pressure mean
        /// velocity, Prieto et al., IEEE Trans. Biomed. Eng. 43(9), 1996), so 6 cm take about 5 s.
        public var correlationTime: Duration = .seconds(5)

        public init() {}
    }

    /// A CUSUM change detector's design, in sigmas of the standardized innovation.
    public struct Detector: Hashable, Sendable {
        /// k: the drift each innovation must exceed to count towards a change.
        public var allowance: Double
        /// h: how much counted drift makes a change.
        public var threshold: Double
        /// The shift the detector is built to catch, in sigmas (2k).
        public var shift: Double { 2 * allowance }

        public init(allowance: Double, threshold: Double) {
            self.allowance = allowance
            self.threshold = threshold
        }
    }

    /// How the listener holds the device, as far as the packets tell.
    public enum Listener: String, Hashable, Sendable {
        case setDown = "set-down"
        case handHeld = "hand-held"
    }

    public let parameters: Parameters
    public private(set) var samples = 0
    /// The model whose figures are reported.
    public private(set) var listener = Listener.setDown
    private var window = SampleWindow()
    private var setDown: LevelModel
    private var handHeld: LevelModel
    private var comparison = ModelComparison()
    /// The hand-held model as it was before a move was handed over, kept for
    /// one fading time in case the "move" was a swing that comes back.
    private var beforeHandOver: (model: LevelModel, level: Double, at: Timestamp)?

    public init(parameters: Parameters = Parameters()) {
        self.parameters = parameters
        setDown = LevelModel(parameters: parameters, spotFading: nil)
        handHeld = LevelModel(parameters: parameters, spotFading: parameters.handHeld)
        variance = setDown.variance
        stillSince = setDown.trend.start
    }

    /// Folds one sample in.
    /// - Parameter walkingRate: dB/s by which a slow walk would move this
    ///   beacon's level now (it depends on the distance: see `Ranger.walkingRate`).
    public mutating func update(rssi: Double, at time: Timestamp, walkingRate: Double) {
        window.append(rssi, at: time)
        samples += 1
        let moved = setDown.update(rssi: rssi, at: time, walkingRate: walkingRate, window: window, parameters: parameters)
        handHeld.update(rssi: rssi, at: time, walkingRate: walkingRate, window: window, parameters: parameters)
        // The set-down model's detectors see moves first; one at least as
        // large as the move detector's design shift (2k sigmas, 4 dB) is a move
        // for the hand-held model too, which would otherwise take a few of
        // its fading times to believe it.
        if moved, abs(setDown.estimate - handHeld.estimate) >= parameters.designShift {
            beforeHandOver = (handHeld, setDown.estimate, time)
            handHeld.follow(setDown)
        } else if let before = beforeHandOver {
            // A swing comes back within about one fading time; a move stays.
            if time - before.at > parameters.handHeld.correlationTime {
                beforeHandOver = nil
            } else if abs(setDown.estimate - before.model.estimate) < abs(setDown.estimate - before.level) {
                // Undo the hand-over: the model goes on as if it had not
                // followed, through the samples it missed (at most a window's).
                var model = before.model
                let (window, parameters) = (window, parameters)
                window.forEach(after: before.at) { rssi, at in
                    model.update(rssi: rssi, at: at, walkingRate: walkingRate, window: window, parameters: parameters)
                }
                handHeld = model
                beforeHandOver = nil
            }
        }
        comparison.score(rssi, at: time)
        let horizon = parameters.handHeld.correlationTime
        if comparison.wantsForecast(at: time),
            let setForecast = setDown.forecast(horizon.seconds, walkingRate: walkingRate, parameters: parameters),
            let heldForecast = handHeld.forecast(horizon.seconds, walkingRate: walkingRate, parameters: parameters)
        {
            comparison.add(
                due: time + horizon, setDown: setForecast, handHeld: heldForecast, at: time, memory: parameters.comparisonMemory)
        }
        listener = comparison.favoursHandHeld ? .handHeld : .setDown
        report(listener == .handHeld ? handHeld : setDown)
    }

    // The reported model's figures, copied out after each sample. Read
    // through the engine's array of tracks, a computed figure made Swift copy
    // the whole filter (about 2 kB) at every read: callgrind counted 8.9 k
    // instructions per advertisement with them, 6.7 k with these.

    /// The filtered level, dBm (`nan` before the first sample).
    public private(set) var estimate = Double.nan
    /// Variance of `estimate`, dB².
    public private(set) var variance: Double
    /// The signal says the listener has not moved relative to this beacon since `stillSince`.
    public private(set) var isStationary = false
    /// When the current stillness (or movement) began: the last change, gap or first sample.
    public private(set) var stillSince: Timestamp
    /// Packet-to-packet spread of the level since the last change, dB (`nil`
    /// until three samples): the fading the filter averages away.
    public private(set) var packetSpread: Double?
    /// One-sigma uncertainty of the level, dB.
    public var sigma: Double { variance.squareRoot() }

    private mutating func report(_ model: LevelModel) {
        estimate = model.estimate
        variance = model.variance
        isStationary = model.isStationary
        stillSince = model.trend.start
        packetSpread = model.trend.residualVariance.map { $0.squareRoot() }
    }
}
