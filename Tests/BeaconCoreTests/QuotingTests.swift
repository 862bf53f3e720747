import BeaconCore
import Testing

/// What an error message quotes of a caller's text: short, and one line.
@Suite struct QuotingTests {
    @Test func longTextIsCutAndControlCharactersEscaped() {
        #expect("counter-1".quotedForMessage == "counter-1")
        let long = String(repeating: "x", count: 1_000_000).quotedForMessage
        #expect(long == String(repeating: "x", count: 64) + "…")
        #expect("a\nb\u{1B}[2Jc\u{7F}".quotedForMessage == "a\\nb\\u{1B}[2Jc\\u{7F}")
        #expect("咖啡小站".quotedForMessage == "咖啡小站")
    }
}
