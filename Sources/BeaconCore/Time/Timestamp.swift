/// A point in time, in microseconds since the Unix epoch.
///
/// The core never reads a clock: every function that needs "now" takes a
/// `Timestamp`, so tests drive time by hand and replays run at any speed.
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var microsecondsSinceEpoch: Int64

    public init(microsecondsSinceEpoch: Int64) {
        self.microsecondsSinceEpoch = microsecondsSinceEpoch
    }

    public static func milliseconds(_ ms: Int64) -> Timestamp {
        let (micros, overflow) = ms.multipliedReportingOverflow(by: 1_000)
        return Timestamp(microsecondsSinceEpoch: overflow ? (ms < 0 ? .min : .max) : micros)
    }

    public var millisecondsSinceEpoch: Int64 { microsecondsSinceEpoch / 1_000 }

    /// Earlier than any other: "never", where an order puts the never-done first.
    public static let distantPast = Timestamp(microsecondsSinceEpoch: .min)

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.microsecondsSinceEpoch < rhs.microsecondsSinceEpoch
    }

    // Time arithmetic saturates instead of trapping: a capture or a client can
    // put any 64-bit number in a timestamp, and the service must not crash on it.

    public static func + (lhs: Timestamp, rhs: Duration) -> Timestamp {
        Timestamp(microsecondsSinceEpoch: lhs.microsecondsSinceEpoch.saturatingAdd(rhs.microseconds))
    }

    public static func - (lhs: Timestamp, rhs: Duration) -> Timestamp {
        Timestamp(microsecondsSinceEpoch: lhs.microsecondsSinceEpoch.saturatingSubtract(rhs.microseconds))
    }

    public static func - (lhs: Timestamp, rhs: Timestamp) -> Duration {
        .microseconds(lhs.microsecondsSinceEpoch.saturatingSubtract(rhs.microsecondsSinceEpoch))
    }

    /// `(self - other).seconds`, the same `Double` to the bit, without the
    /// `Duration` (whose `components` cost a 128-bit division): the filter
    /// and its line fit need it at every sighting.
    public func seconds(since other: Timestamp) -> Double {
        let (whole, fraction) = microsecondsSinceEpoch.saturatingSubtract(other.microsecondsSinceEpoch)
            .quotientAndRemainder(dividingBy: 1_000_000)
        return Double(whole) + Double(fraction * 1_000_000_000_000) / 1e18
    }

    /// ISO 8601 in UTC with microseconds, e.g. `2024-05-01T12:00:00.250000Z`.
    public var description: String { String(capacity: Self.iso8601Capacity, writing: writeISO8601) }

    /// The longest `description`: a sign, 6 digits of year (Int64's
    /// microseconds span ±292,277 years) and the 23 characters after them.
    public static let iso8601Capacity = 30

    /// Writes `description`'s text (a scan prints one per sighting).
    public func writeISO8601(to text: inout TextWriter) {
        writeISO8601Seconds(to: &text)
        writeISO8601Fraction(to: &text)
    }

    /// The whole second this time falls in (rounded down): times in the same
    /// one write the same `writeISO8601Seconds`.
    public var wholeSeconds: Int64 { microsecondsSinceEpoch.floorDivided(by: 1_000_000).quotient }

    /// `description`'s text up to and including the `.` before the microseconds.
    public func writeISO8601Seconds(to text: inout TextWriter) {
        let (days, micros) = microsecondsSinceEpoch.floorDivided(by: 86_400_000_000)
        let date = CivilDate(daysSinceEpoch: days)
        let secondsOfDay = UInt64(micros / 1_000_000)
        if date.year < 0 { text.write(UInt8(ascii: "-")) }
        text.writeDecimal(date.year.magnitude, width: 4)
        text.write(UInt8(ascii: "-"))
        text.writeDecimal(UInt64(date.month), width: 2)
        text.write(UInt8(ascii: "-"))
        text.writeDecimal(UInt64(date.day), width: 2)
        text.write(UInt8(ascii: "T"))
        text.writeDecimal(secondsOfDay / 3600, width: 2)
        text.write(UInt8(ascii: ":"))
        text.writeDecimal(secondsOfDay / 60 % 60, width: 2)
        text.write(UInt8(ascii: ":"))
        text.writeDecimal(secondsOfDay % 60, width: 2)
        text.write(UInt8(ascii: "."))
    }

    /// `description`'s microseconds and the `Z` after them.
    public func writeISO8601Fraction(to text: inout TextWriter) {
        text.writeDecimal(UInt64(microsecondsSinceEpoch.floorDivided(by: 1_000_000).remainder), width: 6)
        text.write(UInt8(ascii: "Z"))
    }
}

extension Duration {
    /// Whole microseconds, truncated toward zero; saturating at Int64's range.
    public var microseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return whole.saturatingAdd(attoseconds / 1_000_000_000_000)
    }

    /// `self * 3`, exactly: multiplying a `Duration` by an integer goes
    /// through the standard library's generic integer conversion (hundreds of
    /// instructions), and the engine needs this at every sighting and, for
    /// every beacon, at every tick.
    public var tripled: Duration { self + self + self }

    /// `self * factor` as the standard library computes it (the attoseconds
    /// as a `Double`, times the factor, truncated), without its generic
    /// 128-bit conversions when the attoseconds fit 64 bits (under 9.2 s:
    /// an advertising interval). The engine averages intervals at every sighting.
    public func scaled(by factor: Double) -> Duration {
        if let small = Int64(exactly: attoseconds),
            let product = Int64(exactly: (Double(small) * factor).rounded(.towardZero))
        {
            return Duration(attoseconds: Int128(product))
        }
        return self * factor
    }

    /// Seconds as a floating-point number, for arithmetic in models.
    public var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// A proleptic Gregorian date, for printing and parsing timestamps without Foundation's calendars.
struct CivilDate: Equatable {
    var year: Int64
    var month: Int64
    var day: Int64

    init(year: Int64, month: Int64, day: Int64) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// Howard Hinnant's `civil_from_days`.
    init(daysSinceEpoch: Int64) {
        let z = daysSinceEpoch + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        day = doy - (153 * mp + 2) / 5 + 1
        month = mp < 10 ? mp + 3 : mp - 9
        year = yoe + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// Howard Hinnant's `days_from_civil`.
    var daysSinceEpoch: Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}

extension Int64 {
    /// `self + other`, clamped to Int64's range.
    public func saturatingAdd(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other < 0 ? .min : .max) : sum
    }

    /// `self - other`, clamped to Int64's range.
    public func saturatingSubtract(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other < 0 ? .max : .min) : difference
    }

    /// Division rounding toward negative infinity, with a non-negative remainder.
    func floorDivided(by divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        var q = self / divisor
        var r = self % divisor
        if r < 0 {
            q -= 1
            r += divisor
        }
        return (q, r)
    }
}
