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
