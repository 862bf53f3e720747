import BeaconCore
import Foundation
import Yams

/// Reads `beacons.yaml` (SPEC section 7) into a `Configuration`.
///
/// The whole file is checked before anything is returned: every problem is
/// reported at once, each with file, line and field, and a file with any
/// problem is refused whole, so beacond never runs half-configured.
public enum ConfigurationLoader {
    public static func load(contentsOf path: String) throws(ConfigurationError) -> Configuration {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError(problems: [
                ConfigurationProblem(file: path, line: nil, field: "", message: "cannot read: \(readProblem(path))")
            ])
        }
        return try parse(text, file: path)
    }

    public static func parse(_ yaml: String, file: String) throws(ConfigurationError) -> Configuration {
        var reader = NodeReader(file: file)
        let root: Node?
        do {
            root = try Yams.compose(yaml: yaml)
        } catch {
            throw ConfigurationError(problems: [reader.syntaxProblem(error)])
        }
        guard let root else {
            throw ConfigurationError(problems: [
                ConfigurationProblem(file: file, line: nil, field: "", message: "the file is empty; expected regions and venues")
            ])
        }
        let configuration = reader.configuration(root)
        guard reader.problems.isEmpty, let configuration else {
            throw ConfigurationError(problems: reader.problems)
        }
        return configuration
    }

    private static func readProblem(_ path: String) -> String {
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) { return "no such file" }
        if isDirectory.boolValue { return "it is a directory" }
        if !FileManager.default.isReadableFile(atPath: path) { return "permission denied" }
        return "not valid UTF-8 text"
    }
}
