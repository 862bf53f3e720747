import BeaconCore
import Foundation
import Testing

@testable import BeaconConfiguration

/// SPEC §7: `beacons.yaml` is refused as a whole, with one message per problem,
/// each with file, line and field.
@Suite struct ConfigurationLoaderTests {
    /// The reference file in docs/configuration.md is one beacond takes:
    /// a reader who copies it gets no error (it once had a venue no region covered).
    @Test func theDocumentedFileLoads() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let page = try String(contentsOf: root.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        let block = try #require(page.components(separatedBy: "```yaml\n").dropFirst().first?.components(separatedBy: "```").first)
        let configuration = try ConfigurationLoader.parse(block, file: "docs/configuration.md")
        #expect(configuration.regions.map(\.id) == ["caffe-macs"] && configuration.venues.map(\.id) == ["coffee-bar"])
    }

    static let cafe = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let kaffeehaus = UUID(uuidString: "F7826DA6-4FA2-4E98-8024-BC5B71E0893E")!

    /// The repository's own `beacons.yaml`.
    static var shippedFile: String {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("beacons.yaml").path
    }

    /// The problems `parse` reports, or none if it accepts the text.
    static func problems(_ yaml: String) -> [ConfigurationProblem] {
        do {
            _ = try ConfigurationLoader.parse(yaml, file: "beacons.yaml")
            return []
        } catch {
            return error.problems
        }
    }

    /// The 1-based number of the first line of `yaml` containing `needle`, counted here.
    static func line(of needle: String, in yaml: String, occurrence: Int = 1) -> Int? {
        var seen = 0
        for (index, text) in yaml.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
        where text.contains(needle) {
            seen += 1
            if seen == occurrence { return index + 1 }
        }
        return nil
    }

    /// Expects exactly one problem, on `field`, at the line holding `needle`.
    static func expectOneProblem(
        _ yaml: String, field: String, at needle: String, occurrence: Int = 1, mentioning words: [String] = [],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let problems = problems(yaml)
        #expect(problems.count == 1, "\(problems)", sourceLocation: sourceLocation)
        guard let problem = problems.first else { return }
        #expect(problem.file == "beacons.yaml", sourceLocation: sourceLocation)
        #expect(problem.field == field, sourceLocation: sourceLocation)
        let expectedLine = line(of: needle, in: yaml, occurrence: occurrence)
        #expect(expectedLine != nil, "test bug: '\(needle)' is not in the YAML", sourceLocation: sourceLocation)
        #expect(problem.line == expectedLine, "\(problem)", sourceLocation: sourceLocation)
        for word in words {
            #expect(problem.message.contains(word), "\(problem)", sourceLocation: sourceLocation)
        }
    }

    /// A valid file to break one thing in at a time.
    static let valid = """
        source: auto
        ranging:
          exit_after: 10s
        regions:
          - id: caffe-macs
            uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0
        venues:
          - id: counter-1
            name: "Counter 1"
            beacon:
              uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0
              major: 1
              minor: 1
        """

    /// Regions only: a region that fails leaves no venue uncovered to report as well.
    static let regionsOnly = """
        regions:
          - id: caffe-macs
            uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0
          - id: kaffeehaus
            uuid: F7826DA6-4FA2-4E98-8024-BC5B71E0893E
        """

    // MARK: Files that load

    @Test func theShippedFileLoads() throws {
        let configuration = try ConfigurationLoader.load(contentsOf: Self.shippedFile)
        #expect(configuration.source == .auto)
        #expect(configuration.regions.map(\.id) == ["caffe-macs", "kaffeehaus", "espresso-bar"])
        #expect(configuration.venues.map(\.id) == ["counter-1", "counter-2", "coffee-bar", "kaffeehaus-theke"])
        #expect(configuration.regions[0].constraint == BeaconConstraint(uuid: Self.cafe))
        #expect(configuration.regions[1].constraint == BeaconConstraint(uuid: Self.kaffeehaus))
        #expect(configuration.regions[1].notifyOnExit == false)
        #expect(configuration.regions[1].notifyOnEntry == true)
        #expect(configuration.regions[2].constraint == BeaconConstraint(uuid: Self.cafe, major: 2))
        let coffeeBar = try #require(configuration.venues.first { $0.id == "coffee-bar" })
        #expect(coffeeBar.name == "咖啡小站")
        #expect(coffeeBar.measuredPower == -61)
        #expect(coffeeBar.constraint == BeaconConstraint(uuid: Self.cafe, major: 2, minor: 7))
        #expect(configuration.venues[0].name == "Caffè Macs — Counter 1")
        #expect(configuration.venues[0].measuredPower == nil)
        #expect(configuration.venues[3].maxDistance == 5.0)
        #expect(configuration.venues[3].constraint == BeaconConstraint(uuid: Self.kaffeehaus, major: 10, minor: 1))
        let ranging = configuration.ranging
        #expect(ranging.pathLossExponent == 2.0)
        #expect(ranging.immediateDistance == 0.5)
        #expect(ranging.nearDistance == 3.0)
        #expect(ranging.exitAfter == .seconds(10))
        #expect(ranging.switchMargin == 0.2)
        #expect(ranging.switchDwell == .seconds(2))
    }

    @Test func theShippedFileParsesFromText() throws {
        let text = try String(contentsOfFile: Self.shippedFile, encoding: .utf8)
        let configuration = try ConfigurationLoader.parse(text, file: "beacons.yaml")
        #expect(configuration.regions.count == 3)
        #expect(configuration.venues.count == 4)
        #expect(configuration.venues.first { $0.name == "咖啡小站" }?.measuredPower == -61)
    }

