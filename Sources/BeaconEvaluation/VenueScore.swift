import BeaconCore

/// How well a method named the nearest venue over a walk with known truth.
public struct VenueScore: Sendable, Equatable {
    /// Share of standing-still time the answer was the truly nearest venue.
    public var accuracy: Double
    /// For each stop where a venue can be heard, how long after arriving the answer first became right (`nil`: never).
    public var timesToCorrect: [Duration?]
    /// Switches into a venue that was not (within 10%) the truly nearest at that moment or shortly before.
    public var spuriousSwitches: Int
    public var switches: Int

    /// How far back a switch may look for the truth it follows: answers
    /// that trail a walking listener by this much are late, not wrong.
    public static let lagAllowance: Duration = .seconds(3)

    /// One moment of a walk: the truth, and the stop being waited at (`nil` while walking).
    public struct Tick: Sendable {
        public var time: Duration
        /// The truly nearest venue; `nil` when no beacon can be heard.
        public var truth: String?
        /// Venues no more than 10% farther than the nearest: switching to one is not spurious.
        public var acceptable: [String]
        public var stop: Int?

        public init(time: Duration, truth: String?, acceptable: [String], stop: Int?) {
            self.time = time
            self.truth = truth
            self.acceptable = acceptable
            self.stop = stop
        }
    }

    /// - Parameters:
    ///   - ticks: the walk, tick by tick.
    ///   - answers: per tick, the venue the method answered.
    ///   - stops: how many stops the walk has; time to correct is measured at
    ///     those where a venue can be heard on arrival.
    public init(ticks: [Tick], answers: [String?], stops: Int) {
        var stationary = 0
        var right = 0
        var arrival: [Int: Duration] = [:]
        var firstRight: [Int: Duration] = [:]
        var spurious = 0
        var switches = 0
        var windowStart = 0
        for (index, tick) in ticks.enumerated() {
            if let stop = tick.stop {
                stationary += 1
                if answers[index] == tick.truth { right += 1 }
                if arrival[stop] == nil, tick.truth != nil { arrival[stop] = tick.time }
                if arrival[stop] != nil, firstRight[stop] == nil, answers[index] == tick.truth { firstRight[stop] = tick.time }
            }
            while ticks[windowStart].time < tick.time - Self.lagAllowance { windowStart += 1 }
            if index > 0, answers[index] != answers[index - 1], let answer = answers[index] {
                switches += 1
                if !ticks[windowStart...index].contains(where: { $0.acceptable.contains(answer) }) { spurious += 1 }
            }
        }
        accuracy = stationary == 0 ? 0 : Double(right) / Double(stationary)
        timesToCorrect = (0..<stops).compactMap { stop in
            arrival[stop].map { start in firstRight[stop].map { $0 - start } }
        }
        spuriousSwitches = spurious
        self.switches = switches
    }

    public var medianTimeToCorrect: Duration? {
        let known = timesToCorrect.compactMap { $0 }.sorted()
        guard known.count == timesToCorrect.count, !known.isEmpty else { return nil }
        return known[known.count / 2]
    }

    /// The slowest stop; `nil` if some stop was never answered right.
    public var worstTimeToCorrect: Duration? {
        timesToCorrect.contains(where: { $0 == nil }) ? nil : timesToCorrect.compactMap { $0 }.max()
    }
}

/// Region events against the truth of when the listener could hear a region's beacons.
public struct RegionScore: Sendable, Equatable {
    public var enterLatencies: [Duration] = []
    public var exitLatencies: [Duration] = []
    /// Enters while the truth was outside, exits while it was inside.
    public var spuriousEvents = 0

    public init() {}
}
