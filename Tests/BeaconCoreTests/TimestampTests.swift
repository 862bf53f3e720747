import Foundation
import PropertyBased
import Testing

@testable import BeaconCore

/// Timestamps print as ISO 8601 UTC with microseconds, without Foundation's calendars.
@Suite struct TimestampTests {
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000000Z"),
        (1_714_564_800_250_000, "2024-05-01T12:00:00.250000Z"),
        (1_709_251_199_999_999, "2024-02-29T23:59:59.999999Z"),  // a leap day
        (951_868_800_000_000, "2000-03-01T00:00:00.000000Z"),  // after 2000's leap day
        (-1, "1969-12-31T23:59:59.999999Z"),
        (-2_208_988_800_000_000, "1900-01-01T00:00:00.000000Z"),
        (86_399_000_001, "1970-01-01T23:59:59.000001Z"),
        // The extremes (GNU date agrees): the longest texts a capture can make.
        (Int64.max, "294247-01-10T04:00:54.775807Z"),
        (Int64.min, "-290308-12-21T19:59:05.224192Z"),
    ])
    func description(microseconds: Int64, text: String) {
        #expect(Timestamp(microsecondsSinceEpoch: microseconds).description == text)
    }

    @Test func arithmeticWithDurations() {
        let t = Timestamp(microsecondsSinceEpoch: 1_000_000)
        #expect((t + .milliseconds(1500)).microsecondsSinceEpoch == 2_500_000)
        #expect((t - .seconds(2)).microsecondsSinceEpoch == -1_000_000)
        #expect(Timestamp(microsecondsSinceEpoch: 3_250_000) - t == .microseconds(2_250_000))
        #expect(Timestamp.milliseconds(1500).microsecondsSinceEpoch == 1_500_000)
        #expect(Timestamp(microsecondsSinceEpoch: 1_999).millisecondsSinceEpoch == 1)
        #expect(t < t + .microseconds(1))
    }

    @Test func durationInMicrosecondsAndSeconds() {
        #expect(Duration.milliseconds(1500).microseconds == 1_500_000)
        #expect(Duration.nanoseconds(1999).microseconds == 1)
        #expect(Duration.milliseconds(-2500).microseconds == -2_500_000)
        #expect(Duration.milliseconds(1500).seconds == 1.5)
    }

    /// The engine's shortcuts give the very bits the standard library's
    /// arithmetic gives: ranging must not change with them.
    @Test func shortcutsMatchDurationArithmeticToTheBit() async {
        await propertyCheck(count: 500, input: Gen.int64(), Gen.int64(in: -30_000_000...30_000_000)) { micros, gap in
            let t = Timestamp(microsecondsSinceEpoch: micros)
            let other = Timestamp(microsecondsSinceEpoch: micros &- gap)
            #expect(t.seconds(since: other).bitPattern == (t - other).seconds.bitPattern)
            let interval = Duration.microseconds(gap.magnitude) + .nanoseconds(gap & 0x3FF)
            for factor in [0.8, 0.2, 1.5, 1 / 3.0] {
                #expect(interval.scaled(by: factor) == interval * factor)
            }
            #expect(interval.tripled == interval * 3)
        }
        let huge = Duration.seconds(Int64.max / 4)  // beyond 64 bits of attoseconds: the standard library's path
        #expect(huge.scaled(by: 0.8) == huge * 0.8)
    }

    @Test func civilDateKnownDays() {
        #expect(CivilDate(year: 1970, month: 1, day: 1).daysSinceEpoch == 0)
        #expect(CivilDate(year: 2024, month: 5, day: 1).daysSinceEpoch == 19844)
        #expect(CivilDate(year: 2000, month: 3, day: 1).daysSinceEpoch == 11017)
        #expect(CivilDate(year: 1969, month: 12, day: 31).daysSinceEpoch == -1)
        #expect(CivilDate(daysSinceEpoch: 19844) == CivilDate(year: 2024, month: 5, day: 1))
    }

    @Test func civilDateRoundTrips() async {
        await propertyCheck(count: 300, input: Gen.int64(in: -1_000_000...1_000_000)) { days in
            let date = CivilDate(daysSinceEpoch: days)
            #expect(date.daysSinceEpoch == days)
            #expect((1...12).contains(date.month))
            #expect((1...31).contains(date.day))
        }
    }

    @Test func descriptionOfAnyTimestampIsWellFormed() async {
        // Corrupt captures can carry any 64-bit time; printing it must not trap.
        await propertyCheck(count: 300, input: Gen.int64()) { micros in
            let text = Timestamp(microsecondsSinceEpoch: micros).description
            #expect(text.hasSuffix("Z"))
            #expect(text.contains("T"))
        }
        for micros in [Int64.min, Int64.max, Int64.min + 1, Int64.max - 1] {
            #expect(Timestamp(microsecondsSinceEpoch: micros).description.hasSuffix("Z"))
        }
    }

    @Test func descriptionIsOrderedLikeTime() async {
        // Within years 1000...9999 the text sorts as the time does.
        let range: ClosedRange<Int64> = -30_000_000_000_000_000...250_000_000_000_000_000
        await propertyCheck(count: 200, input: Gen.int64(in: range), Gen.int64(in: range)) { a, b in
            let ta = Timestamp(microsecondsSinceEpoch: a)
            let tb = Timestamp(microsecondsSinceEpoch: b)
            #expect((ta.description < tb.description) == (a < b))
            #expect(ta.description.count == 27)
        }
    }
}