    @Test func theValidFixtureLoads() throws {
        let configuration = try ConfigurationLoader.parse(Self.valid, file: "beacons.yaml")
        #expect(configuration.regions.count == 1)
        #expect(configuration.venues.count == 1)
        #expect(configuration.venues[0].constraint == BeaconConstraint(uuid: Self.cafe, major: 1, minor: 1))
    }

    @Test func everyOptionalField() throws {
        let yaml = """
            source: replay:captures/morning.btsnoop@max
            ranging:
              path_loss_exponent: 2.7
              proximity: { immediate: 0.4, near: 2.5, hysteresis: 0.2 }
              exit_after: 1.5s
              enter_window: 3s
              stale_after: 8s
              switch_margin: 0.3
              switch_dwell: 500ms
              max_distance: 12
              enter_rssi: -85
              exit_rssi: -92
            regions:
              - id: Caffe_Macs-2
                uuid: e2c56db5-dffb-48d2-b060-d0f5a71096e0
                major: 1
                notify_on_entry: false
                notify_on_exit: yes
                enter_rssi: -80
                exit_rssi: -90
                exit_after: 2m
            venues:
              - id: counter-1
                name: Counter 1
                beacon: { uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major: 1, minor: 1 }
                measured_power: -59
                max_distance: 4.5
            """
        let configuration = try ConfigurationLoader.parse(yaml, file: "/etc/beacond/beacons.yaml")
        // A recording the file names is found beside it (under systemd the working directory is /).
        #expect(configuration.source == .replay(path: "/etc/beacond/captures/morning.btsnoop", speed: .max))
        // A scenario path too (until 2026-11-28 it was read from the working directory); a name stays a name.
        for (given, taken) in [
            ("simulate:walks/lunch.yaml", "/etc/beacond/walks/lunch.yaml"), ("simulate:lunch.yaml", "/etc/beacond/lunch.yaml"),
            ("simulate:/srv/lunch.yaml", "/srv/lunch.yaml"), ("simulate:busy", "busy"),
        ] {
            let named = try ConfigurationLoader.parse(yaml.replacingOccurrences(of: "replay:captures/morning.btsnoop@max", with: given), file: "/etc/beacond/beacons.yaml")
            #expect(named.source == .simulate(scenario: taken), "\(given)")
        }
        let ranging = configuration.ranging
        #expect(ranging.pathLossExponent == 2.7)
        #expect(ranging.immediateDistance == 0.4)
        #expect(ranging.nearDistance == 2.5)
        #expect(ranging.exitAfter == .milliseconds(1500))
        #expect(ranging.proximityHysteresis == 0.2)
        #expect(ranging.enterWindow == .seconds(3))
        #expect(ranging.staleAfter == .seconds(8))
        #expect(ranging.switchMargin == 0.3)
        #expect(ranging.switchDwell == .milliseconds(500))
        #expect(ranging.maxDistance == 12)
        #expect(ranging.enterRSSI == -85)
        #expect(ranging.exitRSSI == -92)
        let region = try #require(configuration.regions.first)
        #expect(region.id == "Caffe_Macs-2")
        #expect(region.constraint == BeaconConstraint(uuid: Self.cafe, major: 1))  // UUIDs in any case
        #expect(region.notifyOnEntry == false)
        #expect(region.notifyOnExit == true)
        #expect(region.enterRSSI == -80)
        #expect(region.exitRSSI == -90)
        #expect(region.exitAfter == .seconds(120))
        #expect(region.owner == nil)
        let venue = try #require(configuration.venues.first)
        #expect(venue.measuredPower == -59)
        #expect(venue.maxDistance == 4.5)
    }

    @Test func onlyRegionsIsEnough() throws {
        let configuration = try ConfigurationLoader.parse(
            "regions:\n  - id: a\n    uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0\n", file: "beacons.yaml")
        #expect(configuration.source == nil)
        #expect(configuration.venues.isEmpty)
        #expect(configuration.ranging == RangingSettings())
    }

    // MARK: One problem at a time, with its line and field

    @Test func badUUID() {
        let yaml = Self.regionsOnly.replacingOccurrences(
            of: "uuid: F7826DA6-4FA2-4E98-8024-BC5B71E0893E", with: "uuid: F7826DA6-4FA2-4E98-8024-BC5B71E0893Z")
        Self.expectOneProblem(yaml, field: "regions[1].uuid", at: "893Z", mentioning: ["F7826DA6-4FA2-4E98-8024-BC5B71E0893Z"])
        // In a full file the venue that region covered is not reported as well: the region is what to fix.
        let full = Self.valid.replacingOccurrences(
            of: "caffe-macs\n    uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", with: "caffe-macs\n    uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096EZ")
        let problems = Self.problems(full)
        #expect(problems.map(\.field) == ["regions[0].uuid"])
        #expect(problems.first?.line == Self.line(of: "96EZ", in: full))
        // A venue no region meant is still found when every region reads.
        let stray = Self.valid.replacingOccurrences(of: "uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0\n      major", with: "uuid: 11111111-DFFB-48D2-B060-D0F5A71096E0\n      major")
        #expect(Self.problems(stray).map(\.field) == ["venues[0].beacon"])
        // Regions that are no list at all: that is the problem, not the venues they would have covered.
        let notAList = Self.valid.replacingOccurrences(of: "regions:\n  - id: caffe-macs", with: "regions:\n  caffe-macs:\n    id: caffe-macs")
        #expect(Self.problems(notAList).map(\.field) == ["regions"], "\(Self.problems(notAList))")
    }

