import BeaconCore
import BeaconSimulation
import Foundation
import Testing

@testable import BeaconConfiguration

/// Simulation scenarios (`scenarios/cafe.yaml`): read like `beacons.yaml`, refused
/// as a whole with file, line and field for every problem.
@Suite struct ScenarioLoaderTests {
    static let cafe = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let kaffeehaus = UUID(uuidString: "F7826DA6-4FA2-4E98-8024-BC5B71E0893E")!

    /// The repository root, found from this file: Tests/BeaconConfigurationTests/ScenarioLoaderTests.swift.
    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    static var cafeFile: String { packageRoot.appendingPathComponent("scenarios/cafe.yaml").path }

    /// The problems `parseScenario` reports, or none if it accepts the text.
    static func problems(_ yaml: String) -> [ConfigurationProblem] {
        do {
            _ = try ConfigurationLoader.parseScenario(yaml, file: "room.yaml", name: "room")
            return []
        } catch {
            return error.problems
        }
    }

    /// The 1-based number of the first line of `yaml` containing `needle`, counted here.
    static func line(of needle: String, in yaml: String) -> Int? {
        for (index, text) in yaml.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
        where text.contains(needle) {
            return index + 1
        }
        return nil
    }

    /// A valid scenario to break one thing in at a time.
    static let valid = """
        seed: 3
        beacons:
          - beacon: { uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major: 1, minor: 2 }
            position: [1.5, -2]
        listener:
          start: [0, 0]
          stops:
            - { at: [1, 1], pause: 5s }
        """

    /// The simulate source plays the walk round after round: a walk of no
    /// time never waited, and spun a core delivering nothing; one of years
    /// made `evaluate` keep a tick every 100 ms of it (an audit of 2026-11-28).
    @Test(arguments: [
        ("{ at: [1, 1], pause: 5s }", "{ at: [0, 0] }", "the walk takes no time"),
        ("{ at: [1, 1], pause: 5s }", "{ at: [1, 1], pause: 100000h }", "at most 24 hours"),
    ])
    func aWalkOfNoTimeOrOfYearsIsRefused(stop: String, replacement: String, problem: String) {
        let problems = Self.problems(Self.valid.replacingOccurrences(of: stop, with: replacement))
        #expect(problems.map(\.field) == ["listener.stops"], "\(problems)")
        #expect(problems.first?.message.contains(problem) == true, "\(problems)")
        #expect(Self.problems(Self.valid.replacingOccurrences(of: stop, with: "{ at: [0, 0], pause: 1s }")).isEmpty)
    }

    // MARK: The shipped scenario

