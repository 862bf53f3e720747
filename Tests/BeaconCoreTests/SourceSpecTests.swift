import PropertyBased
import Testing

@testable import BeaconCore

/// `--source` and `source:`: auto, hci[:hciN], bluez[:hciN], replay:FILE[@SPEED], simulate[:SCENARIO].
@Suite struct SourceSpecTests {
    @Test(arguments: [
        ("auto", SourceSpec.auto),
        ("hci", .hci(adapter: nil)),
        ("hci:hci0", .hci(adapter: "hci0")),
        ("hci:hci1", .hci(adapter: "hci1")),
        ("bluez", .bluez(adapter: nil)),
        ("bluez:hci2", .bluez(adapter: "hci2")),
        ("replay:capture.btsnoop", .replay(path: "capture.btsnoop", speed: .factor(1))),
        ("replay:/var/log/hcidump.raw", .replay(path: "/var/log/hcidump.raw", speed: .factor(1))),
        ("replay:a@b.log", .replay(path: "a@b.log", speed: .factor(1))),
        ("replay:f@max", .replay(path: "f", speed: .max)),
        ("replay:f@2", .replay(path: "f", speed: .factor(2))),
        ("replay:f@2x", .replay(path: "f", speed: .factor(2))),
        ("replay:f@0.5", .replay(path: "f", speed: .factor(0.5))),
        ("replay:me@home.raw@10", .replay(path: "me@home.raw", speed: .factor(10))),
        ("replay:C:/x.raw", .replay(path: "C:/x.raw", speed: .factor(1))),
        ("simulate", .simulate(scenario: nil)),
        ("simulate:rush", .simulate(scenario: "rush")),
        ("simulate:scenarios/cafe.yaml", .simulate(scenario: "scenarios/cafe.yaml")),
    ])
    func parses(text: String, expected: SourceSpec) throws {
        #expect(try SourceSpec(parsing: text) == expected)
    }

    @Test(arguments: [
        ("replay:f@0", "speed"),
        ("replay:f@-2", "speed"),
        ("replay:@2", "speed"),
        ("replay:", "FILE"),
        ("replay", "FILE"),
        ("hci:foo", "hci0"),
        ("hci:", "hci0"),
        ("hci:hci", "hci0"),
        ("bluez:usb0", "hci0"),
        ("auto:hci0", "no argument"),
        ("simulate:", "scenario"),
        ("unknown", "unknown source 'unknown'"),
        ("", "unknown source"),
        ("HCI", "unknown source 'HCI'"),
    ])
    func rejects(text: String, reasonMentions: String) {
        let error = #expect(throws: SourceSpec.ParseError.self) { try SourceSpec(parsing: text) }
        #expect(error?.text == text)
        #expect(error?.reason.contains(reasonMentions) == true, "\(String(describing: error))")
        #expect(error?.description.hasPrefix("invalid source '\(text)'") == true)
    }

    /// "adapter must look like hci0": a sign is not a digit.
    @Test(arguments: ["hci:hci+1", "hci:hci-0", "bluez:hci+0"])
    func adapterWithASignIsRejected(text: String) {
        #expect(throws: SourceSpec.ParseError.self) { try SourceSpec(parsing: text) }
    }

    @Test(arguments: [
        "auto", "hci", "hci:hci0", "bluez", "bluez:hci3", "replay:x.btsnoop", "replay:a@b.log", "replay:f@max",
        "replay:f@2", "replay:f@2.5", "replay:f@0.25", "simulate", "simulate:rush",
    ])
    func descriptionRoundTrips(text: String) throws {
        let spec = try SourceSpec(parsing: text)
        #expect(try SourceSpec(parsing: spec.description) == spec)
    }

    @Test func descriptionsAreTheCanonicalText() throws {
        #expect(try SourceSpec(parsing: "replay:f@2x").description == "replay:f@2")
        #expect(try SourceSpec(parsing: "replay:f@1").description == "replay:f")
        #expect(try SourceSpec(parsing: "replay:f@2.5").description == "replay:f@2.5")
        #expect(SourceSpec.replay(path: "f", speed: .max).description == "replay:f@max")
        #expect(SourceSpec.hci(adapter: "hci1").description == "hci:hci1")
    }

    /// A file whose own name ends in `@2`, replayed at real time: its description must
    /// not turn into "the file `x` at 2×".
    @Test func descriptionOfAPathEndingInASpeedRoundTrips() throws {
        let spec = try SourceSpec(parsing: "replay:x@2@1")
        #expect(spec == .replay(path: "x@2", speed: .factor(1)))
        let reparsed = try SourceSpec(parsing: spec.description)
        #expect(reparsed == spec)
    }
}

extension SourceSpecTests {
    /// Absurd speeds are refused when parsed, and any speed prints without trapping.
    @Test func hugeReplaySpeedIsRefusedAndStillPrintable() {
        #expect(throws: SourceSpec.ParseError.self) { try SourceSpec(parsing: "replay:f@1e20") }
        #expect(SourceSpec.replay(path: "f", speed: .factor(1e20)).description == "replay:f@1e+20")
    }
}

// MARK: Properties

extension SourceSpecTests {
    /// Path characters, `@` and `:` included, as a user may name files.
    static let pathCharacters: [Character] = Array("abcXYZ019._-/@: x")

    /// Any replay source that can be written down (a non-empty path, a speed in
    /// (0, 100000] or max) prints as text that parses back to the same source.
    @Test func replayDescriptionRoundTrips() async {
        let characters = Self.pathCharacters
        let path = Gen.int(in: 0...(characters.count - 1)).map { characters[$0] }.string(of: 1...12)
        let speed = Gen.oneOf(
            Gen.always(SourceSpec.ReplaySpeed.max),
            Gen.int(in: 1...100_000).map { SourceSpec.ReplaySpeed.factor(Double($0)) },
            Gen.double(in: 0.001...100_000).map { SourceSpec.ReplaySpeed.factor($0) })
        await propertyCheck(count: 300, input: path, speed) { path, speed in
            let spec = SourceSpec.replay(path: path, speed: speed)
            let text = spec.description
            #expect(text.hasPrefix("replay:"))
            let parsed = try SourceSpec(parsing: text)
            #expect(parsed == spec, "\(text)")
        }
    }

    @Test func adapterDescriptionRoundTrips() async {
        await propertyCheck(count: 100, input: Gen.int(in: 0...9999), Gen.bool) { number, bluez in
            let text = (bluez ? "bluez:hci" : "hci:hci") + String(number)
            let spec = try SourceSpec(parsing: text)
            #expect(spec == (bluez ? .bluez(adapter: "hci\(number)") : .hci(adapter: "hci\(number)")))
            #expect(spec.description == text)
        }
    }
}
