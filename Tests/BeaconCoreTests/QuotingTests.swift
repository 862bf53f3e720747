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

    /// A list of a file's ids in a message: the first few, then how many more.
    @Test func aListIsCutAfterItsLimit() {
        #expect(["a", "b"].listed(atMost: 2) == "a, b")
        #expect(["a", "b", "c"].listed(atMost: 2) == "a, b (and 1 more)")
        #expect((0..<1_000).map(String.init).listed(atMost: 10) == "0, 1, 2, 3, 4, 5, 6, 7, 8, 9 (and 990 more)")
        #expect([String]().listed(atMost: 10) == "")
    }
}