// MARK: Cross-checks computed apart from the code under test

extension TimestampTests {
    /// Days from 1970-01-01 back to 0000-01-01: 719 468 days back to 0000-03-01 (a known
    /// constant of the proleptic Gregorian calendar), then January and a leap February
    /// (year 0 is divisible by 400). Year -1 has 365 days.
    static let dayOfYearZero: Int64 = -719_468 - 31 - 29
    static let dayOfYearMinusOne: Int64 = dayOfYearZero - 365

    @Test func yearZeroAndBeforeAreWrittenWithFourDigits() {
        let day: Int64 = 86_400_000_000
        #expect(Timestamp(microsecondsSinceEpoch: Self.dayOfYearZero * day).description == "0000-01-01T00:00:00.000000Z")
        // ISO 8601 (expanded, astronomical years): a sign, then at least four digits.
        #expect(
            Timestamp(microsecondsSinceEpoch: Self.dayOfYearMinusOne * day).description
                == "-0001-01-01T00:00:00.000000Z")
        #expect(
            Timestamp(microsecondsSinceEpoch: Self.dayOfYearMinusOne * day - 1).description
                == "-0002-12-31T23:59:59.999999Z")
    }

    /// The shape of the text for any 64-bit time: `[-]YYYY…-MM-DDTHH:MM:SS.ffffffZ`.
    static func isWellFormed(_ text: String) -> Bool {
        var rest = Substring(text)
        if rest.first == "-" { rest = rest.dropFirst() }
        guard let dash = rest.firstIndex(of: "-") else { return false }
        let year = rest[..<dash]
        let tail = rest[dash...]
        guard year.count >= 4, year.allSatisfy({ $0.isASCII && $0.isNumber }), tail.count == 23 else { return false }
        let pattern = Array("-NN-NNTNN:NN:NN.NNNNNNZ")
        return zip(tail, pattern).allSatisfy { character, expected in
            expected == "N" ? (character.isASCII && character.isNumber) : character == expected
        }
    }

    @Test func descriptionIsWellFormedForAnyTime() async {
        #expect(Self.isWellFormed("2024-05-01T12:00:00.250000Z"))
        #expect(!Self.isWellFormed("00-1-01-01T00:00:00.000000Z"))
        await propertyCheck(count: 300, input: Gen.int64()) { micros in
            let text = Timestamp(microsecondsSinceEpoch: micros).description
            #expect(Self.isWellFormed(text), "\(micros) → \(text)")
        }
        // Years 999 BCE ... 1 CE, where a sign and fewer than four digits meet.
        let early: ClosedRange<Int64> = (Self.dayOfYearZero - 365 * 1000) * 86_400_000_000...(Self.dayOfYearZero + 400) * 86_400_000_000
        await propertyCheck(count: 200, input: Gen.int64(in: early)) { micros in
            let text = Timestamp(microsecondsSinceEpoch: micros).description
            #expect(Self.isWellFormed(text), "\(micros) → \(text)")
        }
    }

    /// Foundation's Gregorian calendar (exact from 1600 on, where it is proleptic-free).
    @Test func descriptionAgreesWithFoundation() async {
        let formatter = DateFormatter()
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        // 1600-01-01 ... 9999-12-31, in microseconds.
        let range: ClosedRange<Int64> = -11_676_096_000_000_000...253_402_300_799_999_999
        await propertyCheck(count: 300, input: Gen.int64(in: range)) { micros in
            var seconds = micros / 1_000_000
            var fraction = micros % 1_000_000
            if fraction < 0 {
                seconds -= 1
                fraction += 1_000_000
            }
            let whole = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
            let digits = String(fraction)
            let expected = whole + "." + String(repeating: "0", count: 6 - digits.count) + digits + "Z"
            #expect(Timestamp(microsecondsSinceEpoch: micros).description == expected)
        }
    }

    /// `Duration.microseconds` is documented as truncated toward zero.
    @Test func negativeDurationsTruncateTowardZero() {
        #expect(Duration.nanoseconds(-1999).microseconds == -1)
        #expect(Duration.nanoseconds(-1_000_001).microseconds == -1000)
        #expect(Duration.nanoseconds(1999).microseconds == 1)
    }
}

/// A capture or a client can put any 64-bit number in a time: arithmetic on
/// times clamps to the range instead of trapping.
@Suite struct TimestampSaturationTests {
    @Test func differencesAndOffsetsClampAtTheExtremes() {
        let earliest = Timestamp(microsecondsSinceEpoch: .min)
        let latest = Timestamp(microsecondsSinceEpoch: .max)
        #expect((latest - earliest).microseconds == .max)
        #expect((earliest - latest).microseconds == .min)
        #expect((latest + .seconds(1)).microsecondsSinceEpoch == .max)
        #expect((earliest - .seconds(1)).microsecondsSinceEpoch == .min)
        #expect(Duration.seconds(Int64.max).microseconds == .max)
        #expect(Timestamp.milliseconds(.max).microsecondsSinceEpoch == .max)
        #expect((Timestamp.milliseconds(5) - Timestamp.milliseconds(2)).microseconds == 3_000)
    }
}