    @Test func shortUUID() {
        let yaml = Self.regionsOnly.replacingOccurrences(
            of: "uuid: F7826DA6-4FA2-4E98-8024-BC5B71E0893E", with: "uuid: F7826DA64FA24E988024BC5B71E0893E")
        Self.expectOneProblem(yaml, field: "regions[1].uuid", at: "F7826DA64FA2")
    }

    @Test func majorOutOfRange() {
        let yaml = Self.valid.replacingOccurrences(of: "      major: 1", with: "      major: 70000")
        Self.expectOneProblem(yaml, field: "venues[0].beacon.major", at: "70000", mentioning: ["70000", "65535"])
        let problem = Self.problems(yaml).first
        #expect(problem?.description == "beacons.yaml:12: venues[0].beacon.major: \(problem?.message ?? "")")
    }

    @Test func minorWithoutMajor() {
        let yaml = Self.valid + "\n" + """
              - id: counter-2
                name: "Counter 2"
                beacon:
                  uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0
                  minor: 2
            """
        Self.expectOneProblem(yaml, field: "venues[1].beacon.minor", at: "minor: 2", mentioning: ["major"])
    }

    @Test func minorWithoutMajorInARegion() {
        let yaml = Self.valid.replacingOccurrences(
            of: "caffe-macs\n    uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0",
            with: "caffe-macs\n    uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0\n    minor: 3")
        let problems = Self.problems(yaml)
        // The region is unusable; the venue it covered is not reported as a second problem.
        #expect(problems.map(\.field) == ["regions[0].minor"])
        let problem = problems.first { $0.field == "regions[0].minor" }
        #expect(problem?.line == Self.line(of: "minor: 3", in: yaml))
    }

    @Test func unknownTopLevelKey() {
        let yaml = Self.valid + "\ncolour: blue\n"
        Self.expectOneProblem(yaml, field: "colour", at: "colour", mentioning: ["unknown key", "regions"])
    }

    @Test func unknownNestedKeys() {
        let inRanging = Self.valid.replacingOccurrences(of: "  exit_after: 10s", with: "  exit_after: 10s\n  exit_afterr: 5s")
        Self.expectOneProblem(inRanging, field: "ranging.exit_afterr", at: "exit_afterr", mentioning: ["unknown key", "exit_after"])
        let inVenueBeacon = Self.valid.replacingOccurrences(of: "      minor: 1", with: "      minor: 1\n      mayor: 3")
        Self.expectOneProblem(inVenueBeacon, field: "venues[0].beacon.mayor", at: "mayor")
        let inRegion = Self.valid.replacingOccurrences(of: "  - id: caffe-macs", with: "  - id: caffe-macs\n    nmae: Caffè")
        Self.expectOneProblem(inRegion, field: "regions[0].nmae", at: "nmae")
    }

    @Test func duplicateRegionId() {
        let yaml = Self.valid.replacingOccurrences(of: "venues:", with: """
              - id: caffe-macs
                uuid: F7826DA6-4FA2-4E98-8024-BC5B71E0893E
            venues:
            """)
        Self.expectOneProblem(yaml, field: "regions[1].id", at: "- id: caffe-macs", occurrence: 2, mentioning: ["caffe-macs", "regions[0]"])
    }

    @Test func duplicateVenueId() {
        let yaml = Self.valid + "\n" + """
              - id: counter-1
                name: "Counter 1 again"
                beacon: { uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major: 1, minor: 2 }
            """
        Self.expectOneProblem(yaml, field: "venues[1].id", at: "- id: counter-1", occurrence: 2, mentioning: ["counter-1", "venues[0]"])
    }

    @Test func negativeDuration() {
        let yaml = Self.valid.replacingOccurrences(of: "exit_after: 10s", with: "exit_after: -5s")
        Self.expectOneProblem(yaml, field: "ranging.exit_after", at: "-5s", mentioning: ["negative", "-5s"])
    }

    @Test func badDurations() {
        let noUnit = Self.valid.replacingOccurrences(of: "exit_after: 10s", with: "exit_after: 10")
        Self.expectOneProblem(noUnit, field: "ranging.exit_after", at: "exit_after: 10", mentioning: ["500ms"])
        let word = Self.valid.replacingOccurrences(of: "exit_after: 10s", with: "exit_after: soon")
        Self.expectOneProblem(word, field: "ranging.exit_after", at: "soon", mentioning: ["soon"])
        let zero = Self.valid.replacingOccurrences(of: "exit_after: 10s", with: "exit_after: 0s")
        Self.expectOneProblem(zero, field: "ranging.exit_after", at: "0s", mentioning: ["zero"])
        let inRegion = Self.valid.replacingOccurrences(of: "  - id: caffe-macs", with: "  - id: caffe-macs\n    exit_after: 5 minutes")
        Self.expectOneProblem(inRegion, field: "regions[0].exit_after", at: "5 minutes")
    }

    @Test func venueThatNoRegionCovers() {
        let yaml = Self.valid + "\n" + """
              - id: elsewhere
                name: "Somewhere else"
                beacon: { uuid: F7826DA6-4FA2-4E98-8024-BC5B71E0893E, major: 1, minor: 1 }
            """
        let problems = Self.problems(yaml)
        #expect(problems.count == 1)
        let problem = problems.first
        #expect(problem?.field == "venues[1].beacon")
        #expect(problem?.message.contains("F7826DA6-4FA2-4E98-8024-BC5B71E0893E/1/1") == true)
        #expect(problem?.line != nil)
    }

