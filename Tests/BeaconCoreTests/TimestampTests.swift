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
