/// One thing wrong with a configuration file: where, which field, and what was expected.
public struct ConfigurationProblem: Error, Hashable, Sendable, CustomStringConvertible {
    public var file: String
    /// 1-based; `nil` when the problem is about the file as a whole.
    public var line: Int?
    /// A path to the field, as `venues[2].beacon.major`.
    public var field: String
    public var message: String

    public init(file: String, line: Int?, field: String, message: String) {
        self.file = file
        self.line = line
        self.field = field
        self.message = message
    }

    /// `beacons.yaml:14: venues[1].beacon.major: expected an integer 0...65535, got 70000`
    public var description: String {
        let location = line.map { "\(file):\($0)" } ?? file
        return field.isEmpty ? "\(location): \(message)" : "\(location): \(field): \(message)"
    }
}

/// A configuration refused as a whole, with every problem found in it.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public var problems: [ConfigurationProblem]
    /// Problems found past the first `mostProblems`, counted and not kept: a
    /// file of half a million unknown keys must not become a message of tens
    /// of megabytes in the journal.
    public var unlisted: Int
    public static let mostProblems = 100

    /// The problems in the order of their lines, as a person reads the file
    /// (those about the file as a whole first), whatever order they were found in.
    public init(problems: [ConfigurationProblem], unlisted: Int = 0) {
        self.problems = problems.enumerated().sorted { ($0.element.line ?? 0, $0.offset) < ($1.element.line ?? 0, $1.offset) }.map(\.element)
        self.unlisted = unlisted
    }

    public var description: String {
        (problems.map(\.description) + (unlisted > 0 ? ["… and \(unlisted) more problem(s)"] : [])).joined(separator: "\n")
    }
}
