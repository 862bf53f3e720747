import BeaconCore
import BeaconSimulation
import Foundation
import Yams

/// Reads `beacons.yaml` (SPEC section 7) and simulation scenarios.
///
/// The whole file is checked before anything is returned: every problem is
/// reported at once, each with file, line and field, and a file with any
/// problem is refused whole, so beacond never runs half-configured.
public enum ConfigurationLoader {
    public static func load(contentsOf path: String) throws(ConfigurationError) -> Configuration {
        try parse(try read(path), file: path)
    }

    public static func parse(_ yaml: String, file: String) throws(ConfigurationError) -> Configuration {
        try decode(yaml, file: file, what: "regions and venues") { reader, root in reader.configuration(root) }
    }

    /// A scenario file (`scenarios/cafe.yaml`); its name is the file's base name.
    public static func loadScenario(contentsOf path: String) throws(ConfigurationError) -> Scenario {
        let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        return try parseScenario(try read(path), file: path, name: name)
    }

    public static func parseScenario(_ yaml: String, file: String, name: String) throws(ConfigurationError) -> Scenario {
        try decode(yaml, file: file, what: "beacons and a listener") { reader, root in reader.scenario(root, name: name) }
    }

    /// Where `simulate[:SCENARIO]` finds its scenario: a path as given, or a
    /// name looked up in `scenarios/` beside the configuration file.
    public static func scenarioPath(_ scenario: String?, besideConfiguration configuration: String) -> String {
        let name = scenario ?? "cafe"
        if name.contains("/") || name.hasSuffix(".yaml") { return name }
        return URL(fileURLWithPath: configuration).deletingLastPathComponent()
            .appendingPathComponent("scenarios/\(name).yaml").path
    }

    private static func decode<T>(
        _ yaml: String, file: String, what: String, _ read: (inout NodeReader, Node) -> T?
    ) throws(ConfigurationError) -> T {
        var reader = NodeReader(file: file)
        let root: Node?
        do {
            root = try Yams.compose(yaml: yaml)
        } catch {
            throw ConfigurationError(problems: [reader.syntaxProblem(error)])
        }
        // `---` alone, or `~`, is a document with nothing in it.
        let empty = root.map { node in node.scalar.map { ["", "~", "null", "Null", "NULL"].contains($0.string) } ?? false } ?? true
        guard let root, !empty else {
            throw ConfigurationError(problems: [
                ConfigurationProblem(file: file, line: nil, field: "", message: "the file is empty; expected \(what)")
            ])
        }
        let value = read(&reader, root)
        guard reader.problems.isEmpty, let value else { throw ConfigurationError(problems: reader.problems) }
        return value
    }

    private static func read(_ path: String) throws(ConfigurationError) -> String {
        do {
            return try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError(problems: [
                ConfigurationProblem(file: path, line: nil, field: "", message: "cannot read: \(readProblem(path))")
            ])
        }
    }

    private static func readProblem(_ path: String) -> String {
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) { return "no such file" }
        if isDirectory.boolValue { return "it is a directory" }
        if !FileManager.default.isReadableFile(atPath: path) { return "permission denied" }
        return "not valid UTF-8 text"
    }
}
