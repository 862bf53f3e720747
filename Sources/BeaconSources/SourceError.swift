import BeaconCore

/// Why a source could not start or had to stop, worded so a person knows what to do.
public enum SourceError: Error, Sendable, CustomStringConvertible {
    case cannotRead(path: String, reason: String)
    case unreadableRecording(path: String, RecordingError)
    /// A scenario file that does not load, with its problems.
    case invalidScenario(path: String, problems: String)
    /// The radio cannot be used: the message says why and what to try.
    case unavailable(String)

    /// Whether the cause may pass without anyone changing a file: an adapter
    /// that appears, bluetoothd starting, a permission granted. Trying again
    /// (systemd's restart) helps with those; with a missing or broken file it
    /// would only loop.
    public var mayPass: Bool {
        if case .unavailable = self { true } else { false }
    }

    public var description: String {
        switch self {
        case let .cannotRead(path, reason):
            "cannot read \(path): \(reason)"
        case let .unreadableRecording(path, error):
            "\(path): \(error)"
        case let .invalidScenario(path, problems):
            "cannot load scenario \(path):\n\(problems)\n(simulate looks for scenarios/NAME.yaml beside the configuration file, "
                + "scenarios/cafe.yaml without a NAME; name another with --source simulate:NAME, or simulate:PATH.yaml)"
        case let .unavailable(message):
            message
        }
    }
}
