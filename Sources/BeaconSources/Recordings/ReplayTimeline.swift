import BeaconCore

/// Where each event of a recording goes on its replay's timeline: its own
/// time, unless that time cannot be right. A pure value, fed one event at a
/// time with the next one's time (a lone bad time is told from a clock that
/// was set by whether the event after it agrees).
///
/// - An event without a time (a plain hcidump log; a pcapng simple packet)
///   comes `untimedSpacing` after the one before, the first at the start.
///   When timed events follow untimed ones, the recording's times go on
///   from where those left off.
/// - A time outside `plausible` (a flipped top bit, a field never set) is
///   damaged: the event is placed as an untimed one. Left as it was, 2^63 µs
///   held the engine's clock at its end for good.
/// - A time more than `backwardTolerance` away from the timed event before it,
///   either way, while the next event is within it, is a lone damaged time
///   (a flipped bit): the event goes `untimedSpacing` after the one before,
///   and nothing else moves.
/// - Otherwise a step forward by more than `longestGap` or back by more than
///   `backwardTolerance` is the capture's clock being set (a Pi without a
///   real-time clock at NTP's first answer, merged captures, a daylight-saving
///   change in local time stamps): closed up, every later time moved with it.
struct ReplayTimeline {
    static let untimedSpacing: Duration = .milliseconds(100)
    /// A café closed overnight is a gap its regions must see; a longer one
    /// would stall a paced replay for as long.
    static let longestGap: Duration = .seconds(86_400)
    /// Two interfaces of one capture, or two devices, disagree by seconds;
    /// a step back further than a minute is the clock set back.
    static let backwardTolerance: Duration = .seconds(60)
    /// 1970 to 2200: any capture's clock, set or not.
    static let plausible = Timestamp(microsecondsSinceEpoch: 0) ..< Timestamp(microsecondsSinceEpoch: 7_258_118_400_000_000)

    private(set) var damaged = 0
    private(set) var steps = 0
    private(set) var largestStep: Duration = .zero
    /// The first event's place: the replay's times count from it.
    private(set) var origin: Timestamp?
    /// How far the steps closed up so far have moved the recording's times.
    private var closed: Duration = .zero
    private var last: Timestamp?
    private var lastTimed: Timestamp?
    /// The last event's time as recorded (or, untimed, as placed from it), for `scan`.
    private var lastAsRecorded: Timestamp?

    /// The event's place, and its time as recorded for a reader that prints
    /// the capture's own times (`scan`: steps and all, untimed events on that clock).
    mutating func place(_ time: Timestamp?, next: Timestamp?, start: Timestamp) -> (placed: Timestamp, asRecorded: Timestamp) {
        let placed: Timestamp
        let asRecorded: Timestamp
        if let time, Self.plausible.contains(time) {
            var stamp = time - closed
            if lastTimed == nil, let last, let origin { self.origin = stamp - (last + Self.untimedSpacing - origin) }
            if let lastTimed, let last {
                let step = stamp - lastTimed
                let nextInLine = next.map { Self.plausible.contains($0) && Self.magnitude($0 - closed - lastTimed) <= Self.backwardTolerance } ?? false
                if Self.magnitude(step) > Self.backwardTolerance, nextInLine {
                    damaged += 1
                    stamp = last + Self.untimedSpacing
                } else if step > Self.longestGap || step < .zero - Self.backwardTolerance {
                    steps += 1
                    largestStep = max(largestStep, Self.magnitude(step))
                    closed += stamp - (last + Self.untimedSpacing)
                    stamp = last + Self.untimedSpacing
                }
            }
            placed = stamp
            asRecorded = time
            lastTimed = placed
        } else {
            if time != nil { damaged += 1 }
            placed = last.map { $0 + Self.untimedSpacing } ?? start
            // A damaged time is still printed as recorded; an untimed event on the recording's clock.
            asRecorded = time ?? lastAsRecorded.map { $0 + Self.untimedSpacing } ?? placed
        }
        last = placed
        lastAsRecorded = asRecorded
        if origin == nil { origin = placed }
        return (placed, asRecorded)
    }

    private static func magnitude(_ step: Duration) -> Duration {
        step < .zero ? .zero - step : step
    }

    /// What a person reads about the times that were not taken as recorded, if any.
    var note: String? {
        var parts: [String] = []
        if damaged > 0 {
            parts.append("placed \(damaged) event(s) whose time stamp was damaged (out of 1970–2200, or out of line with the events on either side)")
        }
        if steps > 0 {
            let days = largestStep.seconds / 86_400
            let largest = days >= 1 ? "\(days.decimals(1)) days" : largestStep.tenthsText
            parts.append("closed up \(steps) step(s) of the capture's clock (the largest \(largest))")
        }
        guard !parts.isEmpty else { return nil }
        return parts.joined(separator: " and ") + "; each such event goes on \(Self.untimedSpacing.tenthsText) after the one before"
    }
}