    @Test func theShippedCafeLoads() throws {
        let scenario = try ConfigurationLoader.loadScenario(contentsOf: Self.cafeFile)
        #expect(scenario.name == "cafe")
        #expect(scenario.seed == 20_261_122)
        #expect(scenario.beacons.count == 4)
        #expect(scenario.stops.count == 5)
        #expect(
            scenario.beacons.map(\.identity) == [
                BeaconIdentity(uuid: Self.cafe, major: 1, minor: 1),
                BeaconIdentity(uuid: Self.cafe, major: 1, minor: 2),
                BeaconIdentity(uuid: Self.cafe, major: 2, minor: 7),
                BeaconIdentity(uuid: Self.kaffeehaus, major: 10, minor: 1),
            ])
        #expect(scenario.beacons.map(\.position) == [
            Position(x: 0, y: 0), Position(x: 2, y: 0), Position(x: 8, y: 0), Position(x: 22, y: 6),
        ])
        #expect(scenario.start == Position(x: 4, y: -8))
        #expect(scenario.speed == 1.0)
    }

    @Test func theKaffeehausBeaconAdvertisesOnceASecond() throws {
        let scenario = try ConfigurationLoader.loadScenario(contentsOf: Self.cafeFile)
        let kaffeehaus = try #require(scenario.beacons.first { $0.identity.uuid == Self.kaffeehaus })
        #expect(kaffeehaus.advertisingInterval == .seconds(1))
        #expect(kaffeehaus.measuredPower == -65)
        #expect(kaffeehaus.truePower == -65, "without true_power the beacon is calibrated")
        #expect(scenario.beacons[0].advertisingInterval == .milliseconds(100))
        #expect(scenario.beacons[2].advertisingInterval == .milliseconds(300))
    }

    @Test func theCoffeeBarIsMiscalibrated() throws {
        let scenario = try ConfigurationLoader.loadScenario(contentsOf: Self.cafeFile)
        let coffeeBar = try #require(
            scenario.beacons.first { $0.identity == BeaconIdentity(uuid: Self.cafe, major: 2, minor: 7) })
        #expect(coffeeBar.measuredPower == -59)
        #expect(coffeeBar.truePower == -61)
    }

    @Test func theCafeRadioAndStops() throws {
        let scenario = try ConfigurationLoader.loadScenario(contentsOf: Self.cafeFile)
        #expect(scenario.radio.pathLossExponent == 2.2)
        #expect(scenario.radio.shadowingSigma == 4)
        #expect(scenario.radio.shadowingDistance == 1.5)
        #expect(scenario.radio.shadowingTime == .seconds(5))
        #expect(scenario.radio.fadingK == 4)
        #expect(scenario.radio.packetLoss == 0.1)
        #expect(scenario.radio.sensitivity == -92)
        #expect(scenario.stops.map(\.destination) == [
            Position(x: 0, y: -0.6), Position(x: 2, y: -0.6), Position(x: 8, y: -0.6), Position(x: 0, y: -0.6),
            Position(x: 4, y: -150),
        ])
        #expect(scenario.stops.map(\.pause) == [.seconds(30), .seconds(30), .seconds(30), .seconds(20), .seconds(30)])
    }

    // MARK: Small scenarios

    @Test func aMinimalScenarioGetsDefaults() throws {
        let scenario = try ConfigurationLoader.parseScenario(Self.valid, file: "room.yaml", name: "room")
        #expect(scenario.name == "room")
        #expect(scenario.seed == 3)
        #expect(scenario.speed == 1.0)
        #expect(scenario.radio == Scenario.Radio())
        let beacon = try #require(scenario.beacons.first)
        #expect(beacon.identity == BeaconIdentity(uuid: Self.cafe, major: 1, minor: 2))
        #expect(beacon.position == Position(x: 1.5, y: -2))
        #expect(beacon.measuredPower == -59)
        #expect(beacon.truePower == -59)
        #expect(beacon.advertisingInterval == .milliseconds(100))
        #expect(scenario.stops == [Scenario.Stop(destination: Position(x: 1, y: 1), pause: .seconds(5))])
    }

    @Test func theNameIsTheFilesBaseName() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("scenario-loader-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("kiosk.yaml")
        try Self.valid.write(to: file, atomically: true, encoding: .utf8)
        let scenario = try ConfigurationLoader.loadScenario(contentsOf: file.path)
        #expect(scenario.name == "kiosk")
    }

    // MARK: Problems

    @Test func missingListener() {
        let yaml = """
            seed: 3
            beacons:
              - beacon: { uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major: 1, minor: 2 }
                position: [1.5, -2]
            """
        let problems = Self.problems(yaml)
        #expect(problems.count == 1, "\(problems)")
        let problem = problems.first
        #expect(problem?.field == "listener")
        #expect(problem?.file == "room.yaml")
        #expect(problem?.line == 1, "the top-level mapping starts on line 1")
        #expect(problem?.message.contains("missing") == true)
    }

    @Test(arguments: ["[1.5]", "[1, 2, 3]", "{ x: 1, y: 2 }", "here"])
    func badBeaconPosition(position: String) {
        let yaml = Self.valid.replacingOccurrences(of: "[1.5, -2]", with: position)
        let problems = Self.problems(yaml)
        #expect(problems.count == 1, "\(problems)")
        #expect(problems.first?.field == "beacons[0].position")
        #expect(problems.first?.line == 4)
        #expect(problems.first?.message.contains("[x, y]") == true)
    }

    @Test func positionCoordinateNotANumber() {
        let yaml = Self.valid.replacingOccurrences(of: "[1.5, -2]", with: "[1.5, south]")
        let problems = Self.problems(yaml)
        #expect(problems.count == 1, "\(problems)")
        #expect(problems.first?.field == "beacons[0].position[1]")
        #expect(problems.first?.line == 4)
        #expect(problems.first?.message.contains("south") == true)
    }

    @Test func positionCoordinateOutOfRange() {
        let yaml = Self.valid.replacingOccurrences(of: "[1.5, -2]", with: "[20000, -2]")
        let problems = Self.problems(yaml)
        #expect(problems.count == 1, "\(problems)")
        #expect(problems.first?.field == "beacons[0].position[0]")
        #expect(problems.first?.line == 4)
    }

    @Test func badStopPosition() {
        let yaml = Self.valid.replacingOccurrences(of: "at: [1, 1]", with: "at: [1]")
        let problems = Self.problems(yaml)
        #expect(problems.count == 1, "\(problems)")
        #expect(problems.first?.field == "listener.stops[0].at")
        #expect(problems.first?.line == 8)
    }

    @Test func missingListenerStart() {
        let yaml = Self.valid.replacingOccurrences(of: "  start: [0, 0]\n", with: "")
        let problems = Self.problems(yaml)
        #expect(problems.count == 1, "\(problems)")
        #expect(problems.first?.field == "listener.start")
        #expect(problems.first?.line == Self.line(of: "stops:", in: yaml), "the listener mapping starts at stops:")
    }

    @Test func missingStops() {
        let yaml = """
            beacons:
              - beacon: { uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major: 1, minor: 2 }
                position: [0, 0]
            listener:
              start: [0, 0]
            """
        let problems = Self.problems(yaml)
        #expect(problems.count == 1, "\(problems)")
        #expect(problems.first?.field == "listener.stops")
        #expect(problems.first?.line == 5)
    }

    /// A list of stops where one is broken: only that stop is reported.
    @Test func oneBadStopAmongGoodOnes() {
        let yaml = Self.valid.replacingOccurrences(
            of: "    - { at: [1, 1], pause: 5s }", with: "    - { at: [1, 1], pause: 5s }\n    - { at: [2], pause: 5s }")
        let problems = Self.problems(yaml)
        #expect(problems.map(\.field) == ["listener.stops[1].at"])
        #expect(problems.first?.line == 9)
    }

    /// An empty list of beacons is refused, and refused with a reason: a
    /// `ConfigurationError` with no problem in it would print nothing at all.
    @Test func emptyBeaconList() {
        let yaml = """
            beacons: []
            listener:
              start: [0, 0]
              stops:
                - { at: [1, 1], pause: 5s }
            """
        do {
            let scenario = try ConfigurationLoader.parseScenario(yaml, file: "room.yaml", name: "room")
            Issue.record("a scenario without beacons loaded: \(scenario)")
        } catch {
            #expect(error.problems.count == 1, "\(error.problems)")
            #expect(error.problems.first?.field == "beacons")
            #expect(error.problems.first?.line == 1)
            #expect(!error.description.isEmpty)
        }
    }

    @Test func aSimulatedBeaconNeedsMajorAndMinor() {
        let yaml = Self.valid.replacingOccurrences(of: ", major: 1, minor: 2", with: ", major: 1")
        let problems = Self.problems(yaml)
        #expect(problems.count == 1, "\(problems)")
        #expect(problems.first?.field == "beacons[0].beacon")
        #expect(problems.first?.line == 3)
    }

    @Test func unknownRadioKey() {
        let yaml = Self.valid.replacingOccurrences(of: "seed: 3", with: "seed: 3\nradio:\n  shadowing: 4")
        let problems = Self.problems(yaml)
        #expect(problems.count == 1, "\(problems)")
        #expect(problems.first?.field == "radio.shadowing")
        #expect(problems.first?.line == 3)
        #expect(problems.first?.message.contains("unknown key") == true)
    }

    @Test func badAdvertisingInterval() {
        let yaml = Self.valid.replacingOccurrences(
            of: "    position: [1.5, -2]", with: "    position: [1.5, -2]\n    advertising_interval: 0s")
        let problems = Self.problems(yaml)
        #expect(problems.count == 1, "\(problems)")
        #expect(problems.first?.field == "beacons[0].advertising_interval")
        #expect(problems.first?.line == 5)
    }

    @Test func everyProblemAtOnce() {
        let yaml = """
            seed: -1
            beacons:
              - beacon: { uuid: not-a-uuid, major: 1, minor: 2 }
                position: [0, 0]
              - beacon: { uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major: 1, minor: 3 }
                position: [0]
            listener:
              start: [0, 0]
              speed: 50
              stops:
                - { at: [1, 1], pause: soon }
            """
        let problems = Self.problems(yaml)
        let found = Set(problems.map { "\($0.field)@\($0.line ?? 0)" })
        #expect(
            found == [
                "seed@1", "beacons[0].beacon.uuid@3", "beacons[1].position@6", "listener.speed@9",
                "listener.stops[0].pause@11",
            ], "\(problems)")
    }

    @Test func yamlSyntaxErrorHasALine() {
        let yaml = "seed: 1\nlistener: \"open\n"
        let problems = Self.problems(yaml)
        #expect(problems.count == 1, "\(problems)")
        #expect(problems.first?.line != nil)
        #expect(problems.first?.message.contains("YAML") == true)
    }

    @Test func emptyScenarioFile() {
        let problems = Self.problems("")
        #expect(problems.count == 1)
        #expect(problems.first?.line == nil)
        #expect(problems.first?.message.contains("empty") == true)
    }

    @Test func missingScenarioFile() {
        let path = Self.packageRoot.appendingPathComponent("scenarios/no-such-room.yaml").path
        do {
            _ = try ConfigurationLoader.loadScenario(contentsOf: path)
            Issue.record("a missing file loaded")
        } catch {
            #expect(error.problems.count == 1)
            #expect(error.problems.first?.file == path)
            #expect(error.problems.first?.message.contains("no such file") == true)
        }
    }

    // MARK: Where `simulate[:SCENARIO]` looks

    @Test func scenarioPathBesideTheConfiguration() {
        #expect(
            ConfigurationLoader.scenarioPath(nil, besideConfiguration: "/etc/beacond/beacons.yaml")
                == "/etc/beacond/scenarios/cafe.yaml")
        #expect(
            ConfigurationLoader.scenarioPath("rush", besideConfiguration: "/etc/beacond/beacons.yaml")
                == "/etc/beacond/scenarios/rush.yaml")
        #expect(ConfigurationLoader.scenarioPath("rooms/a.yaml", besideConfiguration: "/x/beacons.yaml") == "rooms/a.yaml")
        #expect(ConfigurationLoader.scenarioPath("a.yaml", besideConfiguration: "/x/beacons.yaml") == "a.yaml")
    }
}
