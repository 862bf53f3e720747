import ArgumentParser
import BeaconCore
import BeacondAPI

/// `beacond`: the service, and its diagnostic subcommands.
@main
struct Beacond: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacond",
        abstract: "iBeacon scanning, region monitoring and ranging service.",
        discussion: """
            Without a subcommand beacond runs the service (`run`): --config, --source, --bus, --state-dir and \
            --log-level are its options, listed by `beacond run --help`. To try it with no radio and no system bus: \
            dbus-run-session -- beacond --bus session --source simulate --state-dir /tmp/beacond.
            """,
        version: BeacondAPI.Beacond.version,
        subcommands: [RunCommand.self, ScanCommand.self, CheckConfigCommand.self, EvaluateCommand.self],
        defaultSubcommand: RunCommand.self
    )
}

extension SourceSpec {
    /// For `@Option(transform:)`, so the reason a source is refused reaches
    /// the user (an `ExpressibleByArgument` that returns nil hides it).
    static func argument(_ text: String) throws -> SourceSpec {
        do {
            return try SourceSpec(parsing: text)
        } catch {
            throw ValidationError(error.description)
        }
    }
}
