import ArgumentParser
import BeaconConfiguration
import BeaconCore
import BeaconService
import BeaconSources
import BeacondAPI
import DBus
#if canImport(FoundationEssentials)
import FoundationEssentials
import Glibc
#else
import Foundation
#endif
import Logging
import ServiceLifecycle

/// `beacond [--config …] [--source …]`: the service itself.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the service (the default when no subcommand is given).",
        discussion: """
            Logs one line per event (region entered or exited, nearest venue changed, scanning stopped or \
            resumed) to stderr. Stops cleanly on SIGTERM or SIGINT; re-reads the configuration on SIGHUP.
            """
    )

    @Option(help: "The configuration file.", completion: .file(extensions: ["yaml", "yml"]))
    var config = "beacons.yaml"

    @Option(help: "auto | hci[:hciN] | bluez[:hciN] | replay:FILE[@SPEED|@max] | simulate[:SCENARIO] (default: the file's, else auto)", completion: .list(["auto", "hci", "bluez", "replay:", "simulate"]), transform: SourceSpec.argument)
    var source: SourceSpec?

    @Option(help: "Where region states and the preferred venue are kept (default: $STATE_DIRECTORY, else /var/lib/beacond).", completion: .directory)
    var stateDir: String?

    @Option(help: "system | session | none | a bus address (unix:path=…): where to offer org.beacond.", completion: .list(["system", "session", "none"]))
    var bus = "system"

    @Option(help: "trace | debug | info | notice | warning | error | critical")
    var logLevel: Logger.Level = .info

    func run() async throws {
        // Reloads are read from SIGHUP once the service runs; until then one
        // (`systemctl kill -s HUP` as beacond starts) must not end it, which
        // is SIGHUP's default. Set before SIGPIPE's, which a test watches for.
        signal(SIGHUP, SIG_IGN)
        let level = logLevel
        let journal = JournalLogHandler.stderrIsTheJournal
        LoggingSystem.bootstrap { label in
            if journal {
                var handler = JournalLogHandler()
                handler.logLevel = level
                return handler
            }
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "beacond")
        // A write to a socket whose peer went (a broker's, a client's) is an
        // error to handle, never the end of the service; systemd ignores
        // SIGPIPE for its units too, but beacond may run without it.
        signal(SIGPIPE, SIG_IGN)
        let loaded: Configuration
        do {
            loaded = try ConfigurationLoader.load(contentsOf: config)
        } catch {
            logger.critical("not starting: \(config) is invalid:\n\(error)")
            throw ExitCode(78)  // EX_CONFIG, which systemd shows as "configuration error"
        }
        let directory = stateDir ?? ProcessInfo.processInfo.environment["STATE_DIRECTORY"] ?? "/var/lib/beacond"
        let service = BeaconService(
            settings: BeaconService.Settings(
                configurationPath: config, source: source, stateDirectory: directory,
                bus: bus == "none" ? nil : DBusConnection.Bus(argument: bus), version: BeacondAPI.Beacond.version),
            configuration: loaded, logger: logger)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: service)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch let error as SourceError {
            // The service has logged why. EX_UNAVAILABLE: systemd tries again
            // (Restart=on-failure); EX_CONFIG: it does not (RestartPreventExitStatus=78),
            // since only an edit can mend a missing or broken file.
            throw ExitCode(error.mayPass ? 69 : 78)
        } catch is DBusError {
            // The service has logged why it could not take its bus name, or
            // that it lost the bus (said once: not again as ArgumentParser's
            // "Error:"). A bus not yet up at boot, a name still held or a
            // dbus-daemon restarted may pass: systemd tries again.
            throw ExitCode(69)
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
