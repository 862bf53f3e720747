import PropertyBased
import Testing

@testable import BeaconCore

/// Durations in `beacons.yaml`: `500ms`, `10s`, `2m` (SPEC §7), and `1.5s`, `1h`.
@Suite struct DurationParsingTests {
    @Test(arguments: [
        ("500ms", Duration.milliseconds(500)),
        ("10s", .seconds(10)),
        ("2m", .seconds(120)),
        ("1.5s", .milliseconds(1500)),
        ("1h", .seconds(3600)),
        ("0s", .zero),
        ("0.25m", .seconds(15)),
        ("1ms", .milliseconds(1)),
    ])
    func parses(text: String, expected: Duration) {
        #expect(Duration(parsing: text) == expected)
    }

    @Test(arguments: ["-5s", "5", "s", "ms", "5x", "", "+5s", "5 s", " 5s", "five s", "infs", "nanms", "-0s", "10S"])
    func rejects(text: String) {
        #expect(Duration(parsing: text) == nil)
    }

    @Test func parsesSubstrings() {
        let line = "exit_after: 10s"
        #expect(Duration(parsing: line.split(separator: " ")[1]) == .seconds(10))
    }

    @Test(arguments: [
        (Duration.milliseconds(500), "500ms"),
        (.seconds(10), "10s"),
        (.seconds(120), "2m"),
        (.seconds(90), "90s"),
        (.milliseconds(1500), "1500ms"),
        (.seconds(3600), "60m"),
        (.zero, "0s"),
    ])
    func configurationText(duration: Duration, text: String) {
        #expect(duration.configurationText == text)
    }

    @Test(arguments: ["500ms", "10s", "2m", "1.5s", "1h", "0s", "250ms", "45s", "90m"])
    func configurationTextParsesBack(text: String) throws {
        let duration = try #require(Duration(parsing: text))
        #expect(Duration(parsing: duration.configurationText) == duration)
    }
}

// MARK: Properties

extension DurationParsingTests {
    /// Whole milliseconds up to about 31 years print as text that parses back exactly.
    @Test func configurationTextRoundTripsForWholeMilliseconds() async {
        await propertyCheck(count: 300, input: Gen.int64(in: 0...999_999_999_999)) { milliseconds in
            let duration = Duration.milliseconds(milliseconds)
            let text = duration.configurationText
            #expect(Duration(parsing: text) == duration, "\(milliseconds) ms → \(text)")
        }
    }

    /// `Ns`, `Nm`, `Nms`, `Nh` for whole N mean N × the unit, worked out here.
    @Test func wholeNumbersOfEachUnit() async {
        await propertyCheck(count: 200, input: Gen.int64(in: 0...100_000), Gen.int(in: 0...3)) { n, unit in
            let (suffix, milliseconds): (String, Int64) = [("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000)][unit]
            #expect(Duration(parsing: "\(n)\(suffix)") == .milliseconds(n * milliseconds))
        }
    }
}
