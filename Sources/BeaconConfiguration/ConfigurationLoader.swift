import BeaconCore
import BeaconSimulation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

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
    public static func load(contentsOf path: String) throws(ConfigurationError) -> Configuration {
        try parse(try bytes(of: path), file: path)
    }

    public static func parse(_ yaml: String, file: String) throws(ConfigurationError) -> Configuration {
        try parse(Array(yaml.utf8), file: file)
    }

    static func parse(_ yaml: [UInt8], file: String) throws(ConfigurationError) -> Configuration {
        try decode(yaml, file: file, what: "regions and venues") { reader, root in reader.configuration(root) }
    }

    /// A scenario file (`scenarios/cafe.yaml`); its name is the file's base name.
    public static func loadScenario(contentsOf path: String) throws(ConfigurationError) -> Scenario {
        let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        return try parseScenario(try bytes(of: path), file: path, name: name)
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
        if name.contains("/") || name.hasSuffix(".yaml") { return name }
        return URL(fileURLWithPath: configuration).deletingLastPathComponent()
            .appendingPathComponent("scenarios/\(name).yaml").path
    }

    /// Larger than any configuration or scenario people write (1,000 beacons
    /// take about 200 KB); refused before it is read.
    static let maximumFileSize = 8 << 20

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
        guard reader.problems.isEmpty, let value else { throw ConfigurationError(problems: reader.problems) }
        return value
    }

    /// The file's bytes, which libyaml checks are UTF-8; or why they cannot be read.
    ///
    /// Read with POSIX calls, at most one byte past the limit: the limit then
    /// holds however the file's size is reported (FileManager's size attribute
    /// is not an `Int` under FoundationEssentials, and the check built on it
    /// let a 20 MB file through) and if the file grows while it is read.
    private static func bytes(of path: String) throws(ConfigurationError) -> [UInt8] {
        func failure(_ problem: String) -> ConfigurationError {
            ConfigurationError(problems: [ConfigurationProblem(file: path, line: nil, field: "", message: "cannot read: \(problem)")])
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            throw failure(errno == ENOENT ? "no such file" : errno == EACCES ? "permission denied" : String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw failure(String(cString: strerror(errno))) }
        guard status.st_mode & S_IFMT != S_IFDIR else { throw failure("it is a directory") }
        guard status.st_mode & S_IFMT == S_IFREG else { throw failure("not a regular file") }
        // Room for the size fstat reports, and more only if the file turns out longer.
        var bytes = [UInt8](repeating: 0, count: min(max(Int(status.st_size), 0), maximumFileSize) + 1)
        var count = 0
        while count <= maximumFileSize {
            if count == bytes.count { bytes += repeatElement(0, count: min(bytes.count, maximumFileSize + 1 - count)) }
            let got = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if got == 0 { break }
            if got < 0 {
                if errno == EINTR { continue }
                throw failure("read error: \(String(cString: strerror(errno)))")
            }
            count += got
        }
        guard count <= maximumFileSize else {
            throw failure("more than \(maximumFileSize >> 20) MiB; a configuration or scenario is at most that")
        }
        return Array(bytes[..<count])
    }
}