    /// The problem is about `venues[1].beacon`, so its line should be the `beacon:` line.
    @Test func venueThatNoRegionCoversPointsAtTheBeaconLine() {
        let yaml = Self.valid + "\n" + """
              - id: elsewhere
                name: "Somewhere else"
                beacon: { uuid: F7826DA6-4FA2-4E98-8024-BC5B71E0893E, major: 1, minor: 1 }
            """
        Self.expectOneProblem(yaml, field: "venues[1].beacon", at: "uuid: F7826DA6")
    }

    /// A venue name with a control character is refused: a NUL made every
    /// GetManagedObjects reply unsendable, a line break forged journal lines
    /// (the audit of 2026-11-27); so is an MQTT username with one.
    @Test(arguments: ["\\0", "\\r\\n<0>forged", "\\x85", "\\t"])
    func controlCharactersInANameAreRefused(escape: String) {
        let yaml = Self.valid.replacingOccurrences(of: "name: \"Counter 1\"", with: "name: \"Counter \(escape)1\"")
        Self.expectOneProblem(yaml, field: "venues[0].name", at: "name: \"Counter", mentioning: ["without control characters"])
        let username = Self.valid + "\nmqtt:\n  url: mqtt://127.0.0.1\n  username: \"kiosk\(escape)\"\n"
        Self.expectOneProblem(username, field: "mqtt.username", at: "username:", mentioning: ["without control characters"])
    }

    /// Each beacon is the first matching venue's: a venue listed after one
    /// that matches all its beacons can never be nearest, and is refused
    /// (a copy-pasted beacon, or the broad venue first); listed the other way
    /// round both are taken.
    @Test func aVenueAnEarlierOneCoversIsRefused() {
        let broad = "\n  - id: bar\n    name: Bar\n    beacon: { uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major: 1 }"
        let shadowed = Self.valid.replacingOccurrences(of: "venues:", with: "venues:" + broad)
        Self.expectOneProblem(shadowed, field: "venues[1].beacon", at: "uuid: E2C56DB5", occurrence: 3, mentioning: ["can never be nearest", "'bar'"])
        #expect(Self.problems(Self.valid + broad).isEmpty)
        let copied = Self.valid + "\n  - id: counter-1-again\n    name: Again\n    beacon: { uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major: 1, minor: 1 }"
        #expect(Self.problems(copied).map(\.field) == ["venues[1].beacon"])
    }

    /// Two venues share an id and the second is uncovered: the uncovered one is venues[1].
    @Test func uncoveredVenueWithADuplicateIdIsNamedByItsOwnIndex() {
        let yaml = Self.valid + "\n" + """
              - id: counter-1
                name: "Somewhere else"
                beacon: { uuid: F7826DA6-4FA2-4E98-8024-BC5B71E0893E, major: 1, minor: 1 }
            """
        let problems = Self.problems(yaml)
        #expect(problems.count == 2)
        #expect(problems.contains { $0.field == "venues[1].id" && $0.message.contains("duplicate") })
        let uncovered = problems.first { $0.message.contains("matches no region") }
        #expect(uncovered?.field == "venues[1].beacon", "\(problems)")
        #expect(uncovered?.line == Self.line(of: "uuid: F7826DA6", in: yaml, occurrence: 1), "\(problems)")
    }

    @Test func duplicateKeyInAMapping() {
        let yaml = Self.valid.replacingOccurrences(of: "source: auto", with: "source: auto\nsource: hci")
        let problems = Self.problems(yaml)
        #expect(problems.count == 1)
        #expect(problems.first?.message.contains("duplicate") == true, "\(problems)")
        #expect(problems.first?.message.contains("source") == true, "\(problems)")
        #expect(problems.first?.line != nil)
    }

    @Test func anchorsAndAliasesAreYAML() throws {
        let yaml = """
            regions:
              - id: caffe-macs
                uuid: &cafe E2C56DB5-DFFB-48D2-B060-D0F5A71096E0
            venues:
              - id: counter-1
                name: Counter 1
                beacon: { uuid: *cafe, major: 1, minor: 1 }
            """
        let configuration = try ConfigurationLoader.parse(yaml, file: "beacons.yaml")
        #expect(configuration.venues.first?.constraint == BeaconConstraint(uuid: Self.cafe, major: 1, minor: 1))
    }

    /// A tag is refused at its line, whatever it tags: `!secret` read as the
    /// text after it (the username `mqtt_user`) made Home Assistant users'
    /// MQTT login fail with the broker's "not authorised", far from the cause
    /// (until 2026-11-27).
    @Test(arguments: [
        ("  username: !secret mqtt_user", "!secret", "Home Assistant"),
        ("  username: !!str kiosk", "!!str", "untagged"),
        ("  tls: !custom {}", "!custom", "untagged"),
    ])
    func tagsAreRefusedAtTheirLine(line: String, tag: String, word: String) {
        let yaml = Self.valid + "\nmqtt:\n  url: mqtt://127.0.0.1\n\(line)\n"
        let problems = Self.problems(yaml)
        #expect(problems.count == 1, "\(problems)")
        #expect(problems.first?.line == Self.line(of: line, in: yaml), "\(problems)")
        #expect(problems.first?.message.contains("YAML tag \(tag) is not read") == true, "\(problems)")
        #expect(problems.first?.message.contains(word) == true, "\(problems)")
    }

