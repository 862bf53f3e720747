import BeaconCore
import Foundation
import Testing

@testable import BeaconConfiguration

/// What libyaml and `YAMLComposer` do for the loaders: YAML's own features,
/// and bounded work with clear messages on text that is broken or hostile.
@Suite struct YAMLComposerTests {
    static let cafe = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    static func problems(_ bytes: [UInt8]) -> [ConfigurationProblem] {
        do {
            _ = try ConfigurationLoader.parse(bytes, file: "beacons.yaml")
            return []
        } catch {
            return error.problems
        }
    }

    static func problems(_ yaml: String) -> [ConfigurationProblem] { problems(Array(yaml.utf8)) }

    // MARK: YAML features

    @Test func anAliasOfAMappingIsThatMapping() throws {
        let yaml = """
            regions:
              - &region { id: caffe-macs, uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major: 1 }
              - *region
            """
        let problems = Self.problems(yaml)
        // The alias is the anchored region itself, line included, so its id is a duplicate.
        #expect(problems.count == 1, "\(problems)")
        #expect(problems.first?.field == "regions[1].id", "\(problems)")
        #expect(problems.first?.message.contains("duplicate") == true, "\(problems)")
        #expect(problems.first?.line == 2, "\(problems)")
    }

    @Test func anUndefinedAliasIsASyntaxProblemAtItsLine() {
        let problems = Self.problems("regions:\n  - id: a\n    uuid: *nowhere\n")
        #expect(problems.map(\.line) == [3], "\(problems)")
        #expect(problems.first?.message == "YAML syntax: found undefined alias 'nowhere'", "\(problems)")
    }

    @Test func duplicateKeysAreNamedAtTheRepeatsLine() {
        let problems = Self.problems("source: auto\nregions: []\nsource: hci\n")
        #expect(problems.map(\.description) == ["beacons.yaml:3: duplicate key source in one mapping"])
        // Each name once, however often repeated; ten named, the rest counted.
        let many = (0..<30).flatMap { ["k\($0): 1", "k\($0): 2", "k\($0): 3"] }.joined(separator: "\n")
        let message = Self.problems(many).first?.message
        #expect(message == "duplicate key " + (0..<10).map { "k\($0)" }.joined(separator: ", ") + " and 20 more in one mapping", "\(message ?? "nil")")
    }

    @Test func aSecondDocumentIsRefused() {
        let problems = Self.problems("source: auto\n---\nsource: hci\n")
        #expect(problems.map(\.line) == [2], "\(problems)")
        #expect(problems.first?.message.contains("second document") == true, "\(problems)")
    }

    @Test func aByteOrderMarkIsAllowed() throws {
        let configuration = try ConfigurationLoader.parse([0xEF, 0xBB, 0xBF] + Array("source: hci\n".utf8), file: "b.yaml")
        #expect(configuration.source == .hci(adapter: nil))
    }

    // MARK: Broken and hostile text

    @Test func badUTF8IsRefusedWithItsLineAndByte() {
        let bytes = Array("source: auto\nregions:\n  - id: caf".utf8) + [0xC3, 0x28] + Array("\n".utf8)
        let problems = Self.problems(bytes)
        #expect(problems.count == 1, "\(problems)")
        #expect(problems.first?.line == 3, "\(problems)")
        // 0xC3 starts a two-byte sequence; "(" cannot continue it.
        #expect(problems.first?.message == "YAML: invalid trailing UTF-8 octet at byte offset \(bytes.count - 2)", "\(problems)")
    }

    @Test func deepNestingIsRefusedAtTheLimit() {
        let depth = YAMLComposer.maximumDepth
        // As deep as allowed: read, then refused for being a list where a mapping belongs.
        let deepest = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        #expect(Self.problems(deepest).first?.message.contains("expected a mapping") == true)
        // One more level, and 100,000 more, are refused as they open, before anything is built.
        for extra in [1, 100_000] {
            let text = String(repeating: "[", count: depth + extra) + String(repeating: "]", count: depth + extra)
            let problems = Self.problems(text)
            #expect(problems.map(\.message) == ["YAML: nested more than \(depth) levels deep"], "\(problems)")
            #expect(problems.first?.line == 1)
        }
    }

    /// "Billion laughs": nine levels of ten aliases would be 10^9 nodes to walk.
    @Test func aliasesThatMultiplyAreRefused() {
        var yaml = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for level in 1...9 {
            let previous = Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", ")
            yaml += "a\(level): &a\(level) [\(previous)]\n"
        }
        let problems = Self.problems(yaml)
        #expect(problems.count == 1, "\(problems)")
        #expect(problems.first?.message.contains("more than \(YAMLComposer.maximumNodes) nodes") == true, "\(problems)")
    }

    @Test func aFileLargerThanTheLimitIsNotRead() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("huge-\(UUID().uuidString).yaml")
        #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
        defer { try? FileManager.default.removeItem(at: url) }
        // Sparse: the size is all that is looked at before reading.
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: UInt64(ConfigurationLoader.largestFile + 1))
        try handle.close()
        do {
            _ = try ConfigurationLoader.load(contentsOf: url.path)
            Issue.record("a huge file loaded")
        } catch {
            #expect(error.problems.count == 1)
            #expect(error.problems.first?.message.contains("larger than 8 MiB") == true, "\(error)")
        }
    }

    @Test func aLargeScenarioIsRead() throws {
        // 5,000 beacons, about 1 MB: well within the limits.
        var yaml = "beacons:\n"
        for index in 0..<5_000 {
            yaml += "  - { beacon: { uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major: 1, minor: \(index) }, "
                + "position: [\(index % 100), \(index / 100)] }\n"
        }
        yaml += "listener: { start: [0, 0], stops: [{ at: [1, 1] }] }\n"
        let scenario = try ConfigurationLoader.parseScenario(yaml, file: "big.yaml", name: "big")
        #expect(scenario.beacons.count == 5_000)
        #expect(scenario.beacons.last?.identity == BeaconIdentity(uuid: Self.cafe, major: 1, minor: 4_999))
    }
}
