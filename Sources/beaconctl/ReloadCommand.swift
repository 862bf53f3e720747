import ArgumentParser

/// `beaconctl reload`: beacond re-reads beacons.yaml and answers whether it
/// took it. The unit's ExecReload, so `systemctl reload beacond` fails on an
/// invalid file (its problems in the journal, from this command's stderr)
/// rather than signalling and hoping, and needs no /bin/kill, which a
/// minimal Debian does not have.
struct ReloadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reload", abstract: "Make beacond re-read beacons.yaml; an invalid file changes nothing and is refused.",
        discussion: "Exits non-zero with the file's problems (file:line) when beacond refuses it, as `beacond check-config` lists them.")

    @OptionGroup var options: BusOptions

    func run() async throws {
        try await options.client().reload()
        options.answer(json: ["reloaded": true], text: "beacond reloaded beacons.yaml")
    }
}
