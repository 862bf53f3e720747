import BeaconCore
import BeaconFiles
import BeaconSimulation

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads `beacons.yaml` (SPEC section 7) and simulation scenarios.
///
/// The whole file is checked before anything is returned: every problem is
/// reported at once, each with file, line and field, and a file with any
/// problem is refused whole, so beacond never runs half-configured.
public enum ConfigurationLoader {
    /// Where the Debian package puts the file (the unit's `--config`): named
    /// when a relative `--config` (the default, `beacons.yaml`) is not there.
    public static let installedPath = "/etc/beacond/beacons.yaml"

    public static func load(contentsOf path: String) throws(ConfigurationError) -> Configuration {
        try parse(
            try bytes(of: path) { path.hasPrefix("/") ? nil :  " in the working directory; an installed beacond reads \(installedPath) (beacond --config \(installedPath); beacond check-config \(installedPath))" },
            file: path)
    }

    public static func parse(_ yaml: String, file: String) throws(ConfigurationError) -> Configuration {
        try parse(Array(yaml.utf8), file: file)
    }

    static func parse(_ yaml: [UInt8], file: String) throws(ConfigurationError) -> Configuration {
        try decode(yaml, file: file, what: "regions and venues") { reader, root in reader.configuration(root) }
    }

    /// A scenario file (`scenarios/cafe.yaml`); its name is the file's base name.
    /// A missing one says which scenarios its directory has.
    public static func loadScenario(contentsOf path: String) throws(ConfigurationError) -> Scenario {
        let file = URL(fileURLWithPath: path)
        let bytes = try bytes(of: path) {
            let there = (try? FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path)) ?? []
            let names = there.filter { $0.hasSuffix(".yaml") }.map { String($0.dropLast(5)) }.sorted()
            return names.isEmpty ? nil : "; the scenarios there: \(names.listed(atMost: 10))"
        }
        return try parseScenario(bytes, file: path, name: file.deletingPathExtension().lastPathComponent)
    }

    public static func parseScenario(_ yaml: String, file: String, name: String) throws(ConfigurationError) -> Scenario {
        try parseScenario(Array(yaml.utf8), file: file, name: name)
    }

    static func parseScenario(_ yaml: [UInt8], file: String, name: String) throws(ConfigurationError) -> Scenario {
        try decode(yaml, file: file, what: "beacons and a listener") { reader, root in reader.scenario(root, name: name) }
    }

    /// Where `simulate[:SCENARIO]` finds its scenario: a path as given, or a
    /// name looked up in `scenarios/` beside the configuration file.
    public static func scenarioPath(_ scenario: String?, besideConfiguration configuration: String) -> String {
        let name = scenario ?? "cafe"
        if isScenarioPath(name) { return name }
        return URL(fileURLWithPath: configuration).deletingLastPathComponent()
            .appendingPathComponent("scenarios/\(name).yaml").path
    }

    /// A path to a scenario file, not a name in `scenarios/`.
    static func isScenarioPath(_ scenario: String) -> Bool {
        scenario.contains("/") || scenario.hasSuffix(".yaml")
    }

    /// Larger than any configuration or scenario people write (1,000 beacons
    /// take about 200 KB); a larger file is refused, read no further than that.
    static let largestFile = 8 << 20

    private static func decode<T>(
        _ yaml: [UInt8], file: String, what: String, _ read: (inout NodeReader, YAMLNode) -> T?
    ) throws(ConfigurationError) -> T {
        let root: YAMLNode?
        do {
            root = try YAMLComposer.compose(yaml)
        } catch {
            throw ConfigurationError(problems: [ConfigurationProblem(file: file, line: error.line, field: "", message: error.message)])
        }
        // `---` alone, or `~`, is a document with nothing in it.
        let empty = root.map { node in node.scalar.map { ["", "~", "null", "Null", "NULL"].contains($0) } ?? false } ?? true
        guard let root, !empty else {
            throw ConfigurationError(problems: [
                ConfigurationProblem(file: file, line: nil, field: "", message: "the file is empty; expected \(what)")
            ])
        }
        var reader = NodeReader(file: file)
        let value = read(&reader, root)
        guard reader.problems.isEmpty, let value else { throw ConfigurationError(problems: reader.problems, unlisted: reader.unlisted) }
        return value
    }

    /// The file's bytes, which libyaml checks are UTF-8; or why they cannot be
    /// read, with what `ifMissing` says (worked out only then) when the file is not there.
    private static func bytes(of path: String, ifMissing hint: () -> String? = { nil }) throws(ConfigurationError) -> [UInt8] {
        do {
            return try RegularFile.read(path, limit: largestFile)
        } catch {
            var message = "cannot read: \(error)"
            if case .noSuchFile = error, let hint = hint() { message += hint }
            throw ConfigurationError(problems: [ConfigurationProblem(file: path, line: nil, field: "", message: message)])
        }
    }
}