    /// A value is quoted shortened in its problem, however often aliases
    /// repeat it: 100 aliases of a 1 MB id made a 100 MB error, built several
    /// times over for the journal and a D-Bus reply (an audit of 2026-11-28).
    @Test func aHugeValueRepeatedByAliasesMakesAShortError() throws {
        let huge = String(repeating: "A", count: 1 << 20)
        let yaml = "r: &r { id: \"\(huge)\", uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 }\n"
            + "regions: [\(Array(repeating: "*r", count: 100).joined(separator: ", "))]\n"
        let error = try #require(throws: ConfigurationError.self) { try ConfigurationLoader.parse(yaml, file: "beacons.yaml") }
        #expect(error.problems.count == ConfigurationError.mostProblems, "\(error.problems.count)")
        #expect(error.description.utf8.count < 64 << 10, "\(error.description.utf8.count) bytes")
        #expect(error.problems.contains { $0.message.hasSuffix("got '" + String(repeating: "A", count: 64) + "…'") }, "\(error.problems.prefix(3))")
        // One letter and half a million combining accents is one Character of 1 MB: bounded by scalars.
        let accented = "A" + String(repeating: "\u{301}", count: 500_000)
        let marks = try #require(throws: ConfigurationError.self) {
            try ConfigurationLoader.parse(yaml.replacingOccurrences(of: huge, with: accented), file: "beacons.yaml")
        }
        #expect(marks.description.utf8.count < 64 << 10, "\(marks.description.utf8.count) bytes")
        // An unknown key is named shortened too (a long one needs YAML's explicit `? key`).
        let key = Self.problems(Self.valid + "\nmqtt:\n  ? \(huge)\n  : 1\n")
        #expect(key.map(\.field).first == "mqtt." + String(repeating: "A", count: 64) + "…", "\(key.map(\.field).map { $0.prefix(80) })")
    }

    @Test func regionMajorMustCoverTheVenue() {
        // A region for major 2 does not cover a venue with major 1.
        let yaml = Self.valid.replacingOccurrences(
            of: "caffe-macs\n    uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0",
            with: "caffe-macs\n    uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0\n    major: 2")
        let problems = Self.problems(yaml)
        #expect(problems.map(\.field) == ["venues[0].beacon"])
    }

    @Test func exitRSSIMustBeBelowEnterRSSI() {
        let ranging = Self.valid.replacingOccurrences(
            of: "  exit_after: 10s", with: "  exit_after: 10s\n  enter_rssi: -80\n  exit_rssi: -80")
        let problems = Self.problems(ranging)
        #expect(problems.map(\.field) == ["ranging.exit_rssi"])
        #expect(problems.first?.message.contains("enter_rssi") == true)
        let region = Self.valid.replacingOccurrences(
            of: "  - id: caffe-macs", with: "  - id: caffe-macs\n    enter_rssi: -90\n    exit_rssi: -70")
        #expect(Self.problems(region).map(\.field) == ["regions[0].exit_rssi"])
    }

    /// Field `regions[0].exit_rssi` should come with the line of `exit_rssi:`.
    @Test func exitRSSIProblemPointsAtExitRSSILine() {
        let ranging = Self.valid.replacingOccurrences(
            of: "  exit_after: 10s", with: "  exit_after: 10s\n  enter_rssi: -80\n  exit_rssi: -75")
        let region = Self.valid.replacingOccurrences(
            of: "  - id: caffe-macs", with: "  - id: caffe-macs\n    enter_rssi: -90\n    exit_rssi: -70")
        Self.expectOneProblem(ranging, field: "ranging.exit_rssi", at: "exit_rssi")
        Self.expectOneProblem(region, field: "regions[0].exit_rssi", at: "exit_rssi")
    }

    /// The pair a region runs with mixes its own values and `ranging:`'s: a
    /// region's exit above the file's entry floor, or its floor under the
    /// file's exit, flaps as surely as a pair written together; an exit with
    /// no floor at all has no hysteresis.
    @Test func hysteresisIsCheckedOnThePairEachRegionRunsWith() {
        let rangingEnter = Self.valid.replacingOccurrences(of: "  exit_after: 10s", with: "  exit_after: 10s\n  enter_rssi: -85")
        let regionExit = rangingEnter.replacingOccurrences(of: "  - id: caffe-macs", with: "  - id: caffe-macs\n    exit_rssi: -80")
        Self.expectOneProblem(regionExit, field: "regions[0].exit_rssi", at: "exit_rssi", mentioning: ["ranging.enter_rssi", "-85"])
        let rangingExit = Self.valid.replacingOccurrences(of: "  exit_after: 10s", with: "  exit_after: 10s\n  enter_rssi: -70\n  exit_rssi: -80")
        let regionEnter = rangingExit.replacingOccurrences(of: "  - id: caffe-macs", with: "  - id: caffe-macs\n    enter_rssi: -85")
        Self.expectOneProblem(regionEnter, field: "regions[0].enter_rssi", at: "enter_rssi: -85", mentioning: ["ranging.exit_rssi", "-80"])
        let noFloor = Self.valid.replacingOccurrences(of: "  - id: caffe-macs", with: "  - id: caffe-macs\n    exit_rssi: -90")
        Self.expectOneProblem(noFloor, field: "regions[0].exit_rssi", at: "exit_rssi", mentioning: ["needs an enter_rssi"])
        let noFileFloor = Self.valid.replacingOccurrences(of: "  exit_after: 10s", with: "  exit_after: 10s\n  exit_rssi: -90")
        Self.expectOneProblem(noFileFloor, field: "ranging.exit_rssi", at: "exit_rssi", mentioning: ["needs an enter_rssi"])
        // A region refused for another reason does not hide the next one's problem.
        let second = "\n  - id: second\n    uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0\n    enter_rssi: -90\n    exit_rssi: -80\n"
        let withBroken = Self.valid.replacingOccurrences(of: "  - id: caffe-macs", with: "  - id: broken\n    uuid: nope" + second + "  - id: caffe-macs")
        #expect(Self.problems(withBroken).map(\.field).sorted() == ["regions[0].uuid", "regions[1].exit_rssi"], "\(Self.problems(withBroken))")
        // A value refused for its range is one problem, not a second about hysteresis.
        let outOfRange = Self.valid.replacingOccurrences(of: "  - id: caffe-macs", with: "  - id: caffe-macs\n    enter_rssi: -500\n    exit_rssi: -90")
        #expect(Self.problems(outOfRange).map(\.field) == ["regions[0].enter_rssi"], "\(Self.problems(outOfRange))")
        // A good pair across the levels is taken.
        let mixed = rangingExit.replacingOccurrences(of: "  - id: caffe-macs", with: "  - id: caffe-macs\n    enter_rssi: -75")
        #expect(Self.problems(mixed).isEmpty)
    }

    /// Lists longer than beacond takes are refused before any entry is read,
    /// and a file with thousands of problems lists the first hundred.
    @Test func longListsAndManyProblemsAreBounded() throws {
        let regions = (0...Configuration.mostRegions).map { "  - { id: r\($0), uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 }" }
        let long = "regions:\n" + regions.joined(separator: "\n") + "\n"
        Self.expectOneProblem(long, field: "regions", at: "  - { id: r0,", mentioning: ["\(Configuration.mostRegions + 1) entries", "at most \(Configuration.mostRegions)"])
        let taken = "regions:\n" + regions.dropLast().joined(separator: "\n") + "\n"
        #expect(try ConfigurationLoader.parse(taken, file: "beacons.yaml").regions.count == Configuration.mostRegions)

        let unknown = (0..<1_000).map { "k\($0): 1" }.joined(separator: "\n")
        do {
            _ = try ConfigurationLoader.parse(unknown, file: "beacons.yaml")
            Issue.record("a file of unknown keys was taken")
        } catch {
            #expect(error.problems.count == ConfigurationError.mostProblems)
            #expect(error.unlisted == 1_000 - ConfigurationError.mostProblems)
            #expect(error.description.hasSuffix("… and \(1_000 - ConfigurationError.mostProblems) more problem(s)"))
            #expect(error.problems.first?.field == "k0")
        }
    }

    @Test func immediateMustBeLessThanNear() {
        let yaml = Self.valid.replacingOccurrences(
            of: "  exit_after: 10s", with: "  exit_after: 10s\n  proximity: { immediate: 3.0, near: 3.0 }")
        Self.expectOneProblem(yaml, field: "ranging.proximity", at: "proximity", mentioning: ["immediate", "near"])
        // A bad value is one problem, not a second one against the other band's default.
        let negative = Self.valid.replacingOccurrences(
            of: "  exit_after: 10s", with: "  exit_after: 10s\n  proximity: { immediate: -1, near: 0.5 }")
        #expect(Self.problems(negative).map(\.field) == ["ranging.proximity.immediate"])
    }

    /// Problems come in the order of their lines, whatever order they are found in.
    @Test func problemsAreListedByLine() {
        let yaml = Self.valid.replacingOccurrences(of: "      major: 1", with: "      major: 70000")
            .replacingOccurrences(of: "  - id: caffe-macs", with: "  - id: caffe-macs\n    notify_on_exit: maybe")
            + "\ncolour: red\n"
        let lines = Self.problems(yaml).compactMap(\.line)
        #expect(lines.count == 3)
        #expect(lines == lines.sorted())
    }

    @Test func numbersOutOfRangeOrNotNumbers() {
        let margin = Self.valid.replacingOccurrences(of: "  exit_after: 10s", with: "  exit_after: 10s\n  switch_margin: 2")
        Self.expectOneProblem(margin, field: "ranging.switch_margin", at: "switch_margin", mentioning: ["0...0.9", "2"])
        let power = Self.valid.replacingOccurrences(of: "      minor: 1", with: "      minor: 1\n    measured_power: loud")
        Self.expectOneProblem(power, field: "venues[0].measured_power", at: "loud", mentioning: ["integer", "loud"])
        let fractional = Self.valid.replacingOccurrences(of: "      minor: 1", with: "      minor: 1\n    measured_power: -59.5")
        Self.expectOneProblem(fractional, field: "venues[0].measured_power", at: "-59.5", mentioning: ["integer -100...-20"])
        // A tracker's battery byte is no calibration.
        let battery = Self.valid.replacingOccurrences(of: "      minor: 1", with: "      minor: 1\n    measured_power: 5")
        Self.expectOneProblem(battery, field: "venues[0].measured_power", at: "measured_power: 5", mentioning: ["-100...-20", "5"])
        let flag = Self.valid.replacingOccurrences(of: "  - id: caffe-macs", with: "  - id: caffe-macs\n    notify_on_exit: maybe")
        Self.expectOneProblem(flag, field: "regions[0].notify_on_exit", at: "maybe", mentioning: ["true or false"])
    }

    /// The P1m used for beacons whose frame's power is no 1 m calibration; it must be one itself.
    @Test func defaultMeasuredPower() throws {
        #expect(try ConfigurationLoader.load(contentsOf: Self.shippedFile).ranging.defaultMeasuredPower == -59)
        #expect(try ConfigurationLoader.parse(Self.valid, file: "beacons.yaml").ranging.defaultMeasuredPower == -59)
        let set = Self.valid.replacingOccurrences(of: "  exit_after: 10s", with: "  exit_after: 10s\n  default_measured_power: -65")
        #expect(try ConfigurationLoader.parse(set, file: "beacons.yaml").ranging.defaultMeasuredPower == -65)
        for bad in ["0", "-3", "-101", "-19", "-59.5"] {
            let yaml = Self.valid.replacingOccurrences(of: "  exit_after: 10s", with: "  exit_after: 10s\n  default_measured_power: \(bad)")
            Self.expectOneProblem(yaml, field: "ranging.default_measured_power", at: "default_measured_power")
        }
    }

    @Test func missingName() {
        let yaml = Self.valid.replacingOccurrences(of: "    name: \"Counter 1\"\n", with: "")
        Self.expectOneProblem(yaml, field: "venues[0].name", at: "- id: counter-1", mentioning: ["missing"])
    }

    @Test func emptyName() {
        let yaml = Self.valid.replacingOccurrences(of: "name: \"Counter 1\"", with: "name: \"   \"")
        Self.expectOneProblem(yaml, field: "venues[0].name", at: "name:")
    }

    @Test func missingId() {
        let yaml = Self.regionsOnly.replacingOccurrences(of: "  - id: kaffeehaus\n    uuid:", with: "  - uuid:")
        Self.expectOneProblem(yaml, field: "regions[1].id", at: "  - uuid: F7826DA6", mentioning: ["missing"])
    }

    @Test func badId() {
        let yaml = Self.regionsOnly.replacingOccurrences(of: "id: kaffeehaus", with: "id: caffè macs")
        Self.expectOneProblem(yaml, field: "regions[1].id", at: "caffè macs", mentioning: ["caffè macs"])
        let long = Self.regionsOnly.replacingOccurrences(of: "id: kaffeehaus", with: "id: " + String(repeating: "k", count: 65))
        Self.expectOneProblem(long, field: "regions[1].id", at: "kkkk")
    }

    @Test func missingBeaconAndUUID() {
        let noBeacon = """
            regions:
              - id: caffe-macs
                uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0
            venues:
              - id: counter-1
                name: Counter 1
            """
        Self.expectOneProblem(noBeacon, field: "venues[0].beacon", at: "- id: counter-1", mentioning: ["missing"])
        let noUUID = """
            regions:
              - id: caffe-macs
                major: 1
            """
        Self.expectOneProblem(noUUID, field: "regions[0].uuid", at: "- id: caffe-macs", mentioning: ["missing"])
    }

    @Test func listWhereAMappingIsExpected() {
        let ranging = Self.valid.replacingOccurrences(of: "  exit_after: 10s", with: "  - exit_after: 10s")
        Self.expectOneProblem(ranging, field: "ranging", at: "- exit_after", mentioning: ["mapping", "list"])
        let beacon = Self.valid.replacingOccurrences(
            of: "    beacon:\n      uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0\n      major: 1\n      minor: 1",
            with: "    beacon: [E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, 1, 1]")
        Self.expectOneProblem(beacon, field: "venues[0].beacon", at: "beacon: [", mentioning: ["mapping", "list"])
        let topLevel = "- regions\n- venues\n"
        Self.expectOneProblem(topLevel, field: "(top level)", at: "- regions", mentioning: ["mapping", "list"])
    }

    @Test func mappingOrScalarWhereAListIsExpected() {
        let yaml = """
            regions:
              id: caffe-macs
              uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0
            """
        Self.expectOneProblem(yaml, field: "regions", at: "id: caffe-macs", mentioning: ["list", "mapping"])
        Self.expectOneProblem("venues: none\n", field: "venues", at: "venues", mentioning: ["list", "scalar"])
    }

    @Test func badSource() {
        let yaml = Self.valid.replacingOccurrences(of: "source: auto", with: "source: replay:x@0")
        Self.expectOneProblem(yaml, field: "source", at: "source:", mentioning: ["replay:x@0"])
    }

    @Test func yamlSyntaxError() {
        let yaml = """
            source: auto
            ranging:
              exit_after: 10s: 5
            regions: []
            """
        let problems = Self.problems(yaml)
        #expect(problems.count == 1)
        #expect(problems.first?.line == 3)
        #expect(problems.first?.field == "")
        #expect(problems.first?.message.hasPrefix("YAML syntax") == true)
        #expect(problems.first?.description.hasPrefix("beacons.yaml:3: YAML syntax") == true)
    }

    @Test func yamlSyntaxErrorFurtherDown() {
        let yaml = Self.valid + "\n  - id: [unclosed\n    name: x\n"
        let problems = Self.problems(yaml)
        #expect(problems.count == 1)
        let line = try? #require(problems.first?.line)
        // libyaml notices at the unclosed bracket or at the end of the text, never earlier.
        #expect((line ?? 0) >= Self.line(of: "[unclosed", in: yaml)!)
    }

    @Test(arguments: ["", "\n\n", "# only a comment\n"])
    func emptyFile(text: String) {
        let problems = Self.problems(text)
        #expect(problems.count == 1)
        #expect(problems.first?.line == nil)
        #expect(problems.first?.message.contains("empty") == true)
        #expect(problems.first?.description.hasPrefix("beacons.yaml: ") == true)
    }

    /// `---` alone is an empty YAML document: as empty as an empty file.
    @Test func documentMarkerAloneIsAnEmptyFile() {
        let problems = Self.problems("---\n")
        #expect(problems.count == 1)
        #expect(problems.first?.message.contains("empty") == true, "\(problems)")
    }

    @Test func scalarFileIsNotAConfiguration() {
        Self.expectOneProblem("hello\n", field: "(top level)", at: "hello", mentioning: ["mapping", "scalar"])
    }

    // MARK: Everything at once

    @Test func everyProblemIsReportedAtOnce() {
        let yaml = """
            source: nowhere
            ranging:
              exit_after: -5s
              proximity: { immediate: 5, near: 1 }
              colour: blue
            regions:
              - id: caffe-macs
                uuid: not-a-uuid
              - id: kaffeehaus
                uuid: F7826DA6-4FA2-4E98-8024-BC5B71E0893E
                minor: 4
              - id: kaffeehaus
                uuid: F7826DA6-4FA2-4E98-8024-BC5B71E0893E
            venues:
              - id: theke
                beacon: { uuid: F7826DA6-4FA2-4E98-8024-BC5B71E0893E, major: 70000, minor: 1 }
              - name: "No id"
                beacon: { uuid: F7826DA6-4FA2-4E98-8024-BC5B71E0893E, major: 1, minor: 1 }
            """
        let problems = Self.problems(yaml)
        let expected: [(field: String, needle: String, occurrence: Int)] = [
            ("source", "source: nowhere", 1),
            ("ranging.exit_after", "exit_after: -5s", 1),
            ("ranging.proximity", "proximity:", 1),
            ("ranging.colour", "colour: blue", 1),
            ("regions[0].uuid", "not-a-uuid", 1),
            ("regions[1].minor", "minor: 4", 1),
            // regions[1] is unusable, but its id is still taken.
            ("regions[2].id", "- id: kaffeehaus", 2),
            ("venues[0].name", "- id: theke", 1),
            ("venues[0].beacon.major", "major: 70000", 1),
            ("venues[1].id", "- name: \"No id\"", 1),
        ]
        #expect(problems.count == 10)
        #expect(problems.count == expected.count, "\(problems.map(\.description).joined(separator: "\n"))")
        for (field, needle, occurrence) in expected {
            let problem = problems.first { $0.field == field }
            #expect(problem != nil, "no problem reported for \(field)")
            #expect(problem?.line == Self.line(of: needle, in: yaml, occurrence: occurrence), "\(field): \(String(describing: problem))")
        }
        // Every problem has a line here, and the error lists them all, one per line.
        #expect(problems.allSatisfy { $0.line != nil })
        let error = ConfigurationError(problems: problems)
        #expect(error.description.split(separator: "\n").count == problems.count)
    }

    // MARK: Files on disk

    @Test func missingFile() {
        let path = "/nonexistent-\(UUID().uuidString)/beacons.yaml"
        do {
            _ = try ConfigurationLoader.load(contentsOf: path)
            Issue.record("a missing file loaded")
        } catch {
            #expect(error.problems.count == 1)
            #expect(error.problems.first?.file == path)
            #expect(error.problems.first?.line == nil)
            #expect(error.problems.first?.message.contains("no such file") == true)
        }
    }

    @Test func directoryInsteadOfFile() {
        let path = FileManager.default.temporaryDirectory.path
        do {
            _ = try ConfigurationLoader.load(contentsOf: path)
            Issue.record("a directory loaded")
        } catch {
            #expect(error.problems.first?.message.contains("directory") == true)
        }
    }

    @Test func fileOnDiskReportsItsPath() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("beacons-\(UUID().uuidString).yaml")
        try Data("regions:\n  - id: a\n    uuid: nope\n".utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        do {
            _ = try ConfigurationLoader.load(contentsOf: url.path)
            Issue.record("a bad file loaded")
        } catch {
            #expect(error.problems.map(\.description) == ["\(url.path):3: regions[0].uuid: \(error.problems[0].message)"])
        }
    }
}

