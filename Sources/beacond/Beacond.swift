import ArgumentParser
import BeaconCore

/// `beacond`: the service, and its diagnostic subcommands.
@main
struct Beacond: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacond",
        abstract: "iBeacon scanning, region monitoring and ranging service.",
        version: BeacondVersion.string,
        subcommands: [RunCommand.self, ScanCommand.self, CheckConfigCommand.self, EvaluateCommand.self],
        defaultSubcommand: RunCommand.self
    )
}

enum BeacondVersion {
    static let string = "0.1.0"
}

extension SourceSpec: ExpressibleByArgument {
    public init?(argument: String) {
        guard let spec = try? SourceSpec(parsing: argument) else { return nil }
        self = spec
    }
}