// MARK: Further problems, each with its line

extension ConfigurationLoaderTests {
    /// A name of nothing but white space and line breaks is as empty as `"   "`.
    @Test(arguments: ["\"\\n\"", "\"\\t\"", "\" \\n \""])
    func blankNameWithLineBreaks(name: String) {
        let yaml = Self.valid.replacingOccurrences(of: "name: \"Counter 1\"", with: "name: \(name)")
        Self.expectOneProblem(yaml, field: "venues[0].name", at: "name:")
    }

    @Test func wrongTypes() {
        let sourceList = Self.valid.replacingOccurrences(of: "source: auto", with: "source: [hci]")
        Self.expectOneProblem(sourceList, field: "source", at: "source:", mentioning: ["string", "list"])
        let uuidMapping = Self.regionsOnly.replacingOccurrences(
            of: "uuid: F7826DA6-4FA2-4E98-8024-BC5B71E0893E", with: "uuid: { x: 1 }")
        Self.expectOneProblem(uuidMapping, field: "regions[1].uuid", at: "{ x: 1 }", mentioning: ["mapping"])
        let fractionalMajor = Self.valid.replacingOccurrences(of: "      major: 1", with: "      major: 1.5")
        Self.expectOneProblem(fractionalMajor, field: "venues[0].beacon.major", at: "1.5", mentioning: ["integer"])
    }

    @Test func problemLinesWithCRLFLineEndings() {
        let yaml = Self.valid.replacingOccurrences(of: "exit_after: 10s", with: "exit_after: -5s")
            .replacingOccurrences(of: "\n", with: "\r\n")
        let problems = Self.problems(yaml)
        #expect(problems.map(\.field) == ["ranging.exit_after"])
        #expect(problems.first?.line == 3)
    }

    @Test func theShippedFileDescribesEveryVenue() throws {
        let configuration = try ConfigurationLoader.load(contentsOf: Self.shippedFile)
        #expect(configuration.venues.map(\.name) == [
            "Caffè Macs — Counter 1", "Caffè Macs — Counter 2", "咖啡小站", "Kaffeehaus am Markt — Theke",
        ])
        #expect(configuration.venues.map(\.measuredPower) == [nil, nil, -61, nil])
    }
}
